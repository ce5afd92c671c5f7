"""One line of an engine log: prefixes stripped, kept as metadata.

Engine logs reach users through several wrappers: ``docker compose`` service
columns, ``docker logs --timestamps``, journald, CI runners, Kubernetes JSON,
Ray's nested actor prefixes, ``torchrun``'s rank tags, and then each engine's
own logger format (vLLM V0, V1 and newest, SGLang, TGI, TensorRT-LLM, PyTorch's
C++ logger, NCCL, uvicorn). :func:`parse_line` peels them off one by one and
returns the message with what the prefixes said: which process wrote it (role,
ranks, pid), the level, the timestamp, the logger's ``file:line``, and which
format it was.

One physical line can hold several logical ones: a JSON log record with
escaped newlines (TGI's JSON output), or a progress bar redrawn with ``\\r``
and then followed by a log record on the same line. Every logical line keeps the
physical line's number. Nothing here does I/O.
"""

from __future__ import annotations

import functools
import html
import re
from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise

from servewise.formats.logjson import WORD_LEVEL as _WORD_LEVEL
from servewise.formats.logjson import JsonRecord, unwrap_json

__all__ = ["MAX_LINE_CHARS", "LogLine", "clip_text", "parse_line", "process_label",
           "strip_ansi"]

MAX_LINE_CHARS = 4096
"""A message longer than this keeps its first and last halves (see :func:`clip_text`)."""
MAX_TOKEN_CHARS = 256
"""A run of non-space characters longer than this (a base64 image, a hex dump) keeps its ends."""
MAX_SPACE_CHARS = 64
_TOKEN_KEEP = 120
_LONG_RUN = re.compile(rf"\S{{{MAX_TOKEN_CHARS + 1}}}|\s{{{MAX_SPACE_CHARS + 1}}}")
_RUNS = re.compile(r"(\s+)")
ELLIPSIS = "…"

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]")
# ANSI codes pasted as text: caret notation (``^[[0;36m``), syslog's octal escape
# (``#033[2m``) and what is left when the escape byte was lost (`` [36m``, ``←[1;36m``).
_ANSI_TEXT = re.compile(r"(?:\^\[|←|#033|(?<![\w\]]))\[(?:\d{1,3}(?:;\d{1,3}){0,4})?m")

# -- outer wrappers (container runtimes, journald, CI) ------------------------
_CRI = re.compile(
    r"(?P<ts>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)) (?:stdout|stderr) [FP] "
)
_TGI = re.compile(
    r"(?P<ts>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z)\s+(?P<level>TRACE|DEBUG|INFO|WARN|ERROR)\s+"
    r"(?P<target>(?:[\w.-]+(?:::[\w.-]+)*: ){1,2})"
)
_DOCKER_TS = re.compile(r"(?P<ts>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)) ")
_COMPOSE = re.compile(r"(?P<service>[A-Za-z0-9][\w.-]*)\s+\| ")
_JOURNAL = re.compile(
    r"(?P<ts>[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d) (?:(?P<host>[\w.-]+) )?"
    r"(?P<unit>[\w@.\-/]+?)(?:\[(?P<pid>\d+)\])?: "
)
_BUILDKITE = re.compile(r"(?:>\s+\|\s+)?\[(?P<ts>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z)\] ")
_TORCHRUN = re.compile(r"\[(?:default|rank)(?P<rank>\d+)\]:\s?")
# -- pasted wrappers: markdown quotes and code ticks, CI pipes, pytest, srun, k8s, FastChat --
_QUOTE = re.compile(r"(?:>[ \t]?)+")
_TICKS = re.compile(r"`{1,3}(?=\S)")
_PIPE = re.compile(r"\s*\|\s+(?=\[\d{4}-\d\d-\d\dT)")
#: A row of Triton Inference Server's model table (``| tensorrt_llm | 1 | UNAVAILABLE: …  |``),
#: which is where a backend that failed to load says why; its wrapped rows have empty cells.
_MODEL_TABLE = re.compile(r"\|[ \t]*[\w.-]*[ \t]*\|[ \t]*\d*[ \t]*\| (?P<status>.*?)[ \t]*\|?$")
#: A line number a viewer copied with the line (``cat -n``, Buildkite's log view: ``3597\t``).
_LINE_NUMBER = re.compile(r" {0,6}\d{1,7}\t")
#: An error pasted inside quotes: ``"RuntimeError: …``.
_QUOTED_EXCEPTION = re.compile(r"[\"'][A-Za-z_][\w.]*(?:Error|Exception|Warning): ")
_HTML_ENTITY = re.compile(r"&(?:quot|#39|#x27|lt|gt|amp|apos);")
#: The HTML an issue's markdown wraps a log in (``<details>``, ``<summary>…</summary>``,
#: ``</pre>``): a line of only these tags is not a log line; the summary's own text (often the
#: error, as its title) is kept.
_MARKUP = re.compile(r"(?:\s*</?(?:details|summary|pre|code|p|div|br|hr)\b[^<>]{0,200}>)+\s*$"
                     r"|\s*(?:<details\b[^<>]{0,200}>\s*)?<summary\b[^<>]{0,200}>"
                     r"(?P<summary>[^<>]{0,500})</summary>\s*$", re.IGNORECASE)
_PYTEST = re.compile(r"E {3,7}(?=\S)")
_SRUN = re.compile(r"\d{1,4}: (?=[(\[]|(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) )")
_KUBECTL = re.compile(r"\[pod/[^\]\s]{1,253}\] ")
# A log console's severity and timestamp (Google Cloud Logging's export and its pasted view).
_CONSOLE = re.compile(r"(?:DEFAULT|DEBUG|INFO|NOTICE|WARNING|ERROR|CRITICAL|ALERT|EMERGENCY) "
                      r"(?P<ts>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?Z) ")
_FASTCHAT = re.compile(
    r"(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) \| (?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL) \| "
    r"[\w.-]{1,64} \| ")
_GLOG_PLAIN = re.compile(
    r"(?P<level>[IWEF])(?P<ts>\d{4} \d\d:\d\d:\d\d\.\d{1,9})\s{1,8}\d{1,9} "
    r"(?P<loc>[\w.-]{1,128}:\d{1,7})\] ")
_LLAMA_CPP = re.compile(r"(?:\[\d{1,9}\] )?\d{1,3}\.\d\d\.\d{3}\.\d{3} (?P<level>[IWEDT]) "
                        r"(?:[a-z]{2,5} {1,2}(?=\w))?")

# -- process prefixes: vLLM (and Ray actors around it) -----------------------
_PROCESS = re.compile(
    r"\((?P<name>[A-Za-z][\w.:-]*) (?:rank=(?P<rank>\d+) )?pid=(?P<pid>\d+)"
    r"(?:, ip=(?P<ip>[^)\s]+))?\)\s?"
)
_NAME_RANKS = re.compile(r"(?<![A-Za-z])(DP|TP|PP|EP|PCP|DCP)(\d+)")
_NAME_INDEX = re.compile(r"[_-](\d+)$")
_FLATTENED_TAGS = 3
"""A line holding this many copies of one process tag (and a frame) is several lines run
together."""
_RAY_REPEATED = re.compile(r"\[repeated (?P<n>\d{1,9})x across cluster\]\s{0,64}$")

# -- logger formats ----------------------------------------------------------
_VLLM = re.compile(
    r"(?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL) (?P<ts>\d\d-\d\d \d\d:\d\d:\d\d)(?:\.\d+)? "
    r"(?:\[(?P<loc>[^\]\s]+:\d+)\]|(?P<loc0>[\w./-]+:\d+)\]) ?"
)
_SGLANG = re.compile(
    r"\[(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)(?:,\d+)?(?P<ranks>(?: [A-Z][A-Z_]*\d+)*)\] "
)
_TRTLLM_PY = re.compile(
    r"\[(?P<ts>\d\d/\d\d/\d{4}-\d\d:\d\d:\d\d)\] \[TRT-LLM\](?: \[RANK (?P<rank>\d+)\])? "
    r"\[(?P<level>[VDIWEF])\] "
)
_TRTLLM_CPP = re.compile(
    r"\[TensorRT-LLM\](?:\[RANK (?P<rank>\d+)\])?\[(?P<level>ERROR|WARNING|INFO|DEBUG|VERBOSE)\] "
)
_GLOG = re.compile(
    r"\[(?P<level>[WEIF])(?P<ts>\d{4} \d\d:\d\d:\d\d\.\d+)? ?(?P<loc>[\w.]+:\d+)\] "
    r"(?:\[Rank (?P<rank>\d+)\] )?"
)
_NCCL = re.compile(r"(?P<host>[\w.-]+):(?P<pid>\d+):(?P<tid>\d+) \[(?P<dev>\d+)\] (?=NCCL )")
_UVICORN = re.compile(r"(?P<level>INFO|WARNING|ERROR|DEBUG|CRITICAL):\s{2,}")
_TGI_RANK = re.compile(r"\s+rank=(?P<rank>\d+)$")

_LEVEL_WORDS = ("DEBUG ", "INFO ", "WARNING ", "ERROR ", "CRITICAL ")
_LEVEL_COLONS = ("DEBUG:", "INFO:", "WARNING:", "ERROR:", "CRITICAL:")
_LETTER_LEVEL = {"V": "debug", "D": "debug", "I": "info", "W": "warning", "E": "error",
                 "F": "fatal"}

# A tqdm bar glued to the next record when the carriage return was lost.
_TQDM_GLUE = re.compile(r"\d{1,3}%\|[^|\n]{0,256}\|[^\[\n]{0,256}\[[^\]\n]{0,256}\](?=\S)")


@dataclass(frozen=True, slots=True)
class LogLine:
    """A logical log line with its prefixes removed and their content kept."""

    number: int
    """1-based number of the physical line it came from."""
    text: str
    """The message, without ANSI codes or any recognised prefix."""
    process: str = ""
    """Which process wrote it, e.g. ``EngineCore_DP0 pid=411``, ``TP0``, ``rank 1``; '' unknown."""
    role: str | None = None
    """The process role: ``APIServer``, ``EngineCore``, ``Worker``, ``Scheduler``, ``shard``…"""
    pid: int | None = None
    """The process id, when a prefix gave one."""
    ranks: tuple[tuple[str, int], ...] = ()
    """Parallel ranks named by the prefix: ``(("dp", 0), ("tp", 1))``, ``(("rank", 1),)``."""
    level: str | None = None
    """debug, info, warning, error, critical or fatal; None when the line has no level."""
    timestamp: str | None = None
    """The timestamp as written (innermost prefix that had one)."""
    logger: str | None = None
    """``file:line`` of the logging call (vLLM, PyTorch C++)."""
    source: str | None = None
    """The logger format recognised: vllm, sglang, tgi, tensorrt_llm, torch, nccl, uvicorn."""
    repeated: int = 1
    """How many times Ray says the line repeated across the cluster."""
    prefixed: bool = False
    """Whether a logger prefix (level or timestamp) was found, not just a process tag."""


@dataclass
class _Meta:
    process: str = ""
    role: str | None = None
    pid: int | None = None
    ranks: tuple[tuple[str, int], ...] = ()
    level: str | None = None
    timestamp: str | None = None
    logger: str | None = None
    source: str | None = None
    repeated: int = 1
    prefixed: bool = False


def clip_text(text: str) -> str:
    """``text`` with what no rule reads cut short, so that matching stays linear.

    A run of more than :data:`MAX_TOKEN_CHARS` non-space characters (a base64 image, a hex
    dump, a long prompt) keeps its first and last 120 joined by ``…``; a run of more than
    :data:`MAX_SPACE_CHARS` spaces becomes one space; a message still longer than
    :data:`MAX_LINE_CHARS` keeps its first and last halves. Short lines come back as they are.
    """
    if len(text) <= MAX_TOKEN_CHARS:
        return text
    longest = len(max(text.split(), key=len, default=""))
    if longest > MAX_TOKEN_CHARS or " " * (MAX_SPACE_CHARS + 1) in text or (
            "\t" in text and _LONG_RUN.search(text) is not None):
        pieces = []
        for piece in _RUNS.split(text):
            if len(piece) > MAX_TOKEN_CHARS and not piece[0].isspace():
                piece = piece[:_TOKEN_KEEP] + ELLIPSIS + piece[-_TOKEN_KEEP:]
            elif len(piece) > MAX_SPACE_CHARS and piece[0].isspace():
                piece = " "
            pieces.append(piece)
        text = "".join(pieces)
    if len(text) > MAX_LINE_CHARS:
        half = MAX_LINE_CHARS // 2
        text = f"{text[:half]} {ELLIPSIS} {text[-half:]}"
    return text


def strip_ansi(text: str) -> str:
    """``text`` without ANSI colour and cursor codes (also pasted as ``^[[0;36m`` text)."""
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if "[" in text and "m" in text and ("^[" in text or "←" in text or "#033[" in text
                                        or "[0m" in text or "[1;" in text or "[3" in text
                                        or "[9" in text):
        text = _ANSI_TEXT.sub("", text)
    return text


def process_label(role: str | None, ranks: tuple[tuple[str, int], ...], pid: int | None) -> str:
    """A short, stable name for a process: ``EngineCore_DP0 pid=411``, ``TP0``, ``rank 1``."""
    if role is None and not ranks:
        return "" if pid is None else f"pid={pid}"
    if role in (None, "rank", "shard"):
        if len(ranks) == 1 and ranks[0][0] == "rank":
            name = f"{role or 'rank'} {ranks[0][1]}"
        else:
            name = " ".join(f"{key.upper()}{value}" for key, value in ranks)
    else:
        suffix = "".join(f"_{key.upper()}{value}" for key, value in ranks)
        name = f"{role}{suffix}"
    return name if pid is None else f"{name} pid={pid}"


def parse_line(raw: str, number: int) -> list[LogLine]:
    """Parse one physical line into its logical lines (usually exactly one)."""
    text = strip_ansi(raw).rstrip("\n").rstrip("\r")
    if "&" in text and _HTML_ENTITY.search(text) is not None:
        # Copied from a web page's source or an API's HTML: ``File &quot;/x.py&quot;``.
        text = html.unescape(text)
    if "\r" in text:
        # A progress bar redrawn in place: only its last state was on screen.
        parts = [part for part in text.split("\r") if part.strip()]
        text = parts[-1] if parts else ""
    flattened = _unflatten(text)
    if flattened is not None:
        return [line for part in flattened for line in _parse_text(part, number, _Meta())]
    stripped = text.lstrip()
    if stripped.startswith("{") and '"' in stripped:
        record = unwrap_json(stripped)
        if record is not None:
            meta = _meta_of(record)
            lines: list[LogLine] = []
            for message in record.messages:
                lines.extend(_parse_text(message, number, _copy(meta)))
            return lines
    return _parse_text(text, number, _Meta())


def _unflatten(text: str) -> list[str] | None:
    """A paste whose newlines were lost (a comment box, a web form): the lines of one process,
    each still behind its ``(Name pid=N)`` tag, run together on one line with a traceback.
    Split before each tag again; None when the line is not such a paste."""
    if text.count(" pid=") < _FLATTENED_TAGS or "File \"" not in text:
        return None
    starts = [found.start() for found in _PROCESS.finditer(text)]
    tags = {text[start:text.index(")", start)] for start in starts}
    if len(starts) < _FLATTENED_TAGS or len(tags) != 1:
        return None
    cuts = starts[1:] if starts[0] == 0 else starts
    bounds = [0, *cuts, len(text)]
    return [text[lo:hi].rstrip() for lo, hi in pairwise(bounds) if text[lo:hi].strip()]


def _meta_of(record: JsonRecord) -> _Meta:
    return _Meta(role=record.role, ranks=record.ranks, level=record.level,
                 timestamp=record.timestamp, source=record.source, prefixed=record.prefixed)


def _copy(meta: _Meta) -> _Meta:
    return _Meta(**vars(meta))


def _parse_text(text: str, number: int, meta: _Meta) -> list[LogLine]:
    glued = _TQDM_GLUE.search(text) if "%|" in text else None
    if glued is not None and glued.end() < len(text):
        head, tail = text[: glued.end()], text[glued.end():]
        return [*_parse_text(head, number, _copy(meta)), *_parse_text(tail, number, meta)]
    message = _strip_prefixes(text, meta)
    if meta.source == "tgi":
        rank = _TGI_RANK.search(message)
        if rank is not None:
            message = message[: rank.start()]
            meta.ranks = (("rank", int(rank["rank"])),)
            meta.role = meta.role or "shard"
    if meta.process == "" and (meta.role or meta.ranks or meta.pid is not None):
        meta.process = process_label(meta.role, meta.ranks, meta.pid)
    if message[:1] == "{" and message != text and '"error"' in message[:4096]:
        # An API's error body behind a paste's prefix (a quote, a line number).
        record = unwrap_json(message)
        if record is not None and record.level == "error":
            meta.level = "error"
            return [LogLine(number, clip_text(part), **vars(meta)) for part in record.messages]
    return [LogLine(number, clip_text(message), **vars(meta))]


def _strip_prefixes(text: str, meta: _Meta) -> str:
    """Remove every recognised prefix, outermost first, recording what each said."""
    at = text.rfind("[repeated ")
    repeated = _RAY_REPEATED.match(text, at) if at >= 0 else None
    if repeated is not None:
        text = text[:at].rstrip()
        meta.repeated = int(repeated["n"])
    for _ in range(12):
        before = text
        text = _strip_one(text, meta)
        if text == before:
            break
    return text


def _set_time(meta: _Meta, ts: str | None) -> None:
    if ts:
        meta.timestamp = ts


def _strip_pasted(text: str, meta: _Meta) -> str | None:
    """The wrappers a paste adds (a quote, code ticks, a CI pipe, pytest's ``E``, a line
    number), or None."""
    first = text[0]
    if (first.isdigit() or first == " ") and "\t" in text[:14]:
        number = _LINE_NUMBER.match(text)
        if number is not None:
            return text[number.end():]
    if first == ">":
        match = _BUILDKITE.match(text)
        if match is not None:
            _set_time(meta, match["ts"])
            return text[match.end():]
        return text[_QUOTE.match(text).end():]  # type: ignore[union-attr]
    if first in "\"'" and _QUOTED_EXCEPTION.match(text) is not None:
        return text[1:].rstrip("\"'")  # an error pasted inside quotes: "RuntimeError: …"
    if first == "<":
        markup = _MARKUP.match(text)  # <details><summary>log</summary>, </details>
        return None if markup is None else (markup["summary"] or "").strip()
    if first == "`":
        match = _TICKS.match(text)
        if match is not None:
            rest = text[match.end():]
            return rest[:-1] if rest.endswith("`") and rest.count("`") % 2 else rest
        return None
    if first in " |":
        match = _PIPE.match(text)
        if match is not None:
            return text[match.end():]
        match = _MODEL_TABLE.match(text) if first == "|" else None
        if match is not None and match["status"]:
            if match["status"].startswith("UNAVAILABLE:"):
                meta.level = "error"  # the model did not load: its status says why
            return match["status"]
        if first == " ":
            stripped = text.lstrip(" ")
            if stripped.startswith(_LEVEL_WORDS) and _VLLM.match(stripped) is not None:
                return stripped  # a logger line indented by the paste
            if (stripped[:1] == "(" and _PROCESS.match(stripped) is not None) or (
                    stripped[:1] == "[" and any(p.match(stripped) for p, _ in _BRACKET_FORMATS)):
                return stripped  # a prefix after the space a pasted colour code left
        return None
    if first in "DINWECA" and text[1:2].isupper():
        match = _CONSOLE.match(text)
        if match is not None:
            _set_time(meta, match["ts"])  # its severity is the stream's, not the line's
            return text[match.end():]
    if first == "E":
        match = _PYTEST.match(text)
        return text[match.end():] if match is not None else None
    if first == "[":
        match = _KUBECTL.match(text)
        return text[match.end():] if match is not None else None
    return None


def _strip_one(text: str, meta: _Meta) -> str:
    if not text:
        return text
    pasted = _strip_pasted(text, meta)
    if pasted is not None:
        return pasted
    first = text[0]
    if first == "(":
        match = _PROCESS.match(text)
        if match is not None:
            _take_process(match, meta)
            return text[match.end():]
        return text
    if (first == "[" and text[1:2].isdigit() and "] 0." in text[:16]) or (
            first == "[" and _LLAMA_CPP.match(text) is not None):
        match = _LLAMA_CPP.match(text)
        if match is not None:
            meta.level = _LETTER_LEVEL.get(match["level"], "debug")
            meta.source = meta.source or "llama.cpp"
            meta.prefixed = True
            return text[match.end():]
    if first == "[":
        for pattern, handler in _BRACKET_FORMATS:
            match = pattern.match(text)
            if match is not None:
                handler(match, meta)
                return text[match.end():]
        return text
    if first.isdigit():
        match = _SRUN.match(text)
        if match is not None:
            return text[match.end():]
        match = _FASTCHAT.match(text)
        if match is not None:
            meta.level = _WORD_LEVEL[match["level"]]
            _set_time(meta, match["ts"])
            meta.prefixed = True
            return text[match.end():]
        match = _LLAMA_CPP.match(text)
        if match is not None:
            meta.level = _LETTER_LEVEL.get(match["level"], "debug")
            meta.source = meta.source or "llama.cpp"
            meta.prefixed = True
            return text[match.end():]
        match = _TGI.match(text)
        if match is not None:
            meta.level = _WORD_LEVEL[match["level"]]
            _set_time(meta, match["ts"])
            meta.source = "tgi"
            meta.prefixed = True
            return text[match.end():]
        match = _CRI.match(text) or _DOCKER_TS.match(text)
        if match is not None:
            _set_time(meta, match["ts"])
            return text[match.end():]
    if first in "IWEF" and text[1:2].isdigit():
        match = _GLOG_PLAIN.match(text)
        if match is not None:
            meta.level = _LETTER_LEVEL[match["level"]]
            _set_time(meta, match["ts"])
            meta.logger = match["loc"]
            meta.source = meta.source or "torch"
            meta.prefixed = True
            return text[match.end():]
    if first.isupper():
        match = _VLLM.match(text) if text.startswith(_LEVEL_WORDS) else None
        if match is not None:
            meta.level = _WORD_LEVEL[match["level"]]
            _set_time(meta, match["ts"])
            meta.logger = match["loc"] or match["loc0"]
            meta.source = "vllm"
            meta.prefixed = True
            return text[match.end():]
        match = _UVICORN.match(text) if text.startswith(_LEVEL_COLONS) else None
        if match is not None:
            meta.level = _WORD_LEVEL[match["level"]]
            meta.source = meta.source or "uvicorn"
            meta.prefixed = True
            return text[match.end():]
        match = _JOURNAL.match(text) if text[3:4] == " " and text[6:7] == " " else None
        if match is not None:
            _set_time(meta, match["ts"])
            if match["pid"]:
                meta.pid = int(match["pid"])
            return text[match.end():]
    match = _NCCL.match(text) if " NCCL " in text[:96] else None
    if match is not None:
        meta.pid = int(match["pid"])
        meta.ranks = (("device", int(match["dev"])),)
        meta.role = meta.role or "nccl"
        meta.source = "nccl"
        return text[match.end():]
    match = _COMPOSE.match(text) if "| " in text[:80] else None
    if match is not None and not match["service"].isdigit():
        return text[match.end():]
    return text


def _take_process(match: re.Match[str], meta: _Meta) -> None:
    """A ``(Name pid=N)`` tag; the innermost tag of nested Ray prefixes wins."""
    meta.role, meta.ranks, meta.pid, meta.process = _read_tag(match[0])
    meta.source = meta.source or "vllm"


@functools.lru_cache(maxsize=1024)
def _read_tag(tag: str) -> tuple[str, tuple[tuple[str, int], ...], int, str]:
    """The role, ranks, pid and label a ``(Name pid=N)`` tag says (remembered: a log repeats
    the same few tags on every line)."""
    match = _PROCESS.match(tag)
    assert match is not None  # the tag is what _PROCESS matched
    name = match["name"]
    ranks = [(key.lower(), int(value)) for key, value in _NAME_RANKS.findall(name)]
    role = _NAME_RANKS.sub("", name).rstrip("_-")
    index = _NAME_INDEX.search(role)
    if index is not None and not ranks:
        role = role[: index.start()]
        ranks = [("dp", int(index[1]))] if role == "EngineCore" else [("index", int(index[1]))]
    if match["rank"] is not None:
        ranks.append(("rank", int(match["rank"])))
    role = role or name
    pid = int(match["pid"])
    return role, tuple(ranks), pid, process_label(role, tuple(ranks), pid)


def _sglang(match: re.Match[str], meta: _Meta) -> None:
    _set_time(meta, match["ts"])
    ranks = tuple(
        (tag.rstrip("0123456789").lower(), int(tag[len(tag.rstrip("0123456789")):]))
        for tag in match["ranks"].split()
    )
    if ranks:
        meta.ranks = ranks
        meta.role = "Scheduler"
        meta.process = " ".join(f"{key.upper()}{value}" for key, value in ranks)
    meta.source = "sglang"
    meta.prefixed = True


def _trtllm_py(match: re.Match[str], meta: _Meta) -> None:
    _set_time(meta, match["ts"])
    meta.level = _LETTER_LEVEL[match["level"]]
    if match["rank"] is not None:
        meta.ranks = (("rank", int(match["rank"])),)
        meta.role = "rank"
    meta.source = "tensorrt_llm"
    meta.prefixed = True


def _trtllm_cpp(match: re.Match[str], meta: _Meta) -> None:
    meta.level = _WORD_LEVEL[match["level"]]
    if match["rank"] is not None:
        meta.ranks = (("rank", int(match["rank"])),)
        meta.role = "rank"
    meta.source = "tensorrt_llm"
    meta.prefixed = True


def _glog(match: re.Match[str], meta: _Meta) -> None:
    meta.level = _LETTER_LEVEL[match["level"]]
    _set_time(meta, match["ts"])
    meta.logger = match["loc"]
    if match["rank"] is not None:
        meta.ranks = (("rank", int(match["rank"])),)
        meta.role = meta.role or "rank"
    meta.source = meta.source or "torch"
    meta.prefixed = True


def _torchrun(match: re.Match[str], meta: _Meta) -> None:
    if not meta.ranks:
        meta.ranks = (("rank", int(match["rank"])),)
        meta.role = meta.role or "rank"


def _buildkite(match: re.Match[str], meta: _Meta) -> None:
    _set_time(meta, match["ts"])


_BRACKET_FORMATS: tuple[tuple[re.Pattern[str], Callable[[re.Match[str], _Meta], None]], ...] = (
    (_SGLANG, _sglang),
    (_TRTLLM_PY, _trtllm_py),
    (_TRTLLM_CPP, _trtllm_cpp),
    (_GLOG, _glog),
    (_TORCHRUN, _torchrun),
    (_BUILDKITE, _buildkite),
)
