"""Raw cubins: standalone ``.cubin`` files and cubins embedded as byte arrays (ELF machine 190).

The SM number comes from ``e_flags``; where it sits depends on the CUDA ELF ABI
(``EI_ABIVERSION``, ``research/gate.md`` §1.6):

* ABI v1 (7): SM = ``e_flags & 0xFF``, ``a`` = ``e_flags & 0x800``, virtual SM
  in bits 16-23, toolkit version (``129`` = 12.9) in ``e_version``;
* ABI v2 (8, every cubin from CUDA 13): SM = ``(e_flags >> 8) & 0xFF``; neither
  ``a`` nor ``f`` is in ``e_flags``.

Measured on nvcc 13.0 output: ``sm_100``, ``sm_100a`` and ``sm_100f`` cubins
differ only in ``.note.nv.tkinfo`` (the ptxas options ``-arch sm_100f``) and,
for ``a``, ``.nv.compat`` attribute 0x09 = 1. Nothing else marks ``f``: an
``f`` cubin whose tkinfo note is stripped reads as plain. The suffix is taken
from, in order: v1 ``e_flags`` bit 0x800, the tkinfo ``-arch`` option (when its
number matches), ``.nv.compat`` attribute 0x09. ``.note.nv.cuinfo`` (``u16``
version 2, ``u16`` virtual SM, ``u16`` toolkit version) supplies the virtual
arch and toolkit version of v2 cubins.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass

from servewise.archs import Arch
from servewise.errors import FormatError
from servewise.formats._reader import BytesReader, Reader
from servewise.formats.elf import (
    EM_CUDA,
    ElfHeader,
    ElfSection,
    is_elf,
    parse_elf_header,
    parse_sections,
    read_section,
    section_by_name,
)

ABI_V1 = 7
ABI_V2 = 8
OSABI_CUDA_V1 = 51
OSABI_CUDA_V2 = 65

EF_CUDA_V1_ACCELERATORS = 0x800

NOTE_TKINFO = ".note.nv.tkinfo"
NOTE_CUINFO = ".note.nv.cuinfo"
NV_COMPAT = ".nv.compat"
NT_TKINFO = 2000
NT_CUINFO = 1000
COMPAT_ATTR_ACCELERATORS = 0x09

MAX_NOTE_SECTION = 1 << 20
"""Largest note / compat section read into memory."""

_ARCH_OPTION_RE = re.compile(r"-arch[= ]+sm_(\d+)([af]?)\b")


@dataclass(frozen=True)
class CubinInfo:
    """What a cubin says about itself.

    ``size`` is the number of bytes the cubin spans (the end of its section
    table, program table or last section, whichever is furthest), so a scanner
    can skip an embedded cubin. ``suffix_source`` names where the suffix came
    from: ``"e_flags"``, ``"tkinfo"``, ``"compat"`` or ``"none"``.
    """

    arch: Arch
    abi_version: int
    osabi: int
    e_flags: int
    toolkit_version: int | None
    virtual_arch: int | None
    tool_args: str | None
    size: int
    suffix_source: str = "none"


@dataclass(frozen=True)
class _Notes:
    """The facts read from a cubin's notes."""

    tool_args: str | None
    virtual_arch: int | None
    toolkit_version: int | None


def _is_v1(header: ElfHeader) -> bool:
    """Whether ``e_flags`` follow ABI v1 (SM in the low byte)."""
    if header.abi_version == ABI_V1:
        return True
    if header.abi_version == ABI_V2:
        return False
    return 0x14 <= header.flags & 0xFF <= 0x5A


def eflags_sm(header: ElfHeader) -> int:
    """The SM number ``e_flags`` holds, by the header's ABI (0 when it holds none)."""
    return header.flags & 0xFF if _is_v1(header) else (header.flags >> 8) & 0xFF


def _iter_notes(data: bytes, section: ElfSection, endian: str) -> list[tuple[str, int, bytes]]:
    """The ``(name, type, desc)`` records of a note section, every size checked."""
    notes: list[tuple[str, int, bytes]] = []
    position = 0
    while position < len(data):
        if len(data) - position < 12:
            if not data[position:].strip(b"\0"):
                break
            raise FormatError(
                f"ELF note in {section.name}",
                offset=section.offset + position,
                expected="a 12-byte note header",
                found=f"{len(data) - position} bytes",
            )
        namesz, descsz, note_type = struct.unpack_from(endian + "III", data, position)
        name_at = position + 12
        desc_at = name_at + (namesz + 3) // 4 * 4
        end = desc_at + (descsz + 3) // 4 * 4
        if desc_at + descsz > len(data):
            raise FormatError(
                f"ELF note in {section.name}",
                offset=section.offset + position,
                expected=f"name and descriptor within the {len(data)}-byte section",
                found=f"namesz {namesz}, descsz {descsz}",
            )
        name = data[name_at : name_at + namesz].rstrip(b"\0").decode("latin-1")
        notes.append((name, note_type, data[desc_at : desc_at + descsz]))
        position = end
    return notes


def _c_string(blob: bytes, offset: int) -> str | None:
    """The NUL-terminated string at ``offset`` of ``blob`` (``None`` when out of range)."""
    if offset >= len(blob):
        return None
    end = blob.find(b"\0", offset)
    return blob[offset : end if end >= 0 else len(blob)].decode("utf-8", errors="replace")


def _tkinfo_args(desc: bytes, endian: str) -> str | None:
    """The ptxas options of a version-2 tkinfo descriptor (``-arch sm_90a -m 64``)."""
    if len(desc) < 24:
        return None
    fields = struct.unpack_from(endian + "6I", desc, 0)
    version, options = fields[0], fields[5]  # then object, tool, version, branch offsets
    if version != 2:
        return None
    text = _c_string(desc[24:], options)
    return text.strip() if text is not None else None


def _read_small(reader: Reader, section: ElfSection) -> bytes:
    """The bytes of a note-like section, refusing absurd sizes."""
    if section.size > MAX_NOTE_SECTION:
        raise FormatError(
            f"cubin section {section.name}",
            offset=section.offset,
            expected=f"at most {MAX_NOTE_SECTION} bytes",
            found=f"{section.size} bytes",
        )
    return read_section(reader, section)


def _read_notes(reader: Reader, header: ElfHeader, sections: tuple[ElfSection, ...]) -> _Notes:
    """Tool options from ``.note.nv.tkinfo``; virtual arch and toolkit from ``.note.nv.cuinfo``."""
    tool_args: str | None = None
    virtual_arch: int | None = None
    toolkit: int | None = None
    for name in (NOTE_TKINFO, NOTE_CUINFO):
        section = section_by_name(sections, name)
        if section is None or section.is_nobits:
            continue
        for _owner, note_type, desc in _iter_notes(
            _read_small(reader, section), section, header.endian
        ):
            if note_type == NT_TKINFO and tool_args is None:
                tool_args = _tkinfo_args(desc, header.endian)
            elif note_type == NT_CUINFO and len(desc) >= 6 and virtual_arch is None:
                version, virtual, tk = struct.unpack_from(header.endian + "HHH", desc, 0)
                if version == 2:
                    virtual_arch, toolkit = virtual or None, tk or None
    return _Notes(tool_args=tool_args, virtual_arch=virtual_arch, toolkit_version=toolkit)


def compat_attributes(data: bytes, base: int = 0) -> dict[int, bytes]:
    """The ``.nv.compat`` records: attribute → value bytes.

    Records are ``u8 format, u8 attribute, u16 value-or-size``; format 4 is
    followed by ``size`` bytes of data. Format 1 carries no value.
    """
    attributes: dict[int, bytes] = {}
    position = 0
    while position + 4 <= len(data):
        fmt, attr = data[position], data[position + 1]
        if fmt == 0 and attr == 0:
            break
        if fmt in (1, 2, 3):
            attributes[attr] = data[position + 2 : position + 4]
            position += 4
        elif fmt == 4:
            (length,) = struct.unpack_from("<H", data, position + 2)
            if position + 4 + length > len(data):
                raise FormatError(
                    ".nv.compat record",
                    offset=base + position,
                    expected=f"{length} data bytes within the section",
                    found=f"{len(data) - position - 4} bytes",
                )
            attributes[attr] = data[position + 4 : position + 4 + length]
            position += 4 + length
        else:
            raise FormatError(
                ".nv.compat record",
                offset=base + position,
                expected="format 1, 2, 3 or 4",
                found=str(fmt),
            )
    return attributes


def _compat_says_a(reader: Reader, sections: tuple[ElfSection, ...]) -> bool:
    """Whether ``.nv.compat`` attribute 0x09 is set (an ``a`` cubin)."""
    section = section_by_name(sections, NV_COMPAT)
    if section is None or section.is_nobits:
        return False
    value = compat_attributes(_read_small(reader, section), section.offset).get(
        COMPAT_ATTR_ACCELERATORS, b""
    )
    return any(value)


def _span(header: ElfHeader, sections: tuple[ElfSection, ...]) -> int:
    """Bytes the cubin spans: header, tables and every section with file bytes."""
    ends = [header.ehsize, header.section_table_end, header.program_table_end]
    ends.extend(section.end for section in sections if section.type != 0)
    return max(ends)


def parse_cubin(reader: Reader) -> CubinInfo:
    """The architecture and build facts of the cubin in ``reader``."""
    header = parse_elf_header(reader)
    if header.machine != EM_CUDA:
        raise FormatError(
            "cubin ELF machine",
            offset=18,
            expected=f"{EM_CUDA} (EM_CUDA)",
            found=str(header.machine),
        )
    sections = parse_sections(reader, header)
    notes = _read_notes(reader, header, sections)
    v1 = _is_v1(header)
    number = eflags_sm(header)
    if number < 10:
        raise FormatError(
            "cubin e_flags",
            offset=0x24 if header.elf_class == 32 else 0x30,
            expected=f"an SM number in ABI v{1 if v1 else 2} e_flags",
            found=f"{header.flags:#010x}",
        )
    suffix, source = "", "none"
    option = _ARCH_OPTION_RE.search(notes.tool_args or "")
    if v1 and header.flags & EF_CUDA_V1_ACCELERATORS:
        suffix, source = "a", "e_flags"
    elif option is not None and int(option.group(1)) == number and option.group(2):
        suffix, source = option.group(2), "tkinfo"
    elif _compat_says_a(reader, sections):
        suffix, source = "a", "compat"
    virtual = ((header.flags >> 16) & 0xFF or None) if v1 else None
    return CubinInfo(
        arch=Arch(number, suffix),
        abi_version=header.abi_version,
        osabi=header.osabi,
        e_flags=header.flags,
        toolkit_version=header.version if v1 else notes.toolkit_version,
        virtual_arch=virtual or notes.virtual_arch,
        tool_args=notes.tool_args,
        size=_span(header, sections),
        suffix_source=source,
    )


def cubin_span(prefix: bytes) -> int | None:
    """Bytes a cubin spans, from its first 64 bytes; ``None`` when it is not a CUDA ELF.

    The span is the furthest end of the ELF header, the section header table
    and the program header table. nvcc places section data before both tables,
    so this is the whole cubin; :func:`parse_cubin` gives the exact figure. A
    header using extended section numbering (the count lives in section 0,
    beyond the prefix) raises :class:`FormatError`.
    """
    if not is_elf(prefix) or len(prefix) < 20:
        return None
    if prefix[5] not in (1, 2):
        return None
    (machine,) = struct.unpack_from("<H" if prefix[5] == 1 else ">H", prefix, 18)
    if machine != EM_CUDA:
        return None
    header = parse_elf_header(BytesReader(prefix))
    return max(header.ehsize, header.section_table_end, header.program_table_end)
