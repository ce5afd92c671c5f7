"""Tar archives (image layers, ``docker save`` files) read as a stream, headers only held.

Written by hand rather than on :mod:`tarfile` because tarfile reads a PAX or GNU
long-name record of any declared size into memory and keeps every member it has
seen; here every record is bounded and nothing is kept. Formats: POSIX ustar,
PAX (``x`` and ``g`` records: ``path``, ``linkpath``, ``size``), GNU (``L``/``K``
long names, base-256 numbers). GNU sparse members are reported as ``sparse``
and their stored bytes skipped.

:func:`parse_header` is a pure parser of one 512-byte block. :class:`TarWalker`
pulls blocks from a stream handed in (anything with ``read(n)``), yields one
:class:`TarEntry` per member and lets the caller read or skip its data.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

from servewise.errors import FormatError

BLOCK = 512
#: Largest PAX record or GNU long name accepted (real ones are a few hundred bytes).
MAX_META_BYTES = 1 * 2**20

#: Type flags, by what servewise does with them.
REGULAR = "file"
HARDLINK = "hardlink"
SYMLINK = "symlink"
DIRECTORY = "dir"
SPARSE = "sparse"
OTHER = "other"

_TYPES = {
    b"0": REGULAR, b"\0": REGULAR, b"7": REGULAR,
    b"1": HARDLINK, b"2": SYMLINK, b"5": DIRECTORY, b"S": SPARSE,
    b"3": OTHER, b"4": OTHER, b"6": OTHER,
}
_META_TYPES = (b"x", b"g", b"L", b"K")


class Stream(Protocol):
    """What the walker reads from: ``read(n)`` gives up to ``n`` bytes, ``b""`` at the end."""

    def read(self, size: int, /) -> bytes:
        """Up to ``size`` bytes."""
        ...


@dataclass(frozen=True)
class TarHeader:
    """One 512-byte header block, as written (before PAX or GNU records apply)."""

    name: str
    mode: int
    size: int
    typeflag: bytes
    linkname: str
    offset: int
    """Where the block starts in the archive."""


@dataclass(frozen=True)
class TarEntry:
    """One member with its long names and PAX values applied."""

    name: str
    """The member's name as stored (not normalised)."""
    kind: str
    """``file``, ``hardlink``, ``symlink``, ``dir``, ``sparse`` or ``other``."""
    size: int
    """Bytes of data that follow the header."""
    linkname: str
    """Target of a link, else empty."""
    mode: int
    offset: int
    """Offset of the member's (first) header block."""
    data_offset: int
    """Offset of its data."""


def _number(field: bytes, what: str, offset: int) -> int:
    """An octal field (NUL/space terminated) or a GNU base-256 one."""
    if field and field[0] & 0x80:
        value = int.from_bytes(field[1:], "big")
        if field[0] == 0xFF:  # negative base-256: never valid for sizes or modes
            raise FormatError(f"tar {what}", offset=offset, expected="a non-negative number",
                              found="a negative base-256 number")
        return value | ((field[0] & 0x3F) << (8 * (len(field) - 1)))
    text = field.split(b"\0", 1)[0].strip(b" ")
    if not text:
        return 0
    try:
        return int(text, 8)
    except ValueError:
        raise FormatError(f"tar {what}", offset=offset, expected="an octal number",
                          found=repr(bytes(text[:16]))) from None


def _text(field: bytes) -> str:
    return field.split(b"\0", 1)[0].decode("utf-8", "surrogateescape")


def is_zero_block(block: bytes) -> bool:
    """Whether a block is all zeros (the end-of-archive marker)."""
    return block.count(0) == len(block)


def parse_header(block: bytes, offset: int = 0) -> TarHeader:
    """Parse one header block; the checksum is verified."""
    if len(block) != BLOCK:
        raise FormatError("tar header", offset=offset, expected=f"{BLOCK} bytes",
                          found=f"{len(block)} bytes")
    stored = _number(block[148:156], "header checksum", offset + 148)
    unsigned = sum(block[:148]) + 8 * 32 + sum(block[156:])
    # Old tars summed signed chars; that sum is only worth taking when the usual one differs.
    if stored != unsigned and stored != unsigned - 2 * sum(
            b for b in block[:148] + block[156:] if b > 127):
        raise FormatError("tar header", offset=offset, expected=f"checksum {unsigned}",
                          found=f"checksum {stored}",
                          hint="the archive is damaged, or this is not a tar archive")
    name = block[0:100]
    magic = block[257:263]
    if magic == b"ustar\0" and block[345] != 0:  # POSIX ustar: a prefix before the name
        name = block[345:500].split(b"\0", 1)[0] + b"/" + name
    return TarHeader(
        name=_text(name),
        mode=_number(block[100:108], "mode", offset + 100),
        size=_number(block[124:136], "size", offset + 124),
        typeflag=block[156:157],
        linkname=_text(block[157:257]),
        offset=offset,
    )


def parse_pax(data: bytes, offset: int = 0) -> dict[str, str]:
    """PAX extended header records (``"%d %s=%s\\n"``), later records winning."""
    values: dict[str, str] = {}
    at = 0
    while at < len(data):
        if data[at] == 0:  # padding some writers leave
            break
        space = data.find(b" ", at)
        try:
            length = int(data[at:space]) if space > at else -1
        except ValueError:
            length = -1
        end = at + length
        if length <= 0 or end > len(data) or data[end - 1 : end] != b"\n":
            raise FormatError("PAX record", offset=offset + at,
                              expected="'<length> <key>=<value>\\n'",
                              found=repr(bytes(data[at : at + 32])))
        key, eq, value = data[space + 1 : end - 1].partition(b"=")
        if not eq:
            raise FormatError("PAX record", offset=offset + at, expected="key=value",
                              found=repr(bytes(data[at : at + 32])))
        values[key.decode("utf-8", "surrogateescape")] = value.decode("utf-8", "surrogateescape")
        at = end
    return values


def padded(size: int) -> int:
    """``size`` rounded up to whole blocks."""
    return -(-size // BLOCK) * BLOCK


class TarWalker:
    """Members of a tar stream, one at a time; data is read or skipped by the caller.

    ``skip`` (optional) moves the stream forward without reading, for seekable inputs.
    """

    def __init__(self, stream: Stream, *, skip: Callable[[int], object] | None = None,
                 where: str = "tar archive") -> None:
        self._stream = stream
        self._skip_fn = skip
        self._where = where
        self._pos = 0
        self._left = 0  # data bytes of the current member not yet read
        self._pad = 0  # padding after them
        self._global: dict[str, str] = {}
        self.ended = False
        """Whether the end-of-archive marker (or a clean end of input) was reached."""

    @property
    def position(self) -> int:
        """Bytes of the archive consumed so far."""
        return self._pos

    def _read_exact(self, size: int, what: str) -> bytes:
        parts: list[bytes] = []
        got = 0
        while got < size:
            chunk = self._stream.read(size - got)
            if not chunk:
                raise FormatError(what, offset=self._pos + got, expected=f"{size} bytes",
                                  found=f"the end of the data after {got}", source=self._where,
                                  hint="the archive or layer is truncated")
            parts.append(chunk)
            got += len(chunk)
        self._pos += size
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def _discard(self, size: int) -> None:
        if not size:
            return
        if self._skip_fn is not None:
            self._skip_fn(size)
            self._pos += size
            return
        while size:
            step = min(size, 1 << 20)
            self._read_exact(step, "tar member data")
            size -= step

    def read(self, size: int) -> bytes:
        """Up to ``size`` bytes of the current member's data (``b""`` when all is read)."""
        size = min(size, self._left)
        if size <= 0:
            return b""
        chunk = self._stream.read(size)
        if not chunk:
            raise FormatError("tar member data", offset=self._pos, expected=f"{self._left} bytes",
                              found="the end of the data", source=self._where,
                              hint="the archive or layer is truncated")
        self._pos += len(chunk)
        self._left -= len(chunk)
        return chunk

    def chunks(self, size: int) -> Iterator[bytes]:
        """The rest of the current member's data in pieces of at most ``size`` bytes."""
        while self._left:
            yield self.read(size)

    def read_all(self, limit: int) -> bytes:
        """The rest of the current member's data, which must be at most ``limit`` bytes."""
        if self._left > limit:
            raise FormatError("tar member", offset=self._pos, expected=f"at most {limit} bytes",
                              found=f"{self._left} bytes", source=self._where)
        return self._read_exact_member()

    def _read_exact_member(self) -> bytes:
        data = self._read_exact(self._left, "tar member data") if self._left else b""
        self._left = 0
        return data

    def _finish_member(self) -> None:
        self._discard(self._left)
        self._left = 0
        self._discard(self._pad)
        self._pad = 0

    def __iter__(self) -> Iterator[TarEntry]:
        while True:
            entry = self.next()
            if entry is None:
                return
            yield entry

    def next(self) -> TarEntry | None:
        """The next member, skipping what is left of the current one; ``None`` at the end."""
        self._finish_member()
        pax: dict[str, str] = {}
        long_name: str | None = None
        long_link: str | None = None
        first = self._pos
        while True:
            if self.ended:
                return None
            start = self._pos
            block = self._stream.read(BLOCK)
            while block and len(block) < BLOCK:
                more = self._stream.read(BLOCK - len(block))
                if not more:
                    break
                block += more
            if not block:
                # Input ends without the zero blocks: tolerated, as tar and Docker do,
                # but only between members.
                if start != first:
                    raise FormatError("tar header", offset=start, expected="a member header",
                                      found="the end of the data", source=self._where,
                                      hint="the archive or layer is truncated")
                self.ended = True
                return None
            if len(block) < BLOCK:
                raise FormatError("tar header", offset=start, expected=f"{BLOCK} bytes",
                                  found=f"{len(block)} bytes", source=self._where,
                                  hint="the archive or layer is truncated")
            self._pos += BLOCK
            if is_zero_block(block):
                if start != first:
                    raise FormatError("tar header", offset=start, expected="a member header",
                                      found="an end-of-archive block after a long-name record",
                                      source=self._where)
                self.ended = True
                return None
            try:
                header = parse_header(block, start)
            except FormatError as error:
                raise error.located(self._where) from None
            if header.typeflag in _META_TYPES:
                if header.size > MAX_META_BYTES:
                    raise FormatError("tar extended header", offset=start,
                                      expected=f"at most {MAX_META_BYTES} bytes",
                                      found=f"{header.size} bytes", source=self._where)
                data = self._read_exact(header.size, "tar extended header")
                self._discard(padded(header.size) - header.size)
                if header.typeflag == b"x":
                    pax.update(parse_pax(data, start + BLOCK))
                elif header.typeflag == b"g":
                    self._global.update(parse_pax(data, start + BLOCK))
                elif header.typeflag == b"L":
                    long_name = _text(data)
                else:
                    long_link = _text(data)
                continue
            values = {**self._global, **pax}
            size = header.size
            if "size" in values:
                try:
                    size = int(values["size"])
                except ValueError:
                    raise FormatError("PAX size", offset=start, expected="a decimal number",
                                      found=repr(values["size"][:32]),
                                      source=self._where) from None
            kind = _TYPES.get(header.typeflag, OTHER)
            if any(key.startswith("GNU.sparse.") for key in values):
                kind = SPARSE
            self._left = size
            self._pad = padded(size) - size
            return TarEntry(
                name=values.get("path", long_name if long_name is not None else header.name),
                kind=kind,
                size=size,
                linkname=values.get(
                    "linkpath", long_link if long_link is not None else header.linkname
                ),
                mode=header.mode,
                offset=first,
                data_offset=self._pos,
            )


__all__ = [
    "BLOCK", "DIRECTORY", "HARDLINK", "MAX_META_BYTES", "OTHER", "REGULAR", "SPARSE", "SYMLINK",
    "Stream", "TarEntry", "TarHeader", "TarWalker", "is_zero_block", "padded", "parse_header",
    "parse_pax",
]
