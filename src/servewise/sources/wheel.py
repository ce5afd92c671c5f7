"""Wheel files (zip archives), read in place: central directory first, members streamed.

Nothing is extracted to disk. A member is inflated with ISA-L (``isal``) in
bounded steps, so memory stays at a few MiB whatever the member's size, and a
member that inflates beyond the size its directory entry declares (a zip bomb)
is stopped.
"""

from __future__ import annotations

import struct
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from isal import isal_zlib

from servewise.errors import ArchiveLimitError, SourceError
from servewise.sources.interface import CHUNK_SIZE, ByteStream, Member, MemberReader, read_exact
from servewise.sources.members import MemberSource

#: Archives with more entries than this are refused.
MAX_ENTRIES = 500_000
#: Central directories larger than this are refused.
MAX_DIRECTORY_BYTES = 256 * 2**20
#: Members declaring more than this are refused.
MAX_MEMBER_BYTES = 64 * 2**30
#: Inflated bytes allowed per compressed byte before a member is called a bomb.
MAX_RATIO = 1200

_EOCD = b"PK\x05\x06"
_EOCD64 = b"PK\x06\x06"
_EOCD64_LOCATOR = b"PK\x06\x07"
_LOCAL = b"PK\x03\x04"
#: What isal raises on damaged deflate data (its type stubs do not declare it).
_INFLATE_ERROR: type[Exception] = getattr(isal_zlib, "IsalError", Exception)



def _check_directory(path: Path) -> None:
    """Refuse archives whose end record declares an absurd directory before zipfile reads it."""
    try:
        with open(path, "rb") as handle:
            _check_end_records(path, handle)
    except OSError as error:
        raise SourceError(f"cannot read {path}: {error.strerror}", path=str(path)) from None


def _check_end_records(path: Path | str, handle: BinaryIO) -> None:
    handle.seek(0, 2)
    size = handle.tell()
    tail_len = min(size, 65536 + 22)
    handle.seek(size - tail_len)
    tail = handle.read(tail_len)
    at = tail.rfind(_EOCD)
    if at < 0 or at + 22 > len(tail):
        raise SourceError(
            f"{path} is not a zip archive: no end-of-central-directory record",
            hint="a wheel is a zip file; the download may be incomplete",
            path=str(path),
        )
    entries, dir_size = struct.unpack_from("<HI", tail, at + 10)
    if at >= 20 and tail[at - 20 : at - 16] == _EOCD64_LOCATOR:
        # The zip64 record holds the real numbers and zipfile trusts them: check those.
        # Like zipfile, read the record just before the locator.
        record_at = size - tail_len + at - 20 - 56
        record = b""
        if record_at >= 0:
            handle.seek(record_at)
            record = handle.read(56)
        if len(record) == 56 and record.startswith(_EOCD64):
            entries, dir_size = struct.unpack_from("<QQ", record, 32)
    if entries > MAX_ENTRIES or dir_size > MAX_DIRECTORY_BYTES:
        raise ArchiveLimitError(
            f"{path} declares {entries} entries in a {dir_size}-byte directory",
            hint=f"servewise reads archives of at most {MAX_ENTRIES} entries",
            path=str(path),
            entries=entries,
            directory_bytes=dir_size,
        )


class ZipSource(MemberSource):
    """A zip archive read through its central directory; subclasses say where its bytes are."""

    _kind = "wheel"

    def __init__(self, ref: str, infos: list[zipfile.ZipInfo]) -> None:
        super().__init__(ref)
        if len(infos) > MAX_ENTRIES:
            raise ArchiveLimitError(
                f"{ref} has {len(infos)} entries", path=ref, entries=len(infos),
                hint=f"servewise reads archives of at most {MAX_ENTRIES} entries",
            )
        self._infos = infos

    def entry_reader(self, info: zipfile.ZipInfo) -> MemberReader:
        """How one entry's bytes are read again; subclasses implement it."""
        raise TypeError(f"{type(self).__name__} cannot read entries")

    def list_members(self) -> list[Member]:
        """Every file entry of the archive."""
        found: list[Member] = []
        for info in self._infos:
            if info.is_dir():
                continue
            if (info.external_attr >> 16) & 0o170000 == 0o120000:
                self._notes.append(f"skipped symbolic link {info.filename}")
                continue
            if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                self._notes.append(
                    f"skipped {info.filename}: compression method {info.compress_type} "
                    "is not used by wheels"
                )
                continue
            if info.file_size > MAX_MEMBER_BYTES:
                self._notes.append(f"skipped {info.filename}: declares {info.file_size} bytes")
                continue
            found.append(
                Member(info.filename, info.file_size, f"zip:{info.CRC:08x}:{info.file_size}",
                       self.entry_reader(info))
            )
        return found


class WheelSource(ZipSource):
    """A wheel (or any zip archive) on disk."""

    def __init__(self, path: Path) -> None:
        self._path = path
        _check_directory(path)
        try:
            with zipfile.ZipFile(path) as archive:
                infos = archive.infolist()
        except (zipfile.BadZipFile, OSError, ValueError, struct.error) as error:
            raise SourceError(
                f"{path} is not a readable zip archive: {error}",
                hint="a wheel is a zip file; download it again",
                path=str(path),
            ) from None
        super().__init__(str(path), infos)

    def entry_reader(self, info: zipfile.ZipInfo) -> MemberReader:
        """Reads the entry from the file on disk."""
        return ZipEntryReader(str(self._path), info.header_offset, info.compress_size,
                              info.file_size, info.compress_type, info.filename)


@dataclass(frozen=True)
class ZipEntryReader:
    """One entry of a zip file on disk, inflated in bounded steps."""

    archive: str
    offset: int
    compressed_size: int
    size: int
    method: int
    name: str

    def chunks(self, chunk_size: int = CHUNK_SIZE) -> Iterator[bytes]:
        """The entry's bytes."""
        try:
            handle = open(self.archive, "rb")  # noqa: SIM115 - closed by the generator
        except OSError as error:
            raise SourceError(f"cannot read {self.archive}: {error.strerror}",
                              path=self.archive) from None
        return _from_file(handle, self, chunk_size)


def _from_file(handle: BinaryIO, entry: ZipEntryReader, chunk_size: int) -> Iterator[bytes]:
    with handle:
        handle.seek(entry.offset)
        yield from inflate_entry(handle, f"{entry.archive}!{entry.name}", entry.offset,
                                 entry.compressed_size, entry.size, entry.method, chunk_size)


def local_header(stream: ByteStream, where: str, offset: int) -> bytes:
    """Read one local file header and its name and extra field; the 30 fixed bytes."""
    header = read_exact(stream, 30)
    if len(header) != 30 or not header.startswith(_LOCAL):
        raise SourceError(
            f"{where}: no local file header at offset {offset:#x}",
            hint="the archive is damaged; download it again",
            path=where,
            offset=offset,
        )
    name_len, extra_len = struct.unpack_from("<HH", header, 26)
    if len(read_exact(stream, name_len + extra_len)) != name_len + extra_len:
        raise _truncated(where, 0, name_len + extra_len)
    return header


def inflate_entry(
    stream: ByteStream, where: str, offset: int, csize: int, usize: int, method: int,
    chunk_size: int,
) -> Iterator[bytes]:
    """Inflate one entry from ``stream``, positioned at its local header."""
    local_header(stream, where, offset)
    return inflate_data(stream, where, csize, usize, method, chunk_size)


def inflate_data(
    stream: ByteStream, where: str, csize: int, usize: int, method: int, chunk_size: int,
    unread: Callable[[bytes], None] | None = None,
) -> Iterator[bytes]:
    """An entry's data after its local header; a size of -1 is unknown (a data descriptor follows).

    With an unknown ``csize`` (a streamed archive's data descriptor), what the inflater
    read past the end is handed back through ``unread``.
    """
    known = csize >= 0
    remaining = csize if known else 1 << 62
    if method == zipfile.ZIP_STORED:
        if not known:
            raise SourceError(f"{where}: a stored entry of unknown size cannot be streamed",
                              hint="download the wheel and read the file", path=where)
        while remaining:
            data = stream.read(min(chunk_size, remaining))
            if not data:
                raise _truncated(where, csize - remaining, csize)
            remaining -= len(data)
            yield data
        return
    inflater = isal_zlib.decompressobj(-15)
    produced = 0
    consumed = 0
    limit = max(usize, 1) if usize >= 0 else 1 << 62
    read_size = max(chunk_size // 4, 65536)
    while not inflater.eof:
        pending = inflater.unconsumed_tail
        if not pending and remaining:
            pending = stream.read(min(read_size, remaining))
            if not pending:
                if not known:
                    raise _truncated(where, consumed, consumed + 1)
                raise _truncated(where, csize - remaining, csize)
            remaining -= len(pending)
            consumed += len(pending)
        try:
            out = inflater.decompress(pending, chunk_size)
        except _INFLATE_ERROR as error:
            raise SourceError(
                f"{where}: damaged deflate data ({error})",
                hint="the archive is damaged; download it again",
                path=where,
            ) from None
        if not out and not pending and not inflater.eof:
            # All input consumed, nothing more to drain, and the stream is not finished.
            raise _truncated(where, csize, csize)
        produced += len(out)
        bound = MAX_RATIO * max(csize if known else consumed + read_size, 1)
        if produced > limit or produced > bound:
            raise ArchiveLimitError(
                f"{where} inflates beyond the {usize} bytes its directory entry declares",
                hint="the archive is damaged or a zip bomb; it was not read further",
                path=where,
                declared_bytes=usize,
            )
        if out:
            yield out
    if unread is not None and inflater.unused_data:
        unread(inflater.unused_data)
    if usize >= 0 and produced != usize:
        raise SourceError(
            f"{where}: inflated to {produced} bytes, the directory says {usize}",
            hint="the archive is damaged; download it again",
            path=where,
        )


def _truncated(where: str, got: int, want: int) -> SourceError:
    return SourceError(
        f"{where}: compressed data ends after {got} of {want} bytes",
        hint="the archive is truncated; download it again",
        path=where,
    )


def open_wheel(ref: str, options: object = None) -> WheelSource:
    """The resolver's opener for wheel files on disk."""
    return WheelSource(Path(ref).expanduser())
