"""A small HTTP/1.1 client on asyncio protocols, built for timing streamed answers.

Why not aiohttp or httpx: aiohttp reads streams fast, but a request costs it about 125 µs of
Python and httpx about 4.5 ms (``benchmarks/bench_http_clients.py``; 57 µs here, SSE and JSON
work included), so when 256 streams end and restart together the client is busy for tens of
milliseconds and every first token that arrives meanwhile is timed late. Here a request is
one pre-built ``bytes`` written to a kept-alive connection, and the answer is parsed in the
protocol's ``data_received`` callback, which timestamps each network read once and hands
the body straight to a :class:`BodySink` — no stream reader and no task switch per chunk.

What it does: ``http`` and ``https`` (the standard library's TLS), a pool of keep-alive
connections with an optional limit, a connect timeout, a read timeout (the longest silence
allowed, headers and body alike, enforced by one watchdog for all requests), one retry on a
fresh connection when a reused one turns out closed before any answer, and failures as
:class:`HttpFailure` with the benchmark's error kinds. The response head and body framing
are parsed by :mod:`servewise.formats.http1`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import ssl
import struct
import sys
from time import perf_counter, perf_counter_ns, time_ns
from typing import Any, Protocol
from urllib.parse import urlsplit

from servewise import __version__
from servewise.errors import FormatError, UsageError
from servewise.formats.http1 import MAX_HEAD, BodyReader, ResponseHead, parse_head

#: How often the watchdog looks for silent requests, at most.
WATCHDOG_TICK_S = 0.1
#: Linux's ``SO_TIMESTAMPNS``: each read also returns when the kernel received its data.
SO_TIMESTAMPNS: int | None = getattr(socket, "SO_TIMESTAMPNS",
                                     35 if sys.platform == "linux" else None)
_STAMP = struct.Struct("@qq")  # struct timespec
_STAMP_SPACE = socket.CMSG_SPACE(_STAMP.size)
#: Bytes asked for per read. Below glibc's 128 KiB mmap threshold: asyncio's own 256 KiB
#: reads map and unmap a fresh buffer each time, ~18 µs of system time a read here.
_READ_SIZE = 2**16
#: A kernel time further back than this from the read is not trusted (a clock step).
_STAMP_WINDOW_NS = 1_000_000_000


class ArrivalStamps:
    """How the reads of a pool were timed: by the kernel's receive time or at the read."""

    __slots__ = ("kernel", "read")

    def __init__(self) -> None:
        self.kernel = 0
        self.read = 0

    def to_dict(self) -> dict[str, int]:
        """JSON-ready counts of reads."""
        return {"kernel": self.kernel, "read": self.read}


class HttpFailure(Exception):
    """A request that failed below HTTP semantics: connecting, timing out, breaking off."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.sent: float | None = None
        """When the request was written, if it was."""


class BodySink(Protocol):
    """Receives one answer as it arrives."""

    def head(self, head: ResponseHead, now: float) -> None:
        """The status line and headers arrived at ``now``."""

    def data(self, piece: bytes, now: float) -> bool:
        """Body bytes that arrived at ``now``; return False to stop reading (and close)."""
        ...


class _Exchange:
    """One request on one connection, from write to the end of the answer."""

    __slots__ = ("body", "buffer", "future", "got_bytes", "head", "last", "sent", "sink",
                 "stopped")

    def __init__(self, sink: BodySink, future: asyncio.Future[None]) -> None:
        self.sink = sink
        self.future = future
        self.buffer = b""
        self.head: ResponseHead | None = None
        self.body: BodyReader | None = None
        self.sent = 0.0
        self.last = 0.0
        self.got_bytes = False
        self.stopped = False
        """The sink stopped early: the connection cannot be reused."""

    def fail(self, failure: BaseException) -> None:
        if not self.future.done():
            self.future.set_exception(failure)

    def feed(self, data: bytes, now: float) -> None:
        """Bytes from the connection; completes the future at the end of the body."""
        self.last = now
        self.got_bytes = True
        if self.body is None:
            self.buffer += data
            cut = self.buffer.find(b"\r\n\r\n")
            if cut < 0:
                if len(self.buffer) > MAX_HEAD:
                    raise FormatError("HTTP response", offset=0, expected=f"a head within "
                                      f"{MAX_HEAD} bytes", found=f"{len(self.buffer)} bytes")
                return
            head = parse_head(self.buffer[:cut])
            data = self.buffer[cut + 4:]
            self.buffer = b""
            if 100 <= head.status < 200:  # an interim answer: the real one follows
                if data:
                    self.feed(data, now)
                return
            self.head = head
            self.body = BodyReader(head)
            self.sink.head(head, now)
        for piece in self.body.feed(data):
            if not self.sink.data(piece, now):
                self.stopped = True
                break
        if (self.stopped or self.body.done) and not self.future.done():
            self.future.set_result(None)

    def lost(self, error: BaseException | None) -> None:
        """The connection closed: the end of a read-until-close body, or a failure."""
        if self.future.done():
            return
        if self.body is not None and self.body.until_close and error is None:
            self.future.set_result(None)
            return
        reason = f": {error}" if error else ""
        self.fail(HttpFailure("disconnect", "the connection closed before the answer ended"
                              + reason))


class _Connection(asyncio.Protocol):
    """A connection to the server; carries one exchange at a time.

    On plain TCP under Linux the connection reads its socket itself with ``recvmsg`` and
    ``SO_TIMESTAMPNS``, so each read is timed when the kernel received it rather than when
    the event loop got round to it: with hundreds of streams ready at once, the last socket
    of a loop pass is read milliseconds after its data arrived. The reads go through a
    duplicate of the socket's descriptor while the transport's own reading is paused;
    writes and closing stay with the transport. TLS connections (and systems without the
    option) are timed at the read.
    """

    def __init__(self, stamps: ArrivalStamps, kernel_stamps: bool) -> None:
        self.transport: asyncio.Transport | None = None
        self.exchange: _Exchange | None = None
        self.closed = False
        self.used = False
        self._stamps = stamps
        self._kernel_stamps = kernel_stamps
        self._sock: socket.socket | None = None
        self._error: Exception | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        if self._kernel_stamps and SO_TIMESTAMPNS is not None:
            self._read_with_stamps(transport, SO_TIMESTAMPNS)

    def _read_with_stamps(self, transport: asyncio.Transport, option: int) -> None:
        raw = transport.get_extra_info("socket")
        if raw is None:
            return
        try:
            sock = socket.socket(fileno=os.dup(raw.fileno()))
        except OSError:
            return
        try:
            sock.setsockopt(socket.SOL_SOCKET, option, 1)
        except OSError:
            sock.close()
            return
        sock.setblocking(False)
        self._sock = sock
        transport.pause_reading()  # before the transport ever reads: it adds its reader later
        asyncio.get_running_loop().add_reader(sock.fileno(), self._readable)

    def _readable(self) -> None:
        sock = self._sock
        if sock is None:
            return
        try:
            data, ancillary, _, _ = sock.recvmsg(_READ_SIZE, _STAMP_SPACE)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as error:
            self._error = error
            self._stop_reading()
            self.abort()
            return
        if not data:  # the server closed its side
            self._stop_reading()
            if self.transport is not None:
                self.transport.close()
            return
        read_ns = perf_counter_ns()
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                seconds, nanoseconds = _STAMP.unpack_from(payload)
                # The kernel's real-time stamp on the monotonic clock perf_counter() reads.
                stamp_ns = seconds * 1_000_000_000 + nanoseconds - time_ns() + read_ns
                if read_ns - _STAMP_WINDOW_NS < stamp_ns <= read_ns:
                    self._stamps.kernel += 1
                    self._deliver(data, stamp_ns / 1e9)
                    return
        self._stamps.read += 1
        self._deliver(data, read_ns / 1e9)

    def _stop_reading(self) -> None:
        sock, self._sock = self._sock, None
        if sock is not None:
            with contextlib.suppress(Exception):
                asyncio.get_running_loop().remove_reader(sock.fileno())
            sock.close()

    def data_received(self, data: bytes) -> None:
        self._stamps.read += 1
        self._deliver(data, perf_counter())

    def _deliver(self, data: bytes, now: float) -> None:
        exchange = self.exchange
        if exchange is None:  # bytes nobody asked for: the connection is not usable
            self.abort()
            return
        try:
            exchange.feed(data, now)
        except FormatError as error:
            exchange.fail(error)
            self.abort()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._stop_reading()
        if self.exchange is not None:
            self.exchange.lost(exc or self._error)

    def send(self, exchange: _Exchange, request: bytes) -> None:
        assert self.transport is not None
        self.exchange = exchange
        self.used = True
        # Stamped just before the write: the server cannot have the request any earlier.
        exchange.sent = exchange.last = perf_counter()
        self.transport.write(request)

    def abort(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.abort()


class HttpPool:
    """Keep-alive connections to one server; use as ``async with``."""

    def __init__(self, url: str, *, connect_timeout_s: float = 10.0,
                 read_timeout_s: float = 600.0, limit: int = 0,
                 headers: dict[str, str] | None = None) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise UsageError(f"not an HTTP URL: {url!r}",
                             hint="give the server's address, e.g. http://127.0.0.1:8000")
        self.host = parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.tls = parts.scheme == "https"
        self.connect_timeout_s = connect_timeout_s
        self.read_timeout_s = read_timeout_s
        host = f"[{self.host}]" if ":" in self.host else self.host
        default_port = self.port == (443 if self.tls else 80)
        fields = {"Host": host if default_port else f"{host}:{self.port}",
                  "User-Agent": f"servewise/{__version__}", **(headers or {})}
        self._fixed = "".join(f"{k}: {v}\r\n" for k, v in fields.items())
        self._idle: list[_Connection] = []
        self._open: set[_Connection] = set()
        self._active: set[_Exchange] = set()
        self._slots = asyncio.Semaphore(limit) if limit > 0 else None
        self._watchdog: asyncio.Task[None] | None = None
        self._ssl: ssl.SSLContext | None = ssl.create_default_context() if self.tls else None
        self.stamps = ArrivalStamps()
        """How this pool's reads were timed."""

    async def __aenter__(self) -> HttpPool:
        self._watchdog = asyncio.create_task(self._watch())
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._watchdog is not None:
            self._watchdog.cancel()
            # wait for it without taking its CancelledError: a cancel of this task still ends it
            await asyncio.wait([self._watchdog])
            if not self._watchdog.cancelled():
                self._watchdog.result()  # it failed: say so
        for connection in list(self._open):
            if connection.transport is not None:
                connection.transport.close()
        self._open.clear()
        self._idle.clear()

    def build(self, method: str, path: str, body: bytes, headers: str = "") -> bytes:
        """The request's bytes: request line, fixed and extra header fields, body."""
        return (f"{method} {path} HTTP/1.1\r\n{self._fixed}{headers}"
                f"Content-Length: {len(body)}\r\n\r\n").encode("latin-1") + body

    async def _connect(self) -> _Connection:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(self.connect_timeout_s):  # not wait_for (bench.interrupt)
                _, connection = await loop.create_connection(
                    lambda: _Connection(self.stamps, not self.tls), self.host, self.port,
                    ssl=self._ssl)
        except TimeoutError:
            raise HttpFailure("connect_timeout", f"no connection to {self.host}:{self.port} "
                              f"within {self.connect_timeout_s:g} s") from None
        except OSError as error:
            raise HttpFailure("connect", f"cannot connect to {self.host}:{self.port}: "
                              f"{error}") from None
        self._open.add(connection)
        return connection

    async def exchange(self, request: bytes, sink: BodySink) -> tuple[float, ResponseHead]:
        """Send ``request`` and feed the answer to ``sink``; return (sent time, head).

        Raises :class:`HttpFailure` (connect, connect_timeout, read_timeout, disconnect) or
        :class:`FormatError` (not HTTP/1.1).
        """
        if self._slots is not None:
            async with self._slots:
                return await self._exchange(request, sink)
        return await self._exchange(request, sink)

    async def _exchange(self, request: bytes, sink: BodySink) -> tuple[float, ResponseHead]:
        for attempt in (0, 1):
            connection = None
            while self._idle:
                candidate = self._idle.pop()
                if not candidate.closed:
                    connection = candidate
                    break
            if connection is None:
                connection = await self._connect()
            reused = connection.used
            exchange = _Exchange(sink, asyncio.get_running_loop().create_future())
            connection.send(exchange, request)
            self._active.add(exchange)
            try:
                await exchange.future
            except HttpFailure as failure:
                failure.sent = exchange.sent
                self._forget(connection)
                if (attempt == 0 and reused and failure.kind == "disconnect"
                        and not exchange.got_bytes):
                    continue  # a kept-alive connection the server had closed meanwhile
                raise
            except BaseException:
                self._forget(connection)
                raise
            finally:
                self._active.discard(exchange)
            assert exchange.head is not None
            connection.exchange = None
            body_done = exchange.body is not None and exchange.body.done
            if exchange.stopped or not body_done or not exchange.head.keep_alive:
                self._forget(connection)
            else:
                self._idle.append(connection)
            return exchange.sent, exchange.head
        raise AssertionError("unreachable")

    async def call_json(self, method: str, path: str,
                        body: Any | None = None) -> tuple[int, Any]:
        """A small JSON call (``/tokenize``, ``/v1/models``): ``(status, parsed body)``.

        The body is None when the answer is not JSON. Raises what :meth:`exchange` raises.
        """
        data = b"" if body is None else json.dumps(body).encode()
        sink = CollectSink()
        await self.exchange(self.build(method, path, data), sink)
        try:
            return sink.status, json.loads(sink.body)
        except ValueError:
            return sink.status, None

    def _forget(self, connection: _Connection) -> None:
        connection.exchange = None
        if not connection.closed:
            connection.abort()
        self._open.discard(connection)

    async def _watch(self) -> None:
        tick = min(WATCHDOG_TICK_S, self.read_timeout_s / 4)
        while True:
            await asyncio.sleep(tick)
            now = perf_counter()
            for exchange in list(self._active):
                if now - exchange.last > self.read_timeout_s:
                    exchange.fail(HttpFailure("read_timeout", f"nothing read for "
                                              f"{self.read_timeout_s:g} s"))


class CollectSink:
    """Keeps a whole (small) body: for JSON calls such as ``/tokenize``."""

    def __init__(self, limit: int = 64 * 2**20) -> None:
        self.limit = limit
        self.parts: list[bytes] = []
        self.size = 0
        self.status = 0

    def head(self, head: ResponseHead, now: float) -> None:
        """Note the status."""
        self.status = head.status

    def data(self, piece: bytes, now: float) -> bool:
        """Keep the piece, up to the limit."""
        self.parts.append(piece)
        self.size += len(piece)
        return self.size <= self.limit

    @property
    def body(self) -> bytes:
        """Everything received."""
        return b"".join(self.parts)
