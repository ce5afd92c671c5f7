"""Reading a file a user or a clone controls: a regular file, within a size, never a hang.

:func:`read_regular` opens without blocking (a FIFO would otherwise wait for a writer
forever), refuses anything that is not a regular file (a FIFO, a socket, ``/dev/zero`` or
another device, also behind a symbolic link) and reads at most ``limit`` bytes: a file that
grows past its limit while being read is refused too. :func:`escapes` says whether a path
inside a clone resolves (through symbolic links) to somewhere outside it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

from servewise.errors import SourceError

__all__ = ["DEFAULT_LIMIT", "escapes", "open_regular", "read_regular", "read_regular_text"]

DEFAULT_LIMIT = 16 * 2**20
"""The most a text file servewise reads (a recipe, a config) may hold, by default."""

_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISDIR, "a folder"))


def _kind(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def _not_regular(path: Path, mode: int, what: str) -> SourceError:
    found = _kind(mode)
    return SourceError(
        f"{path} is {found}, not a regular file: servewise does not read the {what} from it",
        path=str(path), expected="a regular file", found=found,
        hint=f"point at a regular {what} (a symbolic link to /dev/zero, a FIFO or a device "
        "is refused)")


def _open_fd(path: Path, what: str) -> tuple[int, os.stat_result]:
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise _not_regular(path, info.st_mode, what)
    return fd, info


def open_regular(path: Path, *, what: str = "file") -> BinaryIO:
    """``path`` opened for reading in binary, when it is a regular file (else
    :class:`SourceError`; a FIFO is refused at once, never waited on)."""
    fd, _ = _open_fd(path, what)
    return os.fdopen(fd, "rb")


def read_regular(path: Path, *, limit: int = DEFAULT_LIMIT, what: str = "file") -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them.

    Raises :class:`SourceError` (with ``path``, ``expected`` and ``found``) for a path that
    is not a regular file, or holds more than ``limit`` bytes; ``FileNotFoundError`` and
    other ``OSError`` pass through for the caller to word.
    """
    fd, info = _open_fd(path, what)
    try:
        if info.st_size > limit:
            raise _too_big(path, info.st_size, limit, what)
        parts: list[bytes] = []
        size = 0
        while True:
            part = os.read(fd, min(1 << 20, limit + 1 - size))
            if not part:
                break
            parts.append(part)
            size += len(part)
            if size > limit:
                raise _too_big(path, size, limit, what)
        return b"".join(parts)
    finally:
        os.close(fd)


def _too_big(path: Path, size: int, limit: int, what: str) -> SourceError:
    return SourceError(f"{path} holds more than {limit} bytes ({size} read), more than a {what} "
                       "can be", path=str(path), expected=f"at most {limit} bytes",
                       found=f"{size} bytes", hint=f"point at the real {what}; servewise reads "
                       f"at most {limit // 2**20} MiB of it")


def read_regular_text(path: Path, *, limit: int = DEFAULT_LIMIT, what: str = "file") -> str:
    """:func:`read_regular` decoded as UTF-8 (``UnicodeDecodeError`` passes through)."""
    return read_regular(path, limit=limit, what=what).decode("utf-8")


def escapes(path: Path, root: Path) -> bool:
    """Whether ``path`` (inside ``root``) resolves to somewhere outside ``root``."""
    try:
        return not path.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):  # a symbolic link loop
        return True
