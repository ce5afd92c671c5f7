"""The hand-written HTTP/1.1 client against tiny scripted servers on 127.0.0.1."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Iterator

import pytest

from servewise.bench.http import SO_TIMESTAMPNS, CollectSink, HttpFailure, HttpPool

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter, int], Awaitable[None]]


async def read_request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
    return head + await reader.readexactly(length)


def serve(handler: Handler, client: Callable[[HttpPool], Awaitable[object]]) -> tuple[object,
                                                                                      int]:
    """Run ``handler`` per connection and ``client`` against it; return its result and the
    number of connections the server saw."""
    connections = 0

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        try:
            await handler(reader, writer, connections)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def main() -> object:
        server = await asyncio.start_server(on_connect, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        async with server, HttpPool(f"http://127.0.0.1:{port}", read_timeout_s=0.5) as pool:
            return await client(pool)

    result = asyncio.run(main())
    return result, connections


OK = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"


async def twice(pool: HttpPool) -> list[int]:
    first = await pool.call_json("POST", "/x", {"a": 1})
    second = await pool.call_json("POST", "/x", {"a": 2})
    return [first[0], second[0]]


def test_keep_alive_reuses_the_connection() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                      _: int) -> None:
        while True:
            request = await read_request(reader)
            assert request.startswith(b"POST /x HTTP/1.1\r\nHost: 127.0.0.1:")
            writer.write(OK)

    result, connections = serve(handler, twice)
    assert result == [200, 200] and connections == 1


def test_a_stale_kept_alive_connection_is_retried_once() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                      _: int) -> None:
        await read_request(reader)
        writer.write(OK)
        await writer.drain()
        # close without saying so: the client's next request finds it closed

    result, connections = serve(handler, twice)
    assert result == [200, 200] and connections == 2


def test_connection_close_and_close_delimited_bodies() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                      _: int) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n"
                     b"Connection: close\r\n\r\n{\"whole\": ")
        await writer.drain()
        writer.write(b"true}")

    result, connections = serve(handler, twice)
    assert result == [200, 200] and connections == 2


def test_a_body_cut_short_is_a_disconnect() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                      _: int) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")

    async def client(pool: HttpPool) -> str:
        with pytest.raises(HttpFailure) as info:
            await pool.exchange(pool.build("POST", "/x", b"{}"), CollectSink())
        return info.value.kind

    assert serve(handler, client)[0] == "disconnect"


def test_silence_after_the_head_is_a_read_timeout() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                      _: int) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n")
        await asyncio.sleep(5)

    async def client(pool: HttpPool) -> tuple[str, bytes]:
        sink = CollectSink()
        with pytest.raises(HttpFailure) as info:
            await pool.exchange(pool.build("POST", "/x", b"{}"), sink)
        return info.value.kind, sink.body

    assert serve(handler, client)[0] == ("read_timeout", b"abc")


def test_not_http_is_a_format_error() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                      _: int) -> None:
        await read_request(reader)
        writer.write(b"SSH-2.0-OpenSSH_9.6\r\n\r\n")

    async def client(pool: HttpPool) -> str:
        try:
            await pool.call_json("GET", "/v1/models")
        except Exception as error:  # the caller turns this into a SourceError
            return type(error).__name__
        return "no error"

    assert serve(handler, client)[0] == "FormatError"


class _StampSink(CollectSink):
    def __init__(self) -> None:
        super().__init__()
        self.times: list[float] = []

    def data(self, piece: bytes, now: float) -> bool:
        self.times.append(now)
        return super().data(piece, now)


def _loopback_pair() -> tuple[socket.socket, socket.socket]:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        client = socket.create_connection(listener.getsockname())
        server, _ = listener.accept()
    return client, server


@pytest.fixture
def kernel_stamps_on() -> Iterator[None]:
    """Linux turns receive stamping on for the whole system a moment after the first socket
    asks for it (deferred work), and off again after the last one closes: a read in that
    moment carries no stamp and is timed at the read, as designed. Hold one stamped socket
    open, and wait until its reads are stamped, so the test sees the steady state."""
    assert SO_TIMESTAMPNS is not None
    client, server = _loopback_pair()
    try:
        client.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        deadline = time.monotonic() + 2.0
        while True:
            server.sendall(b"p")
            _, ancillary, _, _ = client.recvmsg(16, socket.CMSG_SPACE(16))
            if ancillary:
                break
            if time.monotonic() > deadline:
                pytest.skip("this kernel delivers no SO_TIMESTAMPNS stamps on loopback reads")
            time.sleep(0.005)
        yield
    finally:
        client.close()
        server.close()


@pytest.mark.skipif(SO_TIMESTAMPNS is None, reason="no SO_TIMESTAMPNS on this system")
@pytest.mark.usefixtures("kernel_stamps_on")
def test_reads_are_timed_when_the_kernel_received_them() -> None:
    """A loop busy elsewhere when the answer arrives does not make the answer late."""
    listener = socket.create_server(("127.0.0.1", 0))
    sending: list[float] = []
    written: list[float] = []

    def server() -> None:
        connection, _ = listener.accept()
        with connection:
            for _ in range(2):
                request = b""
                while b"\r\n\r\n" not in request:
                    request += connection.recv(65536)
                sending.append(time.perf_counter())
                connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
                written.append(time.perf_counter())

    thread = threading.Thread(target=server, daemon=True)
    thread.start()

    async def main() -> tuple[float, dict[str, int], dict[str, int]]:
        port = listener.getsockname()[1]
        async with HttpPool(f"http://127.0.0.1:{port}") as pool:
            await pool.call_json("GET", "/warm")  # the connection is open and kept
            before = pool.stamps.to_dict()
            sink = _StampSink()
            # The write happens before the exchange first waits; the loop then sleeps
            # through the answer's arrival and reads it 0.3 s later.
            asyncio.get_running_loop().call_soon(time.sleep, 0.3)
            await pool.exchange(pool.build("GET", "/x", b""), sink)
            return sink.times[0], before, pool.stamps.to_dict()

    arrived, before, after = asyncio.run(main())
    thread.join(5)
    listener.close()
    assert before["kernel"] + before["read"] == 1  # the warm-up answer came in one read
    assert after == {"kernel": before["kernel"] + 1, "read": before["read"]}
    # Stamped while the answer was being sent, not at the read 0.3 s later.
    assert sending[1] - 0.001 < arrived < written[1] + 0.1
