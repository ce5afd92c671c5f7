"""Where log bytes come from: a file, standard input, or a file that is still growing.

``docker logs CONTAINER 2>&1 | servewise diagnose -`` and ``docker logs -f``
work through standard input; ``--follow FILE`` reads a log as an engine writes
it (like ``tail -f``), starting again from the top when the file is truncated
or replaced (log rotation).
"""

from __future__ import annotations

import os
import select
import stat
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

from servewise.errors import SourceError
from servewise.sources.local import file_chunks

__all__ = ["CHUNK_SIZE", "follow_chunks", "log_chunks"]

CHUNK_SIZE = 8 * 2**20
POLL_SECONDS = 0.2

StopCheck = Callable[[float], bool]
"""Called with the seconds since new bytes last arrived; True ends the follow."""


def _check_file(ref: str) -> Path:
    path = Path(ref).expanduser()
    if not path.exists():
        raise SourceError(f"no such log file: {ref}", path=ref,
                          hint="give the engine's log file, or `-` to read standard input")
    if path.is_dir():
        raise SourceError(f"{ref} is a folder, not a log file", path=ref,
                          hint="give the engine's log file, or `-` to read standard input")
    return path


def log_chunks(ref: str, chunk_size: int = CHUNK_SIZE) -> Iterator[bytes]:
    """The bytes of the log ``ref`` (a path, or ``-`` for standard input) in chunks."""
    if ref == "-":
        return _stream_chunks(sys.stdin.buffer, chunk_size)
    return file_chunks(str(_check_file(ref)), chunk_size)


def log_size(ref: str) -> int | None:
    """The size of the log ``ref`` when it is a regular file; None for standard input, a
    pipe or anything else whose size is not known before it is read."""
    if ref == "-":
        return None
    try:
        status = Path(ref).expanduser().stat()
    except OSError:
        return None
    return status.st_size if stat.S_ISREG(status.st_mode) else None


def _stream_chunks(stream: BinaryIO, chunk_size: int) -> Iterator[bytes]:
    while True:
        chunk = stream.read1(chunk_size) if hasattr(stream, "read1") else stream.read(chunk_size)
        if not chunk:
            return
        yield chunk


def follow_chunks(ref: str, should_stop: StopCheck, *, chunk_size: int = CHUNK_SIZE,
                  poll: float = POLL_SECONDS) -> Iterator[bytes]:
    """The log's bytes as they are written, until ``should_stop(idle_seconds)`` says so."""
    if ref == "-":
        yield from _follow_stream(sys.stdin.buffer, should_stop, chunk_size, poll)
        return
    path = _check_file(ref)
    handle = _open(path)
    identity = os.fstat(handle.fileno())
    last_data = time.monotonic()
    try:
        while True:
            chunk = handle.read(chunk_size)
            if chunk:
                last_data = time.monotonic()
                yield chunk
                continue
            if should_stop(time.monotonic() - last_data):
                return
            time.sleep(poll)
            try:
                current = os.stat(path)
            except FileNotFoundError:
                continue  # rotated away; the next one appears shortly
            replaced = (current.st_ino, current.st_dev) != (identity.st_ino, identity.st_dev)
            if replaced or current.st_size < handle.tell():
                handle.close()
                handle = _open(path)
                identity = os.fstat(handle.fileno())
    finally:
        handle.close()


def _open(path: Path) -> BinaryIO:
    try:
        return open(path, "rb")
    except OSError as error:
        raise SourceError(f"cannot read {path}: {error.strerror}", path=str(path),
                          hint="check the path and its permissions") from None


def _follow_stream(stream: BinaryIO, should_stop: StopCheck, chunk_size: int,
                   poll: float) -> Iterator[bytes]:
    fd = stream.fileno()
    last_data = time.monotonic()
    while True:
        ready, _, _ = select.select([fd], [], [], poll)
        if ready:
            chunk = os.read(fd, chunk_size)
            if not chunk:
                return
            last_data = time.monotonic()
            yield chunk
        elif should_stop(time.monotonic() - last_data):
            return
