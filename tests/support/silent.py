"""Servers that misbehave at the socket level, on 127.0.0.1, for deadline tests.

:func:`silent_server` accepts every connection and never sends a byte (the server that
held ``gate`` for six minutes); :func:`trickle_server` sends HTTP headers and then one
body byte every ``every_s`` seconds, forever. Both count the connections they accepted
(a retry would show as a second one) and close everything when the test ends.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field


@dataclass
class Listener:
    """A listening socket's address and what it accepted."""

    host: str
    port: int
    accepted: int = 0
    connections: list[socket.socket] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://{self.host}:{self.port}"

    @property
    def address(self) -> str:
        """``127.0.0.1:PORT``."""
        return f"{self.host}:{self.port}"


def _drain(connection: socket.socket, stop: threading.Event) -> None:
    """Read the request (so the client's send completes) until the test ends."""
    connection.settimeout(0.2)
    while not stop.is_set():
        try:
            if not connection.recv(65536):
                return
        except TimeoutError:
            continue
        except OSError:
            return


@contextlib.contextmanager
def _listening(behave: str, every_s: float = 0.3) -> Iterator[Listener]:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    server.settimeout(0.2)
    listener = Listener("127.0.0.1", server.getsockname()[1])

    def trickle(connection: socket.socket) -> None:
        with contextlib.suppress(OSError):
            connection.recv(65536)
            connection.sendall(b"HTTP/1.1 206 Partial Content\r\nContent-Length: 100000000\r\n"
                               b"Content-Range: bytes 0-99999999/100000000\r\n"
                               b"Content-Type: application/octet-stream\r\n\r\n")
            while not listener.stop.wait(every_s):
                connection.sendall(b"P")

    def accept() -> None:
        while not listener.stop.is_set():
            try:
                connection, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            listener.accepted += 1
            listener.connections.append(connection)
            target = trickle if behave == "trickle" else _drain
            args = (connection,) if behave == "trickle" else (connection, listener.stop)
            threading.Thread(target=target, args=args, daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield listener
    finally:
        listener.stop.set()
        thread.join(timeout=2)
        server.close()
        for connection in listener.connections:
            with contextlib.suppress(OSError):
                connection.close()


def silent_server() -> contextlib.AbstractContextManager[Listener]:
    """A server that accepts connections and never answers."""
    return _listening("silent")


def trickle_server(every_s: float = 0.3) -> contextlib.AbstractContextManager[Listener]:
    """A server that answers 206 and then sends one body byte every ``every_s`` seconds."""
    return _listening("trickle", every_s)


def elapsed(since: float) -> float:
    """Seconds since a ``time.monotonic()`` value."""
    return time.monotonic() - since
