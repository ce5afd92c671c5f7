"""HTTP/1.1 responses, incrementally: the status line and headers, then the body's framing.

Pure parsers for the benchmark's streaming client (RFC 9112): :func:`parse_head` reads a
response head (status line and header fields, up to the blank line); :class:`BodyReader`
turns the bytes after it into body bytes, whatever the framing — ``Transfer-Encoding:
chunked`` (sizes in hex, extensions ignored, trailers skipped), ``Content-Length``, or until
the connection closes. Pieces may split anywhere, even inside a chunk-size line.
"""

from __future__ import annotations

from dataclasses import dataclass

from servewise.errors import FormatError

#: Longest response head accepted (status line and all header fields).
MAX_HEAD = 64 * 1024
#: Longest chunk-size line accepted (the size, any extensions, CRLF).
MAX_SIZE_LINE = 4096


@dataclass(frozen=True, slots=True)
class ResponseHead:
    """A response's status line and header fields (names lower-cased)."""

    status: int
    reason: str
    headers: dict[str, str]
    """Repeated fields are joined with ``", "``."""

    @property
    def content_type(self) -> str:
        """The media type, lower-cased, without parameters."""
        return self.headers.get("content-type", "").split(";")[0].strip().lower()

    @property
    def keep_alive(self) -> bool:
        """Whether the connection stays open after this response (HTTP/1.1 default)."""
        return "close" not in self.headers.get("connection", "").lower()


def parse_head(data: bytes) -> ResponseHead:
    """Read a head that ends with an empty line (the CRLF CRLF itself may be included)."""
    text = data.decode("latin-1")
    lines = text.split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
        raise FormatError("HTTP response", offset=0, expected="a status line like "
                          "'HTTP/1.1 200 OK'", found=repr(lines[0][:80]),
                          hint="the URL does not lead to an HTTP/1.1 server")
    headers: dict[str, str] = {}
    offset = len(lines[0]) + 2
    for line in lines[1:]:
        if line:
            name, colon, value = line.partition(":")
            if not colon or not name or name != name.strip():
                raise FormatError("HTTP response", offset=offset, expected="a header field "
                                  "'Name: value'", found=repr(line[:80]))
            key = name.lower()
            value = value.strip()
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        offset += len(line) + 2
    return ResponseHead(int(parts[1]), parts[2] if len(parts) > 2 else "", headers)


class BodyReader:
    """Body bytes out of the bytes after the head, by the response's framing."""

    __slots__ = ("_left", "_mode", "_pending", "_state", "done")

    def __init__(self, head: ResponseHead, *, request_was_head: bool = False) -> None:
        self.done = False
        """Whether the body is complete (what follows belongs to the next response)."""
        self._pending = b""
        self._left = 0
        self._state = "size"
        encoding = head.headers.get("transfer-encoding", "").lower()
        if request_was_head or head.status in (204, 304) or 100 <= head.status < 200:
            self._mode = "none"
            self.done = True
        elif "chunked" in encoding:
            self._mode = "chunked"
        elif "content-length" in head.headers:
            value = head.headers["content-length"]
            if not value.isdigit():
                raise FormatError("HTTP response", offset=0, expected="a decimal "
                                  "Content-Length", found=repr(value))
            self._mode = "length"
            self._left = int(value)
            self.done = self._left == 0
        else:
            self._mode = "close"

    @property
    def until_close(self) -> bool:
        """Whether the body ends only when the connection closes."""
        return self._mode == "close"

    def feed(self, data: bytes) -> list[bytes]:
        """Body pieces from the next bytes (pieces past the end of the body are an error)."""
        if self.done:
            if data:
                raise FormatError("HTTP response", offset=0, expected="nothing after the body",
                                  found=f"{len(data)} more bytes")
            return []
        if self._mode == "close":
            return [data] if data else []
        if self._mode == "length":
            if len(data) > self._left:
                raise FormatError("HTTP response", offset=self._left,
                                  expected="a body of Content-Length bytes",
                                  found=f"{len(data) - self._left} bytes more")
            self._left -= len(data)
            self.done = self._left == 0
            return [data] if data else []
        return self._chunked(data)

    def _chunked(self, data: bytes) -> list[bytes]:
        out: list[bytes] = []
        buffer = self._pending + data if self._pending else data
        self._pending = b""
        position = 0
        end = len(buffer)
        while position < end:
            state = self._state
            if state == "data":
                take = min(self._left, end - position)
                out.append(buffer[position: position + take])
                position += take
                self._left -= take
                if self._left == 0:
                    self._state = "data-crlf"
                continue
            line_end = buffer.find(b"\r\n", position)
            if line_end < 0:
                rest = buffer[position:]
                if len(rest) > MAX_SIZE_LINE:
                    raise FormatError("chunked body", offset=position, expected="a CRLF within "
                                      f"{MAX_SIZE_LINE} bytes", found=repr(rest[:40]))
                self._pending = rest
                break
            line = buffer[position:line_end]
            position = line_end + 2
            if state == "data-crlf":
                if line:
                    raise FormatError("chunked body", offset=position, expected="CRLF after "
                                      "chunk data", found=repr(line[:40]))
                self._state = "size"
            elif state == "size":
                try:  # a bare size is the usual line; extensions (";name=value") are rare
                    size = int(line, 16) if b";" not in line else int(
                        line.split(b";", 1)[0].strip(), 16)
                except ValueError:
                    raise FormatError("chunked body", offset=position, expected="a hex chunk "
                                      "size", found=repr(line[:40])) from None
                stop = position + size
                if size == 0:
                    self._state = "trailer"
                elif buffer[stop: stop + 2] == b"\r\n":  # the whole chunk is here: take it
                    out.append(buffer[position:stop])
                    position = stop + 2
                else:
                    self._left = size
                    self._state = "data"
            elif not line:  # the empty line after the trailers ends the body
                self.done = True
                if position < end:
                    raise FormatError("HTTP response", offset=position,
                                      expected="nothing after the body",
                                      found=f"{end - position} more bytes")
                break
        return out
