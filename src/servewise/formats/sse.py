"""Server-sent events: the WHATWG ``text/event-stream`` interpretation, incremental.

A pure decoder (no I/O): feed it the bytes of a response body in whatever pieces the
network delivered, get back the events those bytes completed. It follows the HTML
standard's "Interpreting an event stream" (html.spec.whatwg.org, §9.2.6):

* the stream is UTF-8 (invalid bytes become U+FFFD), and one leading byte-order mark is
  dropped;
* lines end with CRLF, LF or CR — a CR at the end of one piece and an LF at the start of
  the next are one line end;
* an empty line dispatches the event; a line starting with ``:`` is a comment;
* ``field: value`` (one space after the colon is dropped), or a bare ``field`` (empty value);
* ``data`` appends the value and a LF to the data buffer, ``event`` sets the type, ``id``
  sets the last event id unless the value holds U+0000, ``retry`` sets the reconnection
  time when the value is ASCII digits only; other fields are ignored;
* at dispatch an empty data buffer dispatches nothing; otherwise one trailing LF is removed
  and the event's id is the last event id (which persists from event to event);
* at the end of the stream an event not closed by an empty line is discarded.
"""

from __future__ import annotations

from dataclasses import dataclass

from servewise.errors import FormatError

_BOM = b"\xef\xbb\xbf"
#: The longest line a decoder holds by default (an OpenAI chunk is under 1 kB).
MAX_LINE_BYTES = 16 * 2**20
#: The most data one event may gather by default.
MAX_EVENT_BYTES = 16 * 2**20


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One dispatched event."""

    data: str
    """The data lines joined with LF (without the final LF)."""
    type: str = "message"
    """The ``event`` field, or ``message`` when none was given."""
    id: str = ""
    """The last event id at dispatch time (it carries over from earlier events)."""


class SseDecoder:
    """Incremental event-stream decoder: :meth:`feed` bytes, take the events they complete.

    Linear in the bytes fed, however they are cut: a line that arrives in many pieces is
    kept as a list and joined once, when its end comes. A line longer than ``max_line``
    bytes, or an event whose data grows past ``max_event`` bytes, is a :class:`FormatError`
    (a server cannot make the client hold an unbounded event).
    """

    __slots__ = ("_bom_checked", "_data", "_data_size", "_event_type", "_pending",
                 "_pending_size", "_skip_lf", "last_event_id", "max_event", "max_line",
                 "retry_ms")

    def __init__(self, *, max_line: int = MAX_LINE_BYTES,
                 max_event: int = MAX_EVENT_BYTES) -> None:
        self._pending: list[bytes] = []
        self._pending_size = 0
        self._bom_checked = False
        self._skip_lf = False
        self._data: list[str] = []
        self._data_size = 0
        self._event_type = ""
        self.max_line = max_line
        self.max_event = max_event
        self.last_event_id = ""
        """The last event id buffer (what the client would send as ``Last-Event-ID``)."""
        self.retry_ms: int | None = None
        """The reconnection time the stream asked for, in milliseconds, if it did."""

    def feed(self, chunk: bytes) -> list[SseEvent]:
        """Consume the next piece of the body; return the events it completed, in order."""
        if not self._bom_checked:
            head = b"".join(self._pending) + chunk
            if len(head) < len(_BOM) and _BOM.startswith(head):
                self._pending = [head]
                return []
            self._bom_checked = True
            self._pending, self._pending_size = [], 0
            chunk = head[len(_BOM):] if head.startswith(_BOM) else head
        if self._skip_lf:
            self._skip_lf = False
            if chunk[:1] == b"\n":
                chunk = chunk[1:]
        if (not self._pending and not self._data and not self._event_type
                and chunk[:5] == b"data:" and chunk[-2:] == b"\n\n"
                and chunk.count(b"\n") == 2 and b"\r" not in chunk
                and len(chunk) <= self.max_line):
            # The common piece: exactly one event of one data line (what OpenAI-style
            # servers send per write). The same event the general path below gives.
            value = chunk[6:-2] if chunk[5:6] == b" " else chunk[5:-2]
            return [SseEvent(value.decode("utf-8", "replace"), "message", self.last_event_id)]
        cut = max(chunk.rfind(b"\n"), chunk.rfind(b"\r"))
        if cut < 0:  # no line ends here: keep the piece, join nothing
            self._keep(chunk)
            return []
        buffer = b"".join((*self._pending, chunk)) if self._pending else chunk
        cut += len(buffer) - len(chunk)
        self._pending, self._pending_size = [], 0
        if cut + 1 < len(buffer):
            self._keep(buffer[cut + 1:])
        if buffer[cut] == 0x0D:  # a CR that may be the first half of a CRLF
            self._skip_lf = True
        events: list[SseEvent] = []
        for line in buffer[: cut + 1].splitlines():
            if len(line) > self.max_line:
                raise self._too_long("line", len(line), self.max_line)
            if not line:
                event = self._dispatch()
                if event is not None:
                    events.append(event)
            else:
                self._line(line)
        return events

    def _keep(self, piece: bytes) -> None:
        self._pending.append(piece)
        self._pending_size += len(piece)
        if self._pending_size > self.max_line:
            raise self._too_long("line", self._pending_size, self.max_line)

    @staticmethod
    def _too_long(what: str, size: int, limit: int) -> FormatError:
        return FormatError("server-sent event", offset=0,
                           expected=f"a {what} of at most {limit} bytes",
                           found=f"{size} bytes or more",
                           hint="the server sent one huge event; servewise does not hold it")

    def close(self) -> None:
        """The stream ended: whatever was not closed by an empty line is discarded."""
        self._pending, self._pending_size = [], 0
        self._data, self._data_size = [], 0
        self._event_type = ""
        self._skip_lf = False

    def _line(self, line: bytes) -> None:
        colon = line.find(b":")
        if colon == 0:
            return  # a comment
        if colon < 0:
            name, value = line, b""
        else:
            name = line[:colon]
            value = line[colon + 2:] if line[colon + 1: colon + 2] == b" " else line[colon + 1:]
        if name == b"data":
            self._data_size += len(value) + 1
            if self._data_size > self.max_event:
                raise self._too_long("event", self._data_size, self.max_event)
            self._data.append(value.decode("utf-8", "replace"))
        elif name == b"event":
            self._event_type = value.decode("utf-8", "replace")
        elif name == b"id":
            if b"\0" not in value:
                self.last_event_id = value.decode("utf-8", "replace")
        elif name == b"retry" and value.isdigit():
            self.retry_ms = int(value)

    def _dispatch(self) -> SseEvent | None:
        data = self._data
        event_type = self._event_type or "message"
        self._data, self._data_size = [], 0
        self._event_type = ""
        if not data:
            return None
        return SseEvent("\n".join(data), event_type, self.last_event_id)
