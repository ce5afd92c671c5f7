"""Log lines into events: tracebacks, C++ assertions and multi-line messages reassembled.

:class:`EventAssembler` is a push parser over :class:`~servewise.formats.logline.LogLine`
values. It keeps one open event per process, so the interleaved output of
several workers is separated by the process tag of each line, and emits an
:class:`Event` when it is complete:

* a Python traceback (``Traceback (most recent call last):``, its frames, the
  exception line and the lines its message continues on), also when the excerpt
  starts in the middle of the frames; chained tracebacks are separate events;
* a log record: one line, or several lines of the same logging call (vLLM
  prefixes every line of a message with the same header), with C++ backtrace
  and ``what():`` lines attached;
* a bare exception line with no traceback (``RuntimeError: …``).

Unprefixed lines right after a prefixed line that opened a traceback belong to
that process (SGLang and TGI print the traceback lines without the prefix).
Memory is bounded: at most :data:`MAX_MESSAGE_LINES` message lines and
:data:`MAX_FRAMES` frames are kept per event. Paths are normalised with
:func:`normalize_path`.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from servewise.formats.logline import LogLine

__all__ = ["Event", "EventAssembler", "Frame", "looks_like_exception", "normalize_path"]

MAX_MESSAGE_LINES = 60
MAX_FRAMES = 80
MAX_MESSAGE_CHARS = 16384
"""What one event feeds the rules at most: further message lines are read but not kept."""

TRACEBACK_HEADER = "Traceback (most recent call last):"
_CHAIN = re.compile(
    r"^(?:The above exception was the direct cause of the following exception:"
    r"|During handling of the above exception, another exception occurred:)\s*$"
)
_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+)(?:,? in (?P<func>.+?))?\s*$')
# faulthandler's dump after ``Fatal Python error:``: a thread's frames, innermost first.
_FAULT_THREAD = re.compile(r"^(?P<current>Current thread|Thread) 0x[0-9a-fA-F]+ "
                           r"\(most recent call first\):$")
_FATAL_PYTHON = "Fatal Python error"
_EXCEPTION = re.compile(r"^(?P<type>[A-Za-z_][\w.]*)(?::\s?(?P<msg>.*))?$")
# A traceback's source line that raises with a literal message: ``raise ValueError("...")``.
_RAISE = re.compile(
    r"""^raise\s+(?P<type>[A-Za-z_][\w.]*)\(\s*[fFrRuU]{0,2}(?P<q>["'])(?P<msg>[^"']+)(?:(?P=q)|$)""")
# A record that is an exception's repr: ``OutOfMemoryError('CUDA out of memory. …')``.
_REPR = re.compile(r"""^(?P<type>[A-Z]\w*(?:Error|Exception))\((?P<q>["'])(?P<msg>.+)(?P=q)\)$""")
_EXCEPTION_WORDS = re.compile(
    r"(?:Error|Exception|Exit|Interrupt|Failed|Failure|Fault|Abort|Timeout)$"
)
# Lines that continue the message above them: C++ backtraces, ``what():``, indented text.
_CONTINUATION = re.compile(
    r"^(?:\s+\S|\d+\s+0x[0-9a-fA-F]+\s|frame #\d+:|Exception raised from |what\(\):|"
    r"current device: \d+, in function |"
    r"\.\.\.<\d+ lines>\.\.\.)"
)
_NEW_START = re.compile(
    r"^(?:Traceback \(most recent call last\):|Process [\w-]+:$|\S+\.py:\d+: \w*Warning: |"
    r"[\w.]+(?:Error|Exception|Warning)\b|\w+ fatal\s*:|terminate called )"
)


def normalize_path(path: str) -> str:
    """A source path as attribution reads it: ``..`` resolved, ``\\`` as ``/``."""
    text = path.strip().replace("\\", "/")
    if not text:
        return text
    lead = "/" if text.startswith("/") else ""
    return lead + posixpath.normpath(text).lstrip("/") if "/" in text else text


@dataclass(frozen=True, slots=True)
class Frame:
    """One frame of a Python traceback."""

    path: str
    """The file, normalised (``..`` resolved)."""
    line: int | None
    """Line number in that file."""
    function: str
    """The function (``<module>`` at top level)."""
    number: int
    """The log line the frame is on."""


@dataclass(frozen=True)
class Event:
    """A complete message of one process: a traceback, a log record or an exception line."""

    kind: str
    """``traceback``, ``exception`` (an exception line with no frames) or ``record``."""
    process: str
    """The process label of its lines ('' when unknown)."""
    first_line: int
    """Line number of its first line."""
    last_line: int
    """Line number of its last line."""
    message: str
    """The text: the exception line and its continuation, or the record's lines."""
    exception: str | None = None
    """The exception type of a traceback or exception line (``torch.OutOfMemoryError``)."""
    frames: tuple[Frame, ...] = ()
    """Traceback frames, outermost first."""
    level: str | None = None
    """The level of its first line."""
    source: str | None = None
    """The logger format of its first line (vllm, sglang, tgi, tensorrt_llm, …)."""
    role: str | None = None
    """The role of its process."""
    ranks: tuple[tuple[str, int], ...] = ()
    """The ranks of its process."""
    repeated: int = 1
    """Ray's repeat count of its first line."""
    header: str | None = None
    """For a traceback: the record of the same process that introduced it, if any."""
    headless: bool = False
    """For a traceback: the excerpt starts inside its frames (no header line)."""
    exception_line: int | None = None
    """The line the exception type is on (a traceback's last line before its message)."""

    @property
    def match_line(self) -> int:
        """The line that best stands for the event: the exception line, else the first."""
        return self.exception_line or self.first_line

    @property
    def text(self) -> str:
        """What rules match: ``Type: message`` for exceptions, the message for records."""
        if self.exception is None:
            return self.message
        return f"{self.exception}: {self.message}" if self.message else self.exception


@dataclass
class _Open:
    kind: str
    line: LogLine
    last: int
    message: list[str] = field(default_factory=list)
    frames: list[Frame] = field(default_factory=list)
    exception: str | None = None
    header: str | None = None
    in_frames: bool = True
    headless: bool = False
    key: tuple[str | None, str | None, str | None] = (None, None, None)
    blank: int = 0
    exception_line: int | None = None
    chars: int = 0
    raised: tuple[str, str] | None = None
    """The innermost ``raise Type("literal")`` source line seen among the frames."""
    after_frame: bool = False
    """The last line read was a frame (its source line may follow, unindented when pasted)."""
    fault_thread: str | None = None
    """In a ``Fatal Python error`` record: the faulthandler thread being read (``Current
    thread`` or ``Thread``); only the current thread's frames are the failure's."""


def _record_key(line: LogLine) -> tuple[str | None, str | None, str | None]:
    return (line.level, line.timestamp, line.logger)


def looks_like_exception(text: str) -> re.Match[str] | None:
    """The match (``type``, ``msg``) when ``text`` reads as an exception's own line
    (``ValueError: …``, ``torch.OutOfMemoryError``), else None."""
    match = _EXCEPTION.match(text)
    if match is None:
        return None
    name = match["type"]
    if match["msg"] is None and "." not in name and _EXCEPTION_WORDS.search(name) is None:
        return None
    if _EXCEPTION_WORDS.search(name) is None and "." not in name and match["msg"] is not None:
        return None
    return match


class EventAssembler:
    """Feed :class:`LogLine` values in log order; collect the :class:`Event` values it emits."""

    def __init__(self) -> None:
        self._open: dict[str, _Open] = {}
        self._last_process: str | None = None
        self._raw_owner: str | None = None
        self._pending_header: dict[str, str] = {}

    @property
    def busy(self) -> bool:
        """Whether a traceback or an exception's message is still open (more may follow)."""
        return any(state.kind in ("traceback", "exception") for state in self._open.values())

    def feed(self, line: LogLine) -> list[Event]:
        """Take the next line; return the events it completed."""
        out: list[Event] = []
        key = self._route(line)
        text = line.text
        state = self._open.get(key)
        if state is not None and not self._continues(state, line, text):
            if _repr_before_traceback(state, text):
                # The exception's repr, then its traceback (vLLM V0): one failure, told by
                # the traceback, which keeps the repr as its header.
                del self._open[key]
                if self._raw_owner == key:
                    self._raw_owner = None
            else:
                out.append(self._close(key))
            state = None
        if state is not None:
            self._extend(state, line, text, key, out)
        else:
            self._start(key, line, text, out)
        self._last_process = key
        return out

    def flush(self) -> list[Event]:
        """Close every open event (a gap in the lines fed, or the end of the log)."""
        events = [self._close(key) for key in list(self._open)]
        self._raw_owner = None
        self._last_process = None
        self._pending_header.clear()
        return events

    def finish(self) -> list[Event]:
        """The end of the log: close every open event."""
        return self.flush()

    def feed_all(self, lines: Iterable[LogLine]) -> list[Event]:
        """Feed every line and finish; all events in the order they completed."""
        events: list[Event] = []
        for line in lines:
            events.extend(self.feed(line))
        events.extend(self.finish())
        return events

    # -- routing ---------------------------------------------------------------

    def _route(self, line: LogLine) -> str:
        if line.process or line.prefixed:
            self._raw_owner = None
            return line.process
        owner = self._raw_owner
        if owner is None and self._last_process:
            previous = self._open.get(self._last_process)
            if previous is not None and (
                previous.kind == "traceback" or previous.message[-1:] == [""]
                or (previous.message and previous.message[-1].rstrip().endswith(":"))
            ):
                owner = self._last_process
        if owner is not None and owner in self._open:
            self._raw_owner = owner
            return owner
        self._raw_owner = None
        return ""

    # -- state machine ---------------------------------------------------------

    def _continues(self, state: _Open, line: LogLine, text: str) -> bool:
        if state.kind == "traceback":
            if state.in_frames:
                return True
            return self._message_continues(state, line, text)
        return self._message_continues(state, line, text)

    def _message_continues(self, state: _Open, line: LogLine, text: str) -> bool:
        if len(state.message) >= MAX_MESSAGE_LINES:
            return False
        if state.kind == "record" and state.message[:1] and state.message[0].startswith(
                _FATAL_PYTHON) and (_FAULT_THREAD.match(text.strip()) or (
                    state.fault_thread is not None and _FRAME.match(text) is not None)):
            return True  # faulthandler's dump of the threads below the fatal error
        if state.kind == "record" and _FRAME.match(text) is not None:
            # A paste that begins inside a traceback (a frame's source line, then frames):
            # the frames start a traceback of their own, so its exception gets them.
            return False
        if line.prefixed and _record_key(line) != state.key:
            return False
        stripped = text.strip()
        if stripped == TRACEBACK_HEADER or stripped.endswith(TRACEBACK_HEADER):
            return False
        if _CHAIN.match(stripped):
            return False
        if not stripped:
            return state.blank < 2
        if _NEW_START.match(text) is not None and state.kind == "record":
            return False
        if line.prefixed and _record_key(line) == state.key and line.logger is not None:
            # vLLM repeats the same header on every line of one message.
            return state.kind == "record" or _NEW_START.match(text) is None
        if _CONTINUATION.match(text):
            return True
        if state.blank and state.kind == "record":
            return False
        return _NEW_START.match(text) is None and state.kind != "record" and not line.prefixed

    def _start(self, key: str, line: LogLine, text: str, out: list[Event]) -> None:
        stripped = text.strip()
        if _CHAIN.match(stripped):
            return
        if stripped == TRACEBACK_HEADER or stripped.endswith(TRACEBACK_HEADER):
            before = stripped[: -len(TRACEBACK_HEADER)].rstrip(" ,:")
            header = self._pending_header.pop(key, None)
            if before:
                out.append(self._event_from(key, _Open("record", line, line.number, [before])))
                header = before
            self._open[key] = _Open("traceback", line, line.number, header=header,
                                    key=_record_key(line))
            return
        frame = _FRAME.match(text)
        if frame is not None:
            state = _Open("traceback", line, line.number, headless=True, key=_record_key(line),
                          header=self._pending_header.pop(key, None))
            state.frames.append(_frame(frame, line.number))
            # Its source line may follow unindented (a Ray actor's prefix, stripped) like any
            # later frame's.
            state.after_frame = True
            self._open[key] = state
            return
        if not stripped:
            return
        exception = looks_like_exception(stripped)
        if exception is not None:
            state = _Open("exception", line, line.number, exception=exception["type"],
                          key=_record_key(line))
            state.message.append(exception["msg"] or "")
            state.in_frames = False
            self._open[key] = state
            return
        self._open[key] = _Open("record", line, line.number, [text], key=_record_key(line))
        self._pending_header[key] = stripped

    def _extend(self, state: _Open, line: LogLine, text: str, key: str, out: list[Event]) -> None:
        state.last = line.number
        if state.kind == "traceback" and state.in_frames:
            stripped = text.strip()
            frame = _FRAME.match(text)
            after_frame, state.after_frame = state.after_frame, frame is not None
            if frame is not None:
                if len(state.frames) < MAX_FRAMES:
                    state.frames.append(_frame(frame, line.number))
                else:
                    state.frames[-1] = _frame(frame, line.number)
                return
            unindented_source = after_frame and _EXCEPTION.match(stripped) is None and (
                _REPR.match(stripped) is None)
            if (not stripped or text[:1].isspace() or unindented_source
                    or stripped.startswith(("^", "~", "...<"))):
                if stripped and not stripped.startswith(("^", "~", "...<")):
                    # A frame's source line: only the last frame's raise says what was raised.
                    raised = _RAISE.match(stripped) if stripped[:5] == "raise" else None
                    state.raised = (raised["type"], raised["msg"]) if raised else (
                        ("AssertionError", stripped) if stripped[:7] == "assert " else None)
                return  # source lines, carets, blank lines between TGI's frames
            if stripped == TRACEBACK_HEADER:
                return
            exception = _EXCEPTION.match(stripped)
            state.in_frames = False
            state.exception_line = line.number
            if exception is not None:
                state.exception = exception["type"]
                state.message.append(exception["msg"] or "")
            else:
                state.message.append(stripped)
            return
        if state.kind == "record" and _fault_frame(state, text):
            return
        if not text.strip():
            state.blank += 1
            state.message.append("")
            return
        state.blank = 0
        if state.chars + len(text) > MAX_MESSAGE_CHARS:
            return  # read as part of the event, not kept: the rules see a bounded text
        state.chars += len(text)
        state.message.append(text)

    def _close(self, key: str) -> Event:
        state = self._open.pop(key)
        if self._raw_owner == key:
            self._raw_owner = None
        return self._event_from(key, state)

    def _event_from(self, key: str, state: _Open) -> Event:
        while state.message and not state.message[-1].strip():
            state.message.pop()
        kind = state.kind
        line = state.line
        _use_the_raise_line(state)
        message = "\n".join(state.message)
        event = Event(
            kind=kind,
            process=key,
            first_line=line.number,
            last_line=state.last,
            message=message,
            exception=state.exception,
            frames=tuple(state.frames),
            level=line.level,
            source=line.source,
            role=line.role,
            ranks=line.ranks,
            repeated=line.repeated,
            header=state.header,
            headless=state.headless,
            exception_line=state.exception_line,
        )
        return event


def _repr_before_traceback(state: _Open, text: str) -> bool:
    """Whether an open record is an exception's repr and ``text`` starts its traceback."""
    if state.kind != "record" or text.strip() != TRACEBACK_HEADER:
        return False
    lines = [part for part in state.message if part.strip()]
    return len(lines) == 1 and _REPR.match(lines[0].strip()) is not None


def _use_the_raise_line(state: _Open) -> None:
    """A traceback whose exception line was cut (``NotImplementedEr``) or never pasted takes
    its type and message from the last frame's ``raise Type("message")`` source line (a bare
    ``AssertionError`` takes its ``assert`` statement as its message), else
    from the record that introduced it when that record is the exception's ``repr``
    (vLLM V0 logs ``OutOfMemoryError('CUDA out of memory. …')`` above the traceback)."""
    if state.kind != "traceback":
        return
    if state.raised is None:
        introduced = _REPR.match(state.header or "")
        if introduced is None or state.exception is not None or any(
                part.strip() for part in state.message):
            return
        state.raised = (introduced["type"], introduced["msg"])
    kind, text = state.raised
    shown = state.exception
    if any(part.strip() for part in state.message if part.strip() != (shown or "")):
        return  # the message is there: it wins over the source
    if shown is not None and not (kind.endswith(shown) or kind.rpartition(".")[2].startswith(
            shown.rpartition(".")[2])):
        return  # another exception than the one raised there
    state.exception = kind
    state.message = [text]


def _fault_frame(state: _Open, text: str) -> bool:
    """Read a line of faulthandler's dump into a fatal-error record: a thread header, or a
    frame of the current thread (kept innermost last, as a traceback orders them)."""
    thread = _FAULT_THREAD.match(text.strip())
    if thread is not None:
        state.fault_thread = thread["current"]
        state.blank = 0
        return True
    if state.fault_thread is None:
        return False
    frame = _FRAME.match(text)
    if frame is None:
        return False
    if state.fault_thread == "Current thread" and len(state.frames) < MAX_FRAMES:
        state.frames.insert(0, _frame(frame, state.last))
    return True


def _frame(match: re.Match[str], number: int) -> Frame:
    return Frame(
        path=normalize_path(match["path"]),
        line=int(match["line"]),
        function=(match["func"] or "").strip(),
        number=number,
    )
