"""A small ELF reader: the file header and the section table, nothing more.

Enough to find ``.nv_fatbin`` / ``__nv_relfatbin`` in a host library and the
notes of a cubin. 32- and 64-bit, little and big endian, with extended section
numbering (``e_shnum == 0``: the count is in section 0's ``sh_size``;
``e_shstrndx == SHN_XINDEX``: the index is in section 0's ``sh_link``).

Every length is checked against the input: a section table or a section name
string table that does not fit, a name offset outside the string table and a
(non-``NOBITS``) section whose bytes run past the end of the input all raise
:class:`~servewise.errors.FormatError`. The section count is capped at
:data:`MAX_SECTIONS` and the section-name table at :data:`MAX_SHSTRTAB` bytes so
that a hostile header cannot make the reader allocate without bound.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass, replace

from servewise.errors import FormatError
from servewise.formats._reader import Reader, read_exact

ELF_MAGIC = b"\x7fELF"
EM_CUDA = 190

ELFCLASS32 = 1
ELFCLASS64 = 2
ELFDATA2LSB = 1
ELFDATA2MSB = 2

SHT_NULL = 0
SHT_NOTE = 7
SHT_NOBITS = 8
SHN_UNDEF = 0
SHN_LORESERVE = 0xFF00
SHN_XINDEX = 0xFFFF

MAX_SECTIONS = 1 << 17
"""More sections than any real library carries (the ELF limit without extension is 65279)."""

MAX_SHSTRTAB = 16 * 2**20
"""Largest section-name string table read into memory."""

_IDENT_SIZE = 16
_EHDR_SIZE = {ELFCLASS32: 52, ELFCLASS64: 64}
_SHDR_SIZE = {ELFCLASS32: 40, ELFCLASS64: 64}
_PHDR_SIZE = {ELFCLASS32: 32, ELFCLASS64: 56}
# e_type, e_machine, e_version, e_entry, e_phoff, e_shoff, e_flags,
# e_ehsize, e_phentsize, e_phnum, e_shentsize, e_shnum, e_shstrndx
_EHDR_REST = {ELFCLASS32: "HHIIIIIHHHHHH", ELFCLASS64: "HHIQQQIHHHHHH"}
# sh_name, sh_type, sh_flags, sh_addr, sh_offset, sh_size, sh_link, sh_info,
# sh_addralign, sh_entsize
_SHDR = {ELFCLASS32: "IIIIIIIIII", ELFCLASS64: "IIQQQQIIQQ"}


@dataclass(frozen=True)
class ElfHeader:
    """The ELF file header, with ``shnum``/``shstrndx`` already resolved for extended numbering."""

    elf_class: int
    little_endian: bool
    osabi: int
    abi_version: int
    e_type: int
    machine: int
    version: int
    entry: int
    phoff: int
    shoff: int
    flags: int
    ehsize: int
    phentsize: int
    phnum: int
    shentsize: int
    shnum: int
    shstrndx: int

    @property
    def endian(self) -> str:
        """The :mod:`struct` byte-order character of this file (``<`` or ``>``)."""
        return "<" if self.little_endian else ">"

    @property
    def section_table_end(self) -> int:
        """Offset just past the section header table (0 when there is none)."""
        return self.shoff + self.shnum * self.shentsize if self.shnum else 0

    @property
    def program_table_end(self) -> int:
        """Offset just past the program header table (0 when there is none)."""
        return self.phoff + self.phnum * self.phentsize if self.phnum else 0


@dataclass(frozen=True)
class ElfSection:
    """One section header, its name resolved from the section-name string table."""

    index: int
    name: str
    type: int
    flags: int
    addr: int
    offset: int
    size: int
    link: int
    info: int
    align: int
    entsize: int

    @property
    def is_nobits(self) -> bool:
        """Whether the section occupies no bytes in the file (``SHT_NOBITS``, e.g. ``.bss``)."""
        return self.type == SHT_NOBITS

    @property
    def end(self) -> int:
        """Offset just past the section's bytes in the file (its offset for ``NOBITS``)."""
        return self.offset if self.is_nobits else self.offset + self.size


def is_elf(prefix: bytes) -> bool:
    """Whether ``prefix`` starts with the ELF magic ``\\x7fELF``."""
    return prefix[:4] == ELF_MAGIC


def _decode_header(data: bytes) -> ElfHeader:
    """The header fields of ``data`` (which holds at least the full header), unresolved."""
    elf_class, data_enc = data[4], data[5]
    endian = "<" if data_enc == ELFDATA2LSB else ">"
    fields = struct.unpack_from(endian + _EHDR_REST[elf_class], data, _IDENT_SIZE)
    (e_type, machine, version, entry, phoff, shoff, flags) = fields[:7]
    (ehsize, phentsize, phnum, shentsize, shnum, shstrndx) = fields[7:]
    return ElfHeader(
        elf_class=32 if elf_class == ELFCLASS32 else 64,
        little_endian=data_enc == ELFDATA2LSB,
        osabi=data[7],
        abi_version=data[8],
        e_type=e_type,
        machine=machine,
        version=version,
        entry=entry,
        phoff=phoff,
        shoff=shoff,
        flags=flags,
        ehsize=ehsize,
        phentsize=phentsize,
        phnum=phnum,
        shentsize=shentsize,
        shnum=shnum,
        shstrndx=shstrndx,
    )


def _class_code(header: ElfHeader) -> int:
    """``ELFCLASS32`` or ``ELFCLASS64`` for ``header``."""
    return ELFCLASS32 if header.elf_class == 32 else ELFCLASS64


def _check_header(header: ElfHeader) -> None:
    """Entry sizes large enough to hold the structures they describe."""
    cls = _class_code(header)
    if (header.shnum or header.shoff) and header.shentsize < _SHDR_SIZE[cls]:
        raise FormatError(
            "ELF header e_shentsize",
            offset=0x2E if cls == ELFCLASS32 else 0x3A,
            expected=f"at least {_SHDR_SIZE[cls]} for ELF{header.elf_class}",
            found=str(header.shentsize),
        )
    if header.phnum and header.phentsize < _PHDR_SIZE[cls]:
        raise FormatError(
            "ELF header e_phentsize",
            offset=0x2A if cls == ELFCLASS32 else 0x36,
            expected=f"at least {_PHDR_SIZE[cls]} for ELF{header.elf_class}",
            found=str(header.phentsize),
        )


def _read_shdr(reader: Reader, header: ElfHeader, index: int) -> tuple[int, ...]:
    """The raw fields of section header ``index``."""
    cls = _class_code(header)
    offset = header.shoff + index * header.shentsize
    data = read_exact(reader, offset, _SHDR_SIZE[cls], f"ELF section header {index}")
    return struct.unpack(header.endian + _SHDR[cls], data)


def decode_elf_header(reader: Reader) -> ElfHeader:
    """The ELF header fields as stored, without reading anything past the header.

    Unlike :func:`parse_elf_header`, extended section numbering is not resolved
    (``shnum``/``shstrndx`` may be 0/``SHN_XINDEX``), so the first bytes of a
    stream are enough. :class:`FormatError` when it is not a well-formed ELF header.
    """
    ident = read_exact(reader, 0, _IDENT_SIZE, "ELF identification")
    if ident[:4] != ELF_MAGIC:
        raise FormatError(
            "ELF magic", offset=0, expected="7f 45 4c 46 (\\x7fELF)", found=ident[:4].hex(" ")
        )
    if ident[4] not in _EHDR_SIZE:
        raise FormatError(
            "ELF class", offset=4, expected="1 (32-bit) or 2 (64-bit)", found=str(ident[4])
        )
    if ident[5] not in (ELFDATA2LSB, ELFDATA2MSB):
        raise FormatError(
            "ELF data encoding", offset=5, expected="1 (LSB) or 2 (MSB)", found=str(ident[5])
        )
    data = read_exact(reader, 0, _EHDR_SIZE[ident[4]], "ELF header")
    header = _decode_header(data)
    _check_header(header)
    return header


def parse_elf_header(reader: Reader) -> ElfHeader:
    """The ELF header of ``reader``; :class:`FormatError` when it is not a well-formed ELF header.

    With extended numbering the real section count (section 0's ``sh_size``) and
    string-table index (section 0's ``sh_link``) are read from section 0.
    """
    header = decode_elf_header(reader)
    shnum, shstrndx = header.shnum, header.shstrndx
    if header.shoff and (shnum == 0 or shstrndx == SHN_XINDEX):
        zero = _read_shdr(reader, header, 0)
        if shnum == 0:
            shnum = zero[5]
        if shstrndx == SHN_XINDEX:
            shstrndx = zero[6]
    if shnum > MAX_SECTIONS:
        raise FormatError(
            "ELF section count",
            offset=header.shoff,
            expected=f"at most {MAX_SECTIONS} sections",
            found=str(shnum),
        )
    if shnum != header.shnum or shstrndx != header.shstrndx:
        header = replace(header, shnum=shnum, shstrndx=shstrndx)
    return header


def _section_name(strtab: bytes, strtab_offset: int, name_offset: int, index: int) -> str:
    """The NUL-terminated name at ``name_offset`` in the section-name table."""
    if name_offset >= len(strtab):
        if name_offset == 0:
            return ""
        raise FormatError(
            f"ELF section {index} name",
            offset=strtab_offset + name_offset,
            expected=f"a name offset below {len(strtab)} (the string table size)",
            found=str(name_offset),
        )
    end = strtab.find(b"\0", name_offset)
    if end < 0:
        raise FormatError(
            f"ELF section {index} name",
            offset=strtab_offset + name_offset,
            expected="a NUL-terminated name inside the string table",
            found="no NUL before the end of the table",
        )
    return strtab[name_offset:end].decode("utf-8", errors="replace")


def parse_sections(reader: Reader, header: ElfHeader) -> tuple[ElfSection, ...]:
    """Every section header of ``reader`` with its name.

    Raises :class:`FormatError` when the section table does not fit in the
    input, ``shstrndx`` is out of range or names a section without file bytes,
    a name offset lies outside the string table, or a section other than
    ``SHT_NULL``/``SHT_NOBITS`` runs past the end of the input (strict: such a
    file is truncated or corrupt, and its fatbin could be cut short).
    """
    if header.shoff == 0 or header.shnum == 0:
        return ()
    cls = _class_code(header)
    table_size = header.shnum * header.shentsize
    table = read_exact(reader, header.shoff, table_size, "ELF section header table")
    fmt = struct.Struct(header.endian + _SHDR[cls])
    raw = [fmt.unpack_from(table, i * header.shentsize) for i in range(header.shnum)]
    for index, fields in enumerate(raw):
        sh_type, offset, size = fields[1], fields[4], fields[5]
        if sh_type in (SHT_NULL, SHT_NOBITS):
            continue
        if offset + size > reader.size:
            raise FormatError(
                f"ELF section {index}",
                offset=header.shoff + index * header.shentsize,
                expected=f"bytes within the {reader.size}-byte input",
                found=f"offset {offset:#x} + size {size:#x} past the end",
            )
    strtab = b""
    strtab_offset = 0
    named = header.shstrndx != SHN_UNDEF
    if named:
        if header.shstrndx >= header.shnum:
            raise FormatError(
                "ELF header e_shstrndx",
                offset=0x32 if cls == ELFCLASS32 else 0x3E,
                expected=f"a section index below {header.shnum}",
                found=str(header.shstrndx),
            )
        str_fields = raw[header.shstrndx]
        if str_fields[1] in (SHT_NULL, SHT_NOBITS) or str_fields[5] > MAX_SHSTRTAB:
            raise FormatError(
                "ELF section-name string table",
                offset=header.shoff + header.shstrndx * header.shentsize,
                expected=f"a section with file bytes, at most {MAX_SHSTRTAB} bytes",
                found=f"type {str_fields[1]}, size {str_fields[5]}",
            )
        strtab_offset = str_fields[4]
        strtab = read_exact(reader, strtab_offset, str_fields[5], "ELF section-name table")
    return tuple(
        ElfSection(
            index=index,
            name=_section_name(strtab, strtab_offset, fields[0], index) if named else "",
            type=fields[1],
            flags=fields[2],
            addr=fields[3],
            offset=fields[4],
            size=fields[5],
            link=fields[6],
            info=fields[7],
            align=fields[8],
            entsize=fields[9],
        )
        for index, fields in enumerate(raw)
    )


def section_by_name(sections: Iterable[ElfSection], name: str) -> ElfSection | None:
    """The first section called ``name``, or ``None``."""
    for section in sections:
        if section.name == name:
            return section
    return None


def read_section(reader: Reader, section: ElfSection) -> bytes:
    """The file bytes of ``section`` (empty for ``NOBITS``); :class:`FormatError` if cut short."""
    if section.is_nobits:
        return b""
    return read_exact(reader, section.offset, section.size, f"ELF section {section.name!r}")
