"""A hostile streaming server for the hostile-input suite: it answers any request with the
server-sent events a generator gives, on 127.0.0.1, from a daemon thread.

``serve(events)`` yields the server's base URL; ``events()`` is called once per request and
its byte strings are written as they come (a generator that never ends streams forever).
The answer has no length: it ends when the generator does (or the client goes away).
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable, Iterable, Iterator

HEAD = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")


def _answer(connection: socket.socket, events: Callable[[], Iterable[bytes]]) -> None:
    with connection:
        data = b""
        while b"\r\n\r\n" not in data:
            piece = connection.recv(65536)
            if not piece:
                return
            data += piece
        head, _, body = data.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n"):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        while len(body) < length:
            piece = connection.recv(65536)
            if not piece:
                return
            body += piece
        with contextlib.suppress(OSError):
            connection.sendall(HEAD)
            for event in events():
                connection.sendall(event)


@contextlib.contextmanager
def serve(events: Callable[[], Iterable[bytes]]) -> Iterator[str]:
    """A server on a free port answering every request with ``events()``; its base URL."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    port = listener.getsockname()[1]

    def accept() -> None:
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=_answer, args=(connection, events), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        listener.close()
