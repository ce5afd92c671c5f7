"""One streaming pass over a log: a cheap pre-filter, then the full rules near its hits.

:class:`LogScanner` takes the log as bytes in chunks of any size. For each chunk
it finds, with one Aho-Corasick automaton (``ahocorasick_rs``, a Rust
library, several hundred MB/s), every line that contains a keyword: a rule's
keywords, a fact's or phase marker's, or a generic error marker (``Traceback``,
``Error``, ``ERROR``, ``fatal``…). Only those lines, the traceback lines just
above them, and the lines that continue their message are decoded and parsed
(prefixes, processes, tracebacks) and matched against the rules; every other
line is only counted. A keyword-free line cannot match any rule, so the result
is the same as parsing every line (``prefilter=False`` does that, for tests).

Memory stays bounded whatever the log's size: one chunk, a ring of at most
:data:`RING_LINES` unparsed lines for look-back across chunks, the open events
of the assembler (capped), and the bounded summaries of the collector.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

import ahocorasick_rs

from servewise.diagnose.classify import Classifier, Match
from servewise.diagnose.result import Diagnosis
from servewise.diagnose.select import Collector
from servewise.errors import LogInputError
from servewise.formats.logevents import Event, EventAssembler
from servewise.formats.logline import parse_line
from servewise.knowledge.diagnose_rules import RuleSet

__all__ = ["GENERIC_KEYWORDS", "LogScanner", "prefilter_keywords"]

GENERIC_KEYWORDS = (
    "Traceback (most recent call last)", "Error", "Exception", "ERROR", "CRITICAL", "FATAL",
    "Fatal", "fatal", "[E]", "[E", "Assertion", "terminate called", "what():", "Killed",
    "Segmentation fault", "core dumped", "Aborted", "failed", "Failed",
)
"""Markers of any error, so that errors no rule knows are still found (as ``unknown``)."""

RING_LINES = 200
"""Unparsed lines kept from the previous chunk, for look-back."""
LOOKBACK_LINES = 200
"""At most this many traceback lines above a hit are parsed with it."""
AFTER_LINES = 1
"""Lines parsed after a hit (an open exception message keeps the parser going, too)."""
BUSY_LINES = 400
"""Lines parsed after a hit while a traceback is still open."""
_BINARY_PROBE = 8192
_TRACEBACK_LIKE = re.compile(rb'File "|^\s|\s{4}|\^\^\^|~~~|Traceback \(most|\.\.\.<\d+ lines>')


def prefilter_keywords(rules: RuleSet) -> tuple[str, ...]:
    """Every literal the pre-filter looks for, in a stable order without repeats."""
    words: dict[str, None] = {}
    for rule in rules.rules:
        for keyword in rule.keywords:
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
                 on_match: Callable[[Match], None] | None = None) -> None:
        self.rules = rules
        self.on_match = on_match
        """Called with every classified event (tests and tools that want the details)."""
        self.gpu_total_gib = gpu_total_gib
        self.gpu_name = gpu_name
        self.prefilter = prefilter
        keywords = [word.encode() for word in prefilter_keywords(rules)]
        self._automaton = ahocorasick_rs.BytesAhoCorasick(
            keywords, implementation=ahocorasick_rs.Implementation.DFA)
        self._assembler = EventAssembler()
        self._classifier = Classifier(rules)
        self._collector = Collector(rules)
        self._pending = b""
        self._ring = b""
        self._ring_line = 1
        self._parsed_line = 0
        self._budget = 0
        self._busy = 0
        self._bytes = 0
        self._lines = 0
        self.failure_seen = False
        """Whether a failure (cause, error or wrapper) has been seen so far."""
        self.parsed_lines = 0
        """Physical lines decoded and parsed (the rest were only counted)."""

    # -- input -------------------------------------------------------------------

    def feed(self, chunk: bytes) -> None:
        """Take the next bytes of the log (any size; lines may straddle chunks)."""
        if not chunk:
            return
        if self._bytes == 0 and b"\x00" in chunk[:_BINARY_PROBE]:
            raise LogInputError(
                "the input is not a text log: it has NUL bytes in its first 8 KiB",
                hint="pass the engine's log (stdout/stderr), e.g. `docker logs CONTAINER 2>&1`",
                expected="text", found="binary data",
            )
        self._bytes += len(chunk)
        data = self._pending + chunk
        cut = data.rfind(b"\n") + 1
        self._pending = data[cut:]
        if cut:
            self._scan(data[:cut])

    def feed_lines(self, lines: Iterable[str]) -> None:
        """Take lines of text (with or without their newlines)."""
        for line in lines:
            self.feed((line if line.endswith("\n") else line + "\n").encode())

    def finish(self) -> Diagnosis:
        """The end of the log: the diagnosis of everything fed."""
        if self._pending:
            self._scan(self._pending + b"\n")
            self._pending = b""
        for event in self._assembler.finish():
            self._event(event)
        if self._bytes == 0:
            raise LogInputError("the log is empty", expected="an engine log", found="0 bytes",
                                hint="pass the file the engine wrote, or pipe its output into "
                                "`servewise diagnose -`")
        return self.snapshot()

    def snapshot(self) -> Diagnosis:
        """The diagnosis of what was fed so far (open events are not yet included)."""
        return self._collector.result(self._classifier, gpu_total_gib=self.gpu_total_gib,
                                      gpu_name=self.gpu_name, lines=self._lines)

    @property
    def lines(self) -> int:
        """Physical lines read so far."""
        return self._lines

    # -- scanning ----------------------------------------------------------------

    def _hits(self, data: bytes, start: int) -> list[int]:
        """Start offsets of the lines from ``start`` on that contain a keyword."""
        if not self.prefilter:
            starts = [start]
            find = data.find
            position = find(b"\n", start)
            while position >= 0 and position + 1 < len(data):
                starts.append(position + 1)
                position = find(b"\n", position + 1)
            return starts
        view = memoryview(data)[start:]
        found = self._automaton.find_matches_as_indexes(view)
        starts = []
        line_end = -1
        rfind, find = data.rfind, data.find
        for _, begin, _ in found:
            offset = begin + start
            if offset <= line_end:
                continue
            starts.append(rfind(b"\n", 0, offset) + 1)
            line_end = find(b"\n", offset)
        return starts

    def _lookback(self, data: bytes, hit: int, floor: int) -> int:
        """Where to start parsing for a hit: the line above it, and traceback lines above that."""
        start = hit
        for taken in range(LOOKBACK_LINES):
            if start <= floor:
                return floor
            previous = max(data.rfind(b"\n", floor, start - 1) + 1, floor)
            if taken and _TRACEBACK_LIKE.search(data, previous, start - 1) is None:
                return start
            start = previous
        return start

    def _scan(self, new: bytes) -> None:
        data = self._ring + new
        size = len(data)
        pos = 0
        line = self._ring_line
        floor = 0
        hits = self._hits(data, len(self._ring))
        hit_index = 0
        next_hit = hits[0] if hits else size
        if self._budget > 0:
            pos = len(self._ring)
            line += self._ring.count(b"\n")
        while True:
            if self._budget <= 0:
                if next_hit >= size:
                    break
                start = self._lookback(data, next_hit, floor)
                line += data.count(b"\n", pos, start)
                pos = start
                if line != self._parsed_line + 1:
                    for event in self._assembler.flush():
                        self._event(event)
                self._budget = AFTER_LINES
            if pos >= size:
                break
            end = data.find(b"\n", pos)
            if pos == next_hit:
                self._budget = AFTER_LINES + 1
                self._busy = 0
                hit_index += 1
                next_hit = hits[hit_index] if hit_index < len(hits) else size
            self._parse(data[pos:end], line)
            self._parsed_line = line
            pos = end + 1
            line += 1
            floor = pos
            self._budget -= 1
            if self._budget <= 0 and self._assembler.busy and self._busy < BUSY_LINES:
                self._busy += 1
                self._budget = 1
        self._lines = self._ring_line - 1 + data.count(b"\n")
        self._keep_ring(data, floor)

    def _keep_ring(self, data: bytes, floor: int) -> None:
        """Keep the last unparsed lines (at most :data:`RING_LINES`) for look-back."""
        start = len(data)
        for _ in range(RING_LINES):
            if start <= floor:
                break
            start = max(data.rfind(b"\n", floor, start - 1) + 1, floor)
        self._ring = data[start:]
        self._ring_line = self._lines + 1 - self._ring.count(b"\n")

    def _parse(self, raw: bytes, number: int) -> None:
        self.parsed_lines += 1
        text = raw.decode("utf-8", "replace")
        classifier = self._classifier
        for logline in parse_line(text, number):
            classifier.line(logline)
            for event in self._assembler.feed(logline):
                self._event(event)

    def _event(self, event: Event) -> None:
        match = self._classifier.classify(event)
        if self.on_match is not None:
            self.on_match(match)
        if self._collector.add(match):
            self._classifier.mark_failure()
            self.failure_seen = True
