"""One streaming pass over a log: a cheap pre-filter, then the full rules near its hits.

:class:`LogScanner` takes the log as bytes in chunks of any size. For each chunk
it finds, with one multi-pattern matcher (Hyperscan where its wheels exist, else
the Aho-Corasick automaton of ``ahocorasick_rs``), every line that contains a keyword: a rule's
keywords, a fact's or phase marker's, or a generic error marker (``Traceback``,
``Error``, ``ERROR``, ``fatal``…). Only those lines, the traceback lines just
above them, and the lines that continue their message are decoded and parsed
(prefixes, processes, tracebacks) and matched against the rules; every other
line is only counted. A line without a keyword can match no rule, fact or phase
marker; it matters only as part of a traceback or message around a hit, and those
are followed. The tests check that the result equals parsing every line
(``prefilter=False``).

Memory stays bounded whatever the log's size: one chunk, the previous chunk's
trailing traceback lines (at most :data:`LOOKBACK_LINES`) for look-back, the open
events of the assembler (capped), and the bounded summaries of the collector.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

import ahocorasick_rs

from servewise.diagnose.classify import Classifier, Match
from servewise.diagnose.result import Diagnosis
from servewise.diagnose.ruleset import RuleSet
from servewise.diagnose.select import Collector
from servewise.errors import LogInputError
from servewise.formats.logevents import Event, EventAssembler, looks_like_exception
from servewise.formats.logline import LogLine, parse_line
from servewise.formats.logorder import in_log_order
from servewise.formats.logwrap import unwrapped

__all__ = ["GENERIC_KEYWORDS", "LogScanner", "Prefilter", "prefilter_keywords"]

GENERIC_KEYWORDS = (
    "Traceback (most recent call last)", "Error", "Exception", "ERROR", "CRITICAL", "FATAL",
    "Fatal", "fatal", "[E]", "[E", "Assertion", "terminate called", "what():", "Killed",
    "Segmentation fault", "core dumped", "Aborted", "failed", "Failed", "error:", "panic:",
    "panicked at", "current device: ",
)
"""Markers of any error, so that errors no rule knows are still found (as ``unclassified``); and
``current device:``, the second line of ggml's CUDA errors, which names the function and the
file (the library) that hit them."""

HEAD_LINES = 200
"""The log's first lines are all parsed, keyword or not: their formats tell which engine
wrote the log (a pasted excerpt may have no start line), and a few hundred lines cost nothing."""
ORDER_PROBE = 2**20
"""A log up to this size is checked for newest-first order when it ends (a paste from a log
console); a longer one is read as it comes."""
LOOKBACK_LINES = 200
"""At most this many traceback lines above a hit are parsed with it (and kept from the end
of the previous chunk, for a hit at the start of the next)."""
AFTER_LINES = 0
"""Lines parsed after a hit (an open traceback or exception message keeps the parser going)."""
BUSY_LINES = 400
"""Lines parsed after a hit while a traceback is still open."""
_BINARY_PROBE = 8192
MAX_RAW_LINE = 32768
"""A physical line longer than this is parsed from its first and last 16 KiB (a blob in the
middle of an exception message says nothing; the message's ends do), and a line that has not
ended yet is held at that size, so one endless line cannot fill memory."""
_RAW_HALF = MAX_RAW_LINE // 2
_RAW_CUT = " … ".encode()
#: Bytes of lines :meth:`LogScanner.feed_lines` gathers before one scan.
_LINES_BATCH = 2**20
#: A line is traceback-like when it contains one of these or starts with whitespace.
_TRACEBACK_LIKE = re.compile(
    rb'File "|File &quot;|\s{4}|\^\^\^|~~~|Traceback \(most|\.\.\.<\d+ lines>')
#: uvicorn's own records (``INFO:     127.0.0.1:35602 - "GET /health …``): their padding is not a
#: traceback's indent.
_UVICORN_RECORD = re.compile(rb"(?:INFO|DEBUG|TRACE|WARNING):\s")
_INDENT = (b" ", b"\t")
_INDENT_PROBE = 65536
#: A paste is taken as indented as a whole only when at least this many of its first lines are.
_INDENT_LINES = 3


class Prefilter:
    """Offsets in a chunk where a keyword occurs: Hyperscan when installed, else Aho-Corasick.

    Hyperscan (Intel's SIMD multi-pattern matcher; Linux x86-64 wheels) scans a 1 GB log in
    well under a second; ``ahocorasick_rs`` (every platform) is about four times slower.
    Both report every occurrence, so the lines found are the same.
    """

    def __init__(self, keywords: Iterable[str], matcher: str | None = None) -> None:
        words = [word.encode() for word in keywords]
        self.matcher = matcher or ("hyperscan" if _hyperscan() is not None else "aho-corasick")
        if self.matcher == "hyperscan":
            hyperscan = _hyperscan()
            assert hyperscan is not None
            self._database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
            self._database.compile(
                expressions=[re.escape(word) for word in words], ids=list(range(len(words))),
                elements=len(words), flags=[0] * len(words))
        else:
            self._automaton = ahocorasick_rs.BytesAhoCorasick(
                words, implementation=ahocorasick_rs.Implementation.DFA)

    def offsets(self, data: bytes, lo: int, hi: int) -> list[int]:
        """Offsets (in ``data``) inside keyword occurrences within ``data[lo:hi]``, ascending."""
        view = memoryview(data)[lo:hi]
        if self.matcher == "hyperscan":
            ends: list[int] = []
            self._database.scan(view, match_event_handler=lambda _i, _s, end, _f, _c:
                                ends.append(lo + end - 1))
            ends.sort()
            return ends
        return [lo + begin for _, begin, _ in self._automaton.find_matches_as_indexes(view)]


def _hyperscan() -> Any:
    try:
        import hyperscan
    except ImportError:
        return None
    return hyperscan


def prefilter_keywords(rules: RuleSet) -> tuple[str, ...]:
    """Every literal the pre-filter looks for, in a stable order without repeats."""
    words: dict[str, None] = {}
    for rule in rules.rules:
        for keyword in rule.keywords:
            words[keyword] = None
    for signal in rules.signals.values():
        for keyword in signal.keywords:
            words[keyword] = None
    for fact in rules.tables.facts:
        for keyword in fact.keywords:
            words[keyword] = None
    for phase in rules.tables.phases:
        for marker in phase.markers:
            words[marker] = None
    for keyword in GENERIC_KEYWORDS:
        words[keyword] = None
    return tuple(words)


class LogScanner:
    """Feed a log's bytes with :meth:`feed`; :meth:`finish` returns the :class:`Diagnosis`.

    ``gpu_total_gib`` and ``gpu_name`` (from ``--gpu``) stand in for what the log does
    not say. With ``prefilter=False`` every line is parsed (slow; for tests). ``on_match``
    sees every classified event.
    """

    def __init__(self, rules: RuleSet, *, gpu_total_gib: float | None = None,
                 gpu_name: str | None = None, prefilter: bool = True,
                 matcher: str | None = None,
                 on_match: Callable[[Match], None] | None = None) -> None:
        self.rules = rules
        self.on_match = on_match
        """Called with every classified event (tests and tools that want the details)."""
        self.gpu_total_gib = gpu_total_gib
        self.gpu_name = gpu_name
        self.prefilter = prefilter
        self._prefilter = Prefilter(prefilter_keywords(rules), matcher=matcher)
        self._assembler = EventAssembler()
        self._classifier = Classifier(rules)
        self._collector = Collector(rules)
        self._pending = b""
        self._head: list[bytes] = []
        self._indent = b""
        self._reread = False
        self._ring = b""
        self._parsed_line = 0
        self._budget = 0
        self._busy = 0
        self._bytes = 0
        self._lines = 0
        self.failure_seen = False
        """Whether a failure (cause, error or wrapper) has been seen so far."""
        self.parsed_lines = 0
        """Physical lines decoded and parsed (the rest were only counted)."""
        # Where parsed lines and assembled events go: the classifier here; a relay to another
        # process when the reading runs there (:mod:`servewise.diagnose.pipeline`).
        self._take_line: Callable[[LogLine], None] = self._classifier.line
        self._take_event: Callable[[Event], None] = self._event

    # -- input -------------------------------------------------------------------

    def feed(self, chunk: bytes) -> None:
        """Take the next bytes of the log (any size; lines may straddle chunks)."""
        if not chunk:
            return
        if self._bytes < _BINARY_PROBE and b"\x00" in chunk[: _BINARY_PROBE - self._bytes]:
            raise LogInputError(
                "the input is not a text log: it has NUL bytes in its first 8 KiB",
                hint="pass the engine's log (stdout/stderr), e.g. `docker logs CONTAINER 2>&1`",
                expected="text", found="binary data",
            )
        if self._bytes == 0:
            self._indent = _paste_indent(chunk)
        if self._bytes < ORDER_PROBE:
            self._head.append(chunk[: ORDER_PROBE + 1 - self._bytes])
        self._bytes += len(chunk)
        if self._bytes > ORDER_PROBE and self._head:
            self._head = []  # too long to be a paste: read in the order it comes
        start = 0
        if self._pending:
            newline = chunk.find(b"\n")
            if newline < 0:
                self._pending = _clip_raw(self._pending + chunk)
                return
            head = self._pending + chunk[: newline + 1]
            self._pending = b""
            self._scan(head, 0, len(head))
            start = newline + 1
        cut = chunk.rfind(b"\n") + 1
        if cut > start:
            self._scan(chunk, start, cut)
        self._pending = _clip_raw(chunk[max(cut, start):])

    def feed_lines(self, lines: Iterable[str]) -> None:
        """Take lines of text (with or without their newlines), fed in pieces of ~1 MiB."""
        batch: list[bytes] = []
        size = 0
        for line in lines:
            data = (line if line.endswith("\n") else line + "\n").encode()
            batch.append(data)
            size += len(data)
            if size >= _LINES_BATCH:
                self.feed(b"".join(batch))
                batch, size = [], 0
        self.feed(b"".join(batch))

    def finish(self) -> Diagnosis:
        """The end of the log: the diagnosis of everything fed.

        A small log pasted newest first (from a log console) is read again in log order, and
        one a terminal hard-wrapped at its width is read again with its lines joined."""
        if self._head and not self._reread:
            text = b"".join(self._head).decode("utf-8", "replace")
            ordered = unwrapped(in_log_order(text))
            if ordered is not text:  # reversed or hard-wrapped: read it again as logged
                again = LogScanner(self.rules, gpu_total_gib=self.gpu_total_gib,
                                   gpu_name=self.gpu_name, prefilter=self.prefilter,
                                   on_match=self.on_match)
                again._reread = True
                again.feed(ordered.encode())
                return again.finish()
        self._drain()
        if self._bytes == 0:
            raise LogInputError("the log is empty", expected="an engine log", found="0 bytes",
                                hint="pass the file the engine wrote, or pipe its output into "
                                "`servewise diagnose -`")
        return self._result(ended=True)

    def _drain(self) -> None:
        """Parse the last line if it had no newline, and close the events still open."""
        if self._pending:
            last = self._pending + b"\n"
            self._pending = b""
            self._scan(last, 0, len(last))
        for event in self._assembler.finish():
            self._take_event(event)

    def close_open_event(self) -> None:
        """Classify an event still open (an exception whose last lines may yet come).

        For a log that went quiet: an engine whose worker died may print nothing more, so a
        caller that follows it closes the open event instead of waiting for :meth:`finish`.
        """
        if self._assembler.busy:
            for event in self._assembler.flush():
                self._event(event)

    def snapshot(self) -> Diagnosis:
        """The diagnosis of what was fed so far (open events are not yet included)."""
        return self._result(ended=False)

    def _result(self, *, ended: bool) -> Diagnosis:
        return self._collector.result(self._classifier, gpu_total_gib=self.gpu_total_gib,
                                      gpu_name=self.gpu_name, lines=self._lines, ended=ended)

    @property
    def lines(self) -> int:
        """Physical lines read so far."""
        return self._lines

    @property
    def size(self) -> int:
        """Bytes read so far."""
        return self._bytes

    def _adopt(self, *, lines: int, parsed: int, size: int, head: list[bytes]) -> None:
        """Take the counts (and a small log's bytes) of a scanner that did the reading
        elsewhere (the pipeline's)."""
        self._lines, self.parsed_lines, self._bytes = lines, parsed, size
        self._head = head

    # -- scanning ----------------------------------------------------------------

    def _hits(self, data: bytes, lo: int, hi: int) -> list[int]:
        """Start offsets of the lines in ``data[lo:hi]`` that contain a keyword."""
        if not self.prefilter:
            return _line_starts(data, lo, hi, -1)
        starts = []
        line_end = -1
        if self._lines < HEAD_LINES:
            starts = _line_starts(data, lo, hi, HEAD_LINES - self._lines)
            line_end = data.find(b"\n", starts[-1], hi)
            if line_end < 0:
                return starts
        rfind, find = data.rfind, data.find
        for offset in self._prefilter.offsets(data, lo, hi):
            if offset <= line_end:
                continue
            starts.append(max(rfind(b"\n", lo, offset) + 1, lo))
            line_end = find(b"\n", offset, hi)
        return starts

    def _lookback(self, data: bytes, hit: int, floor: int) -> int:
        """Where to start parsing for a hit: the traceback lines right above it, if any."""
        start = hit
        for _ in range(LOOKBACK_LINES):
            if start <= floor:
                return floor
            previous = max(data.rfind(b"\n", floor, start - 1) + 1, floor)
            if data[previous:previous + 1] not in _INDENT and (
                    _TRACEBACK_LIKE.search(data, previous, start - 1) is None
                    or _UVICORN_RECORD.match(data, previous, start - 1) is not None):
                return start
            start = previous
        return start

    def _scan(self, data: bytes, lo: int, hi: int) -> None:
        """Parse the interesting lines of ``data[lo:hi]`` (complete lines)."""
        pos = lo
        line = self._lines + 1  # the number of the line starting at ``pos``
        floor = lo
        hits = self._hits(data, lo, hi)
        hit_index = 0
        next_hit = hits[0] if hits else hi
        ring, self._ring = self._ring, b""
        while True:
            if self._budget <= 0:
                if next_hit >= hi:
                    break
                start = self._lookback(data, next_hit, floor)
                line += data.count(b"\n", pos, start)
                pos = start
                if start == lo and ring:
                    self._parse_ring(ring, line)
                    ring = b""
                elif line != self._parsed_line + 1:
                    for event in self._assembler.flush():
                        self._take_event(event)
                self._budget = AFTER_LINES
            if pos >= hi:
                break
            end = data.find(b"\n", pos, hi)
            if pos == next_hit:
                self._budget = AFTER_LINES + 1
                self._busy = 0
                hit_index += 1
                next_hit = hits[hit_index] if hit_index < len(hits) else hi
            self._parse(data[pos:end], line)
            self._parsed_line = line
            pos = end + 1
            line += 1
            floor = pos
            self._budget -= 1
            if self._budget <= 0 and self._busy < BUSY_LINES and (
                    self._assembler.busy or data[pos:pos + 1] in _INDENT):
                # An open traceback, or an indented line that continues the message above.
                self._busy += 1
                self._budget = 1
        self._lines = line - 1 + data.count(b"\n", pos, hi)
        self._keep_ring(data, floor, hi)

    def _parse_ring(self, ring: bytes, next_line: int) -> None:
        """Parse the previous chunk's trailing traceback lines before this chunk's first line."""
        lines = ring.split(b"\n")[:-1]
        first = next_line - len(lines)
        if first != self._parsed_line + 1:
            for event in self._assembler.flush():
                self._take_event(event)
        for offset, raw in enumerate(lines):
            self._parse(raw, first + offset)
        self._parsed_line = next_line - 1

    def _keep_ring(self, data: bytes, floor: int, hi: int) -> None:
        """Keep the chunk's last unparsed lines if they look like a traceback (look-back)."""
        self._ring = data[self._lookback(data, hi, floor):hi]

    def _parse(self, raw: bytes, number: int) -> None:
        self.parsed_lines += 1
        if self._indent and raw.startswith(self._indent):
            raw = raw[len(self._indent):]  # a paste indented as a whole (a markdown block)
        text = _clip_raw(raw).decode("utf-8", "replace")
        take_line, take_event = self._take_line, self._take_event
        for logline in parse_line(text, number):
            take_line(logline)
            for event in self._assembler.feed(logline):
                take_event(event)

    def _event(self, event: Event) -> None:
        match = self._classifier.classify(event)
        if self.on_match is not None:
            self.on_match(match)
        if self._collector.add(match):
            if match.kind in ("error", "cause") and self._classifier.request_error(match):
                return  # one failed request of a running server: not a failure to report
            self._classifier.mark_failure()
            self.failure_seen = True


def _paste_indent(chunk: bytes) -> bytes:
    """The indentation every line of a paste starts with (a markdown code block indented by
    four spaces, a log pasted inside a list item), read from its first lines; b"" for a log
    whose lines start at the margin, as an engine writes them."""
    lines = [line for line in chunk[:_INDENT_PROBE].split(b"\n")[:-1] if line.strip()]
    lines = lines[:HEAD_LINES]
    if len(lines) < _INDENT_LINES:
        return b""
    prefix = lines[0][: len(lines[0]) - len(lines[0].lstrip(b" \t"))]
    for line in lines[1:]:
        while prefix and not line.startswith(prefix):
            prefix = prefix[:-1]
        if len(prefix) < 2:
            return b""
    # A traceback's frames keep their own two spaces, unless its exception line (which a
    # traceback prints at the margin) shares their indentation: then all of it is the paste's.
    if any(line.startswith(b'File "', len(prefix)) for line in lines) and not any(
            looks_like_exception(line[len(prefix):].decode("utf-8", "replace"))
            for line in lines):
        prefix = prefix[:-2]
    return prefix if len(prefix) >= 2 else b""


def _line_starts(data: bytes, lo: int, hi: int, limit: int) -> list[int]:
    """Start offsets of the complete lines in ``data[lo:hi]``, at most ``limit`` (-1: all)."""
    starts = [lo]
    position = data.find(b"\n", lo, hi)
    while 0 <= position < hi - 1 and len(starts) != limit:
        starts.append(position + 1)
        position = data.find(b"\n", position + 1, hi)
    return starts


def _clip_raw(raw: bytes) -> bytes:
    """A physical line cut to its first and last :data:`MAX_RAW_LINE` / 2 bytes."""
    if len(raw) <= MAX_RAW_LINE:
        return raw
    return raw[:_RAW_HALF] + _RAW_CUT + raw[-_RAW_HALF:]
