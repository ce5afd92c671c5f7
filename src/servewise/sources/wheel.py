"""Wheel files (zip archives), read in place: central directory first, members streamed.

Nothing is extracted to disk. A member is inflated with ISA-L (``isal``) in
bounded steps, so memory stays at a few MiB whatever the member's size, and a
member that inflates beyond the size its directory entry declares (a zip bomb)
is stopped.
"""

from __future__ import annotations

import struct
import zipfile
from collections.abc import Generator
from pathlib import Path
from typing import BinaryIO

from isal import isal_zlib

from servewise.errors import ArchiveLimitError, SourceError
from servewise.sources.interface import CHUNK_SIZE, Member

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


def is_zip(prefix: bytes) -> bool:
    """Whether bytes start like a zip archive."""
    return prefix.startswith(_LOCAL) or prefix.startswith(_EOCD)


def _check_directory(path: Path) -> None:
    """Refuse archives whose end record declares an absurd directory before zipfile reads it."""
    try:
        with open(path, "rb") as handle:
            _check_end_records(path, handle)
    except OSError as error:
        raise SourceError(f"cannot read {path}: {error.strerror}", path=str(path)) from None


def _check_end_records(path: Path, handle: BinaryIO) -> None:
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


class WheelSource:
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
        if len(infos) > MAX_ENTRIES:
            raise ArchiveLimitError(
                f"{path} has {len(infos)} entries", path=str(path), entries=len(infos),
                hint=f"servewise reads archives of at most {MAX_ENTRIES} entries",
            )
        self._infos = infos
        self._notes: list[str] = []

    @property
    def ref(self) -> str:
        """The wheel's path."""
        return str(self._path)

    @property
    def kind(self) -> str:
        """Always ``wheel``."""
        return "wheel"

    def notes(self) -> list[str]:
        """Entries skipped while listing."""
        return list(self._notes)

    def members(self) -> list[Member]:
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
                Member(
                    info.filename,
                    info.file_size,
                    f"zip:{info.CRC:08x}:{info.file_size}",
                    ("zip", str(self._path), str(info.header_offset), str(info.compress_size),
                     str(info.file_size), str(info.compress_type), info.filename),
                )
            )
        return found

    def read_small(self, member: Member, limit: int) -> bytes:
        """The first ``limit`` bytes of a member."""
        out = bytearray()
        for chunk in zip_member_chunks(member.locator, min(limit, CHUNK_SIZE)):
            out += chunk
            if len(out) >= limit:
                break
        return bytes(out[:limit])


def zip_member_chunks(locator: tuple[str, ...], chunk_size: int = CHUNK_SIZE) -> Generator[bytes]:
    """Inflate one archive member, ``chunk_size`` bytes at a time at most."""
    _, archive, offset_s, csize_s, usize_s, method_s, name = locator
    offset, csize, usize, method = int(offset_s), int(csize_s), int(usize_s), int(method_s)
    where = f"{archive}!{name}"
    try:
        handle = open(archive, "rb")  # noqa: SIM115 - closed by the generator
    except OSError as error:
        raise SourceError(f"cannot read {archive}: {error.strerror}", path=archive) from None
    return _inflate(handle, where, offset, csize, usize, method, chunk_size)


def _inflate(
    handle: BinaryIO, where: str, offset: int, csize: int, usize: int, method: int, chunk_size: int
) -> Generator[bytes]:
    with handle:
        handle.seek(offset)
        header = handle.read(30)
        if len(header) != 30 or not header.startswith(_LOCAL):
            raise SourceError(
                f"{where}: no local file header at offset {offset:#x}",
                hint="the archive is damaged; download it again",
                path=where,
                offset=offset,
            )
        name_len, extra_len = struct.unpack_from("<HH", header, 26)
        handle.seek(offset + 30 + name_len + extra_len)
        remaining = csize
        if method == zipfile.ZIP_STORED:
            while remaining:
                data = handle.read(min(chunk_size, remaining))
                if not data:
                    raise _truncated(where, csize - remaining, csize)
                remaining -= len(data)
                yield data
            return
        inflater = isal_zlib.decompressobj(-15)
        produced = 0
        limit = max(usize, 1)
        read_size = max(chunk_size // 4, 65536)
        while not inflater.eof:
            pending = inflater.unconsumed_tail
            if not pending and remaining:
                pending = handle.read(min(read_size, remaining))
                if not pending:
                    raise _truncated(where, csize - remaining, csize)
                remaining -= len(pending)
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
            if produced > limit or produced > MAX_RATIO * max(csize, 1):
                raise ArchiveLimitError(
                    f"{where} inflates beyond the {usize} bytes its directory entry declares",
                    hint="the archive is damaged or a zip bomb; it was not read further",
                    path=where,
                    declared_bytes=usize,
                )
            if out:
                yield out
        if produced != usize:
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
