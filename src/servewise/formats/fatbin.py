"""CUDA fatbinary containers: the ``.nv_fatbin`` / ``__nv_relfatbin`` section contents.

A region holds containers back to back (16-byte header, magic ``50 ED 55 BA``),
each holding entries (a header of 64..4096 bytes, then the payload). The entry
header alone gives the kind (SASS cubin / PTX), the SM number and the
``a``/``f`` suffix (flags ``0x100000`` / ``0x200000``), so listing architectures
needs no decompression (``research/gate.md`` §1.2-1.4, §7.1).

Walking rules (:func:`parse_containers`):

* zero bytes between containers (and at the end of the region) are skipped;
  the first non-zero byte after them must start a container magic, anything
  else — including the wrapper magic ``0x466243B1`` — is a :class:`FormatError`
  (no re-synchronisation: a corrupt region is reported, not guessed past);
* a container must end inside the region, and its entries must tile it
  exactly (the last entry ends at the container end);
* every step advances by at least 16 (container) or 64 (entry) bytes, and at
  most :data:`MAX_ENTRIES` entries are collected, so memory and time are bounded.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass

import lz4.block  # type: ignore[import-untyped]
import zstandard

from servewise.archs import Arch
from servewise.errors import FormatError
from servewise.formats._reader import Reader, read_exact

CONTAINER_MAGIC = 0xBA55ED50
CONTAINER_MAGIC_BYTES = b"\x50\xed\x55\xba"
CONTAINER_HEADER_SIZE = 16
CONTAINER_HEADER_MAX = 256
CONTAINER_VERSION = 1
WRAPPER_MAGIC = 0x466243B1

ENTRY_HEADER_MIN = 64
ENTRY_HEADER_MAX = 4096
ENTRY_VERSION = 0x0101

FLAG_64BIT = 0x1
FLAG_DEBUG = 0x2
FLAG_LEGACY_COMPRESSED = 0x1000
FLAG_LZ4 = 0x2000
FLAG_ZSTD = 0x8000
FLAG_ARCH_SPECIFIC = 0x100000
FLAG_FAMILY = 0x200000
_COMPRESSION_FLAGS = FLAG_LEGACY_COMPRESSED | FLAG_LZ4 | FLAG_ZSTD

KIND_PTX = 1
KIND_ELF = 2

ARCH_MIN = 10
ARCH_MAX = 1000

MAX_ENTRIES = 1 << 18
"""Most entries collected from one region (cuBLASLt 13, the largest known, has about 5,400)."""

DEFAULT_MAX_UNCOMPRESSED = 256 * 2**20

_CONTAINER = struct.Struct("<IHHQ")
# kind, version, header_size, padded_size, payload_size, unknown, minor, major, arch,
# name_offset, name_length, flags, reserved, uncompressed_size
_ENTRY = struct.Struct("<HHIQIIHHIIIQQQ")
_TARGET_RE = re.compile(r"^[ \t]*\.target[ \t]+([A-Za-z0-9_]+)", re.MULTILINE)
_ZERO_CHUNK = 4096


class UnsupportedCompressionError(FormatError):
    """A payload compressed with a scheme servewise does not decode (flag ``0x1000``)."""


@dataclass(frozen=True)
class ContainerHeader:
    """The 16-byte container header; ``offset`` is absolute in the reader."""

    offset: int
    version: int
    header_size: int
    fat_size: int

    @property
    def entries_offset(self) -> int:
        """Absolute offset of the first entry."""
        return self.offset + self.header_size

    @property
    def end(self) -> int:
        """Absolute offset just past the container (where the next one may start)."""
        return self.offset + self.header_size + self.fat_size


@dataclass(frozen=True)
class FatbinEntry:
    """One embedded image: a SASS cubin, PTX text or another kind (kept, not interpreted).

    ``payload_size`` is the number of stored bytes: the compressed size when
    compressed, else ``padded_size`` when the header's field is 0.
    ``uncompressed_size`` is 0 for stored payloads. ``extra`` is the raw header
    beyond 64 bytes (ptxas options for PTX, a copy of ``.nv.compat`` for
    Blackwell cubins).
    """

    offset: int
    kind: int
    header_size: int
    padded_size: int
    payload_size: int
    uncompressed_size: int
    arch: Arch
    flags: int
    compression: str
    ptx_isa: tuple[int, int] | None
    extra: bytes
    version: int = ENTRY_VERSION

    @property
    def is_sass(self) -> bool:
        """Whether the payload is an ELF cubin (kind 2)."""
        return self.kind == KIND_ELF

    @property
    def is_ptx(self) -> bool:
        """Whether the payload is PTX text (kind 1)."""
        return self.kind == KIND_PTX

    @property
    def kind_name(self) -> str:
        """``"sass"``, ``"ptx"`` or ``"kind-N"``."""
        if self.is_sass:
            return "sass"
        if self.is_ptx:
            return "ptx"
        return f"kind-{self.kind}"

    @property
    def name(self) -> str:
        """``sm_90a`` for SASS, ``compute_90`` for PTX, ``kind-8:sm_90`` for other kinds."""
        if self.is_sass:
            return self.arch.sass_name
        if self.is_ptx:
            return self.arch.ptx_name
        return f"{self.kind_name}:{self.arch.sass_name}"

    @property
    def is_compressed(self) -> bool:
        """Whether the stored payload must be decompressed before use."""
        return self.compression != "none"

    @property
    def payload_offset(self) -> int:
        """Absolute offset of the stored payload."""
        return self.offset + self.header_size

    @property
    def end(self) -> int:
        """Absolute offset just past the entry (header plus padded payload)."""
        return self.offset + self.header_size + self.padded_size


@dataclass(frozen=True)
class FatbinContainer:
    """A container header and its entries, in file order."""

    header: ContainerHeader
    entries: tuple[FatbinEntry, ...]


def parse_container_header(data: bytes, base: int = 0) -> ContainerHeader:
    """The container header at the start of ``data`` (``base`` = its absolute offset)."""
    if len(data) < CONTAINER_HEADER_SIZE:
        raise FormatError(
            "fatbin container header",
            offset=base,
            expected=f"{CONTAINER_HEADER_SIZE} bytes",
            found=f"{len(data)} bytes",
        )
    magic, version, header_size, fat_size = _CONTAINER.unpack_from(data, 0)
    if magic != CONTAINER_MAGIC:
        raise FormatError(
            "fatbin container magic",
            offset=base,
            expected=f"{CONTAINER_MAGIC:#010x} (bytes 50 ed 55 ba)",
            found=f"{magic:#010x}",
        )
    if version != CONTAINER_VERSION:
        raise FormatError(
            "fatbin container version", offset=base + 4, expected="1", found=str(version)
        )
    if not CONTAINER_HEADER_SIZE <= header_size <= CONTAINER_HEADER_MAX:
        raise FormatError(
            "fatbin container header size",
            offset=base + 6,
            expected=f"{CONTAINER_HEADER_SIZE}..{CONTAINER_HEADER_MAX}",
            found=str(header_size),
        )
    if fat_size == 0:
        raise FormatError(
            "fatbin container size", offset=base + 8, expected="a non-zero size", found="0"
        )
    return ContainerHeader(offset=base, version=version, header_size=header_size, fat_size=fat_size)


def entry_header_size(data: bytes, base: int = 0) -> int:
    """The header size an entry declares (u32 at +4), validated; ``data`` needs 8 bytes."""
    if len(data) < 8:
        raise FormatError(
            "fatbin entry header", offset=base, expected="at least 8 bytes", found=f"{len(data)}"
        )
    (size,) = struct.unpack_from("<I", data, 4)
    if not ENTRY_HEADER_MIN <= size <= ENTRY_HEADER_MAX or size % 8:
        raise FormatError(
            "fatbin entry header size",
            offset=base + 4,
            expected=f"a multiple of 8 in {ENTRY_HEADER_MIN}..{ENTRY_HEADER_MAX}",
            found=str(size),
        )
    return int(size)


def _compression(flags: int, base: int) -> str:
    """The compression scheme named by ``flags`` (at most one scheme bit may be set)."""
    scheme = flags & _COMPRESSION_FLAGS
    names = {0: "none", FLAG_ZSTD: "zstd", FLAG_LZ4: "lz4", FLAG_LEGACY_COMPRESSED: "legacy"}
    if scheme not in names:
        raise FormatError(
            "fatbin entry flags",
            offset=base + 40,
            expected="at most one of the compression flags 0x1000/0x2000/0x8000",
            found=f"{flags:#x}",
        )
    return names[scheme]


def _suffix(flags: int, base: int) -> str:
    """``"a"``, ``"f"`` or ``""`` from the arch-specific / family flags."""
    if flags & FLAG_ARCH_SPECIFIC and flags & FLAG_FAMILY:
        raise FormatError(
            "fatbin entry flags",
            offset=base + 40,
            expected="at most one of 0x100000 (a) and 0x200000 (f)",
            found=f"{flags:#x}",
        )
    if flags & FLAG_ARCH_SPECIFIC:
        return "a"
    return "f" if flags & FLAG_FAMILY else ""


def parse_entry_header(data: bytes, base: int, limit: int) -> FatbinEntry:
    """The entry whose header starts ``data``; ``base`` is its absolute offset.

    ``data`` must hold the whole header (learn its size first with
    :func:`entry_header_size` from the first 64 bytes); ``limit`` is the
    absolute end of the enclosing container, which the entry must not pass.
    """
    if len(data) < ENTRY_HEADER_MIN:
        raise FormatError(
            "fatbin entry header",
            offset=base,
            expected=f"at least {ENTRY_HEADER_MIN} bytes",
            found=f"{len(data)} bytes",
        )
    header_size = entry_header_size(data, base)
    if len(data) < header_size:
        raise FormatError(
            "fatbin entry header",
            offset=base,
            expected=f"{header_size} bytes (the header size it declares)",
            found=f"{len(data)} bytes",
        )
    fields = _ENTRY.unpack_from(data, 0)
    kind, version, padded, stored, minor, major, arch_number = (
        fields[0],
        fields[1],
        fields[3],
        fields[4],
        fields[6],
        fields[7],
        fields[8],
    )
    flags, uncompressed = fields[11], fields[13]
    if version != ENTRY_VERSION:
        raise FormatError(
            "fatbin entry version", offset=base + 2, expected="0x0101", found=f"{version:#06x}"
        )
    if base + header_size + padded > limit:
        raise FormatError(
            "fatbin entry size",
            offset=base + 8,
            expected=f"an entry ending by {limit:#x} (the container end)",
            found=f"header {header_size} + padded payload {padded} ending at "
            f"{base + header_size + padded:#x}",
        )
    if stored > padded:
        raise FormatError(
            "fatbin entry payload size",
            offset=base + 16,
            expected=f"at most the padded size {padded}",
            found=str(stored),
        )
    known = kind in (KIND_PTX, KIND_ELF)
    if not (ARCH_MIN <= arch_number <= ARCH_MAX or (not known and arch_number == 0)):
        raise FormatError(
            "fatbin entry architecture",
            offset=base + 28,
            expected=f"an SM number in {ARCH_MIN}..{ARCH_MAX}",
            found=str(arch_number),
        )
    return FatbinEntry(
        offset=base,
        kind=kind,
        header_size=header_size,
        padded_size=padded,
        payload_size=stored or padded,
        uncompressed_size=uncompressed,
        arch=Arch(arch_number, _suffix(flags, base)),
        flags=flags,
        compression=_compression(flags, base),
        ptx_isa=(major, minor) if kind == KIND_PTX else None,
        extra=bytes(data[ENTRY_HEADER_MIN:header_size]),
        version=version,
    )


def _skip_zeros(reader: Reader, offset: int, end: int) -> int:
    """The offset of the first non-zero byte in ``[offset, end)``, or ``end``."""
    while offset < end:
        chunk = read_exact(reader, offset, min(_ZERO_CHUNK, end - offset), "fatbin padding")
        stripped = chunk.lstrip(b"\0")
        if stripped:
            return offset + len(chunk) - len(stripped)
        offset += len(chunk)
    return end


def _parse_entries(reader: Reader, header: ContainerHeader, budget: int) -> list[FatbinEntry]:
    """The entries tiling ``header``'s container, at most ``budget`` of them."""
    entries: list[FatbinEntry] = []
    position = header.entries_offset
    while position < header.end:
        if header.end - position < ENTRY_HEADER_MIN:
            raise FormatError(
                "fatbin entry header",
                offset=position,
                expected=f"{ENTRY_HEADER_MIN} bytes before the container end {header.end:#x}",
                found=f"{header.end - position} bytes",
            )
        if len(entries) >= budget:
            raise FormatError(
                "fatbin region",
                offset=position,
                expected=f"at most {MAX_ENTRIES} entries",
                found="more",
            )
        first = read_exact(reader, position, ENTRY_HEADER_MIN, "fatbin entry header")
        size = entry_header_size(first, position)
        if size > header.end - position:
            raise FormatError(
                "fatbin entry header size",
                offset=position + 4,
                expected=f"a header ending by the container end {header.end:#x}",
                found=f"{size} bytes ending at {position + size:#x}",
            )
        data = (
            first
            if size == ENTRY_HEADER_MIN
            else read_exact(reader, position, size, "fatbin entry header")
        )
        entry = parse_entry_header(data, position, header.end)
        entries.append(entry)
        position = entry.end
    return entries


def parse_containers(
    reader: Reader, offset: int = 0, size: int | None = None
) -> tuple[FatbinContainer, ...]:
    """Every container in ``[offset, offset + size)`` of ``reader`` (default: to its end)."""
    end = reader.size if size is None else offset + size
    if offset < 0 or end < offset or end > reader.size:
        raise FormatError(
            "fatbin region",
            offset=offset,
            expected=f"a region within the {reader.size}-byte input",
            found=f"{offset:#x}..{end:#x}",
        )
    containers: list[FatbinContainer] = []
    count = 0
    position = _skip_zeros(reader, offset, end)
    while position < end:
        if end - position < CONTAINER_HEADER_SIZE:
            raise FormatError(
                "fatbin container header",
                offset=position,
                expected=f"{CONTAINER_HEADER_SIZE} bytes or zero padding to the region end",
                found=f"{end - position} non-zero trailing bytes",
            )
        header = parse_container_header(
            read_exact(reader, position, CONTAINER_HEADER_SIZE, "fatbin container header"),
            position,
        )
        if header.end > end:
            raise FormatError(
                "fatbin container size",
                offset=position + 8,
                expected=f"a container ending by {end:#x} (the region end)",
                found=f"fat_size {header.fat_size} ending at {header.end:#x}",
            )
        entries = _parse_entries(reader, header, MAX_ENTRIES - count)
        count += len(entries)
        containers.append(FatbinContainer(header=header, entries=tuple(entries)))
        position = _skip_zeros(reader, header.end, end)
    return tuple(containers)


def read_payload(reader: Reader, entry: FatbinEntry) -> bytes:
    """The stored (possibly compressed) payload bytes of ``entry``."""
    return read_exact(reader, entry.payload_offset, entry.payload_size, f"{entry.name} payload")


def _zstd(entry: FatbinEntry, payload: bytes) -> bytes:
    """Decompress a zstd frame to exactly ``entry.uncompressed_size`` bytes, reading no more."""
    expected = entry.uncompressed_size
    try:
        stream = zstandard.ZstdDecompressor().stream_reader(payload)
        parts: list[bytes] = []
        total = 0
        while total <= expected:
            part = stream.read(expected + 1 - total)
            if not part:
                break
            parts.append(part)
            total += len(part)
    except zstandard.ZstdError as error:
        raise FormatError(
            f"{entry.name} zstd payload",
            offset=entry.payload_offset,
            expected="a valid zstd frame",
            found=str(error),
        ) from None
    return b"".join(parts)


def _lz4(entry: FatbinEntry, payload: bytes) -> bytes:
    """Decompress an LZ4 block to ``entry.uncompressed_size`` bytes."""
    try:
        result = lz4.block.decompress(payload, uncompressed_size=entry.uncompressed_size)
    except (lz4.block.LZ4BlockError, ValueError) as error:
        raise FormatError(
            f"{entry.name} LZ4 payload",
            offset=entry.payload_offset,
            expected="a valid LZ4 block",
            found=str(error),
        ) from None
    return bytes(result)


def decompress_payload(
    entry: FatbinEntry, payload: bytes, max_size: int = DEFAULT_MAX_UNCOMPRESSED
) -> bytes:
    """The uncompressed payload of ``entry`` (``payload`` as from :func:`read_payload`).

    Refuses (:class:`FormatError`) a declared uncompressed size of 0 or above
    ``max_size`` (a decompression-bomb guard) and output that does not have the
    declared size; :class:`UnsupportedCompressionError` for the legacy ``0x1000``
    scheme.
    """
    if entry.compression == "none":
        return payload
    if entry.compression == "legacy":
        raise UnsupportedCompressionError(
            f"{entry.name} payload",
            offset=entry.payload_offset,
            expected="LZ4 (flag 0x2000), zstd (0x8000) or no compression",
            found=f"the legacy compression flag 0x1000 (flags {entry.flags:#x}), not supported",
            hint="use cuobjdump to extract this entry",
        )
    if not 0 < entry.uncompressed_size <= max_size:
        raise FormatError(
            f"{entry.name} uncompressed size",
            offset=entry.offset + 56,
            expected=f"1..{max_size} bytes",
            found=str(entry.uncompressed_size),
        )
    result = _zstd(entry, payload) if entry.compression == "zstd" else _lz4(entry, payload)
    if len(result) != entry.uncompressed_size:
        raise FormatError(
            f"{entry.name} {entry.compression} payload",
            offset=entry.payload_offset,
            expected=f"{entry.uncompressed_size} bytes once decompressed",
            found=f"{len(result)}{'+' if len(result) > entry.uncompressed_size else ''} bytes",
        )
    return result


def ptx_text(entry: FatbinEntry, payload: bytes, max_size: int = DEFAULT_MAX_UNCOMPRESSED) -> str:
    """The PTX source of a PTX entry: decompressed, trailing NULs stripped, decoded."""
    raw = decompress_payload(entry, payload, max_size).rstrip(b"\0")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise FormatError(
            f"{entry.name} PTX text",
            offset=entry.payload_offset,
            expected="UTF-8 text",
            found=f"an undecodable byte at {error.start}",
        ) from None


def ptx_target(text: str) -> str | None:
    """The first ``.target`` of PTX source (``sm_90a``), or ``None`` when absent."""
    match = _TARGET_RE.search(text)
    return match.group(1) if match else None
