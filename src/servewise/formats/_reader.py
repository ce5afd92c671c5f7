"""Readers handed to the parsers: offset reads over bytes or an opened source.

Parsers in :mod:`servewise.formats` never open files. They take a
:class:`Reader` (``size`` and ``read_at``) built by a source, or plain bytes
wrapped in :class:`BytesReader`.
"""

from __future__ import annotations

from typing import Protocol

from servewise.errors import FormatError


class Reader(Protocol):
    """Random access to a byte sequence of known size."""

    @property
    def size(self) -> int:
        """Total number of bytes."""
        ...

    def read_at(self, offset: int, length: int) -> bytes:
        """Up to ``length`` bytes starting at ``offset`` (fewer only at the end)."""
        ...


class BytesReader:
    """A :class:`Reader` over bytes already in memory."""

    def __init__(self, data: bytes | bytearray | memoryview) -> None:
        self._data = memoryview(data).cast("B") if not isinstance(data, bytes) else data

    @property
    def size(self) -> int:
        """Total number of bytes."""
        return len(self._data)

    def read_at(self, offset: int, length: int) -> bytes:
        """Up to ``length`` bytes starting at ``offset``."""
        if offset < 0 or length < 0:
            return b""
        return bytes(self._data[offset : offset + length])


def read_exact(reader: Reader, offset: int, length: int, what: str) -> bytes:
    """Exactly ``length`` bytes at ``offset``, or a :class:`FormatError` naming ``what``."""
    if offset < 0 or length < 0 or offset + length > reader.size:
        raise FormatError(
            what,
            offset=offset,
            expected=f"{length} bytes within the {reader.size}-byte input",
            found="the end of the input" if offset <= reader.size else "an offset past the end",
        )
    data = reader.read_at(offset, length)
    if len(data) != length:
        raise FormatError(
            what, offset=offset, expected=f"{length} bytes", found=f"{len(data)} bytes"
        )
    return data
