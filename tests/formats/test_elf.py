"""Tests for the ELF header and section-table reader, on hand-built and nvcc-built files."""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from servewise.errors import FormatError
from servewise.formats import elf
from servewise.formats._reader import BytesReader
from support.binaries import build_elf


def parse(data: bytes) -> tuple[elf.ElfHeader, tuple[elf.ElfSection, ...]]:
    """Header and sections of ``data``."""
    reader = BytesReader(data)
    header = elf.parse_elf_header(reader)
    return header, elf.parse_sections(reader, header)


@pytest.mark.parametrize("bits", [32, 64])
@pytest.mark.parametrize("little", [True, False])
def test_round_trip_all_classes_and_endians(bits: int, little: bool) -> None:
    data = build_elf(
        [(".nv_fatbin", 1, b"abcdefgh"), (".bss", elf.SHT_NOBITS, b"\0" * 4096)],
        bits=bits,
        little=little,
        flags=0x06005A04,
    )
    header, sections = parse(data)
    assert header.elf_class == bits and header.little_endian is little
    assert header.machine == elf.EM_CUDA and header.flags == 0x06005A04
    assert header.osabi == 65 and header.abi_version == 8
    assert [s.name for s in sections] == ["", ".nv_fatbin", ".bss", ".shstrtab"]
    fatbin = elf.section_by_name(sections, ".nv_fatbin")
    assert fatbin is not None and elf.read_section(BytesReader(data), fatbin) == b"abcdefgh"
    bss = elf.section_by_name(sections, ".bss")
    assert bss is not None and bss.is_nobits and bss.size == 4096 and bss.end == bss.offset
    assert elf.section_by_name(sections, ".text") is None


def test_extended_numbering() -> None:
    data = build_elf([(".a", 1, b"x"), (".b", 1, b"y")], extended=True)
    header, sections = parse(data)
    assert header.shnum == 4 and header.shstrndx == 3
    assert [s.name for s in sections][1:] == [".a", ".b", ".shstrtab"]


def test_is_elf() -> None:
    assert elf.is_elf(b"\x7fELF\x02")
    assert not elf.is_elf(b"\x7fEL")
    assert not elf.is_elf(b"MZ\x90\x00")


def test_no_sections() -> None:
    data = bytearray(build_elf([]))
    struct.pack_into("<Q", data, 0x28, 0)
    struct.pack_into("<HHH", data, 0x3A, 0, 0, 0)
    header, sections = parse(bytes(data))
    assert sections == () and header.shnum == 0


def _expect(data: bytes, what: str) -> FormatError:
    with pytest.raises(FormatError) as info:
        parse(data)
    assert what in info.value.what
    assert info.value.expected and info.value.found
    return info.value


def test_bad_magic_class_encoding() -> None:
    good = build_elf([])
    _expect(b"\x7fELX" + good[4:], "ELF magic")
    _expect(good[:4] + b"\x03" + good[5:], "ELF class")
    _expect(good[:5] + b"\x00" + good[6:], "ELF data encoding")
    _expect(good[:10], "ELF identification")
    _expect(good[:40], "ELF header")


def test_truncated_section_table() -> None:
    data = build_elf([(".a", 1, b"x" * 32)])
    error = _expect(data[:-10], "section header table")
    assert error.offset == struct.unpack_from("<Q", data, 0x28)[0]


def test_shoff_past_end() -> None:
    data = bytearray(build_elf([(".a", 1, b"x")]))
    struct.pack_into("<Q", data, 0x28, 1 << 40)
    _expect(bytes(data), "section header table")


def test_shstrndx_out_of_range() -> None:
    data = bytearray(build_elf([(".a", 1, b"x")]))
    struct.pack_into("<H", data, 0x3E, 200)
    _expect(bytes(data), "e_shstrndx")


def test_section_name_offset_out_of_range() -> None:
    data = bytearray(build_elf([(".a", 1, b"x")]))
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    struct.pack_into("<I", data, shoff + 64, 10_000)
    _expect(bytes(data), "name")


def test_section_name_without_nul() -> None:
    data = bytearray(build_elf([(".a", 1, b"x")]))
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    # names: "\0.a\0.shstrtab\0"; cut the table to 6 bytes, inside ".shstrtab"
    struct.pack_into("<Q", data, shoff + 2 * 64 + 32, 6)
    error = _expect(bytes(data), "name")
    assert "NUL" in error.expected


def test_section_past_end() -> None:
    data = bytearray(build_elf([(".a", 1, b"x")]))
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    struct.pack_into("<Q", data, shoff + 64 + 32, 1 << 30)
    error = _expect(bytes(data), "ELF section 1")
    assert "past the end" in error.found


def test_nobits_string_table_rejected() -> None:
    data = bytearray(build_elf([(".a", 1, b"x")]))
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    struct.pack_into("<I", data, shoff + 2 * 64 + 4, elf.SHT_NOBITS)
    _expect(bytes(data), "string table")


def test_small_shentsize_rejected() -> None:
    data = bytearray(build_elf([(".a", 1, b"x")]))
    struct.pack_into("<H", data, 0x3A, 8)
    _expect(bytes(data), "e_shentsize")


def test_huge_extended_count_rejected() -> None:
    data = bytearray(build_elf([(".a", 1, b"x")], extended=True))
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    struct.pack_into("<Q", data, shoff + 32, 1 << 40)
    _expect(bytes(data), "section count")


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
def test_nvcc_shared_library(tmp_path: Path) -> None:
    source = tmp_path / "k.cu"
    source.write_text("__global__ void k(float* x) { x[threadIdx.x] *= 2.0f; }\n")
    output = tmp_path / "libk.so"
    subprocess.run(
        [
            "nvcc",
            "-shared",
            "-Xcompiler",
            "-fPIC",
            "-gencode",
            "arch=compute_90,code=sm_90",
            "-o",
            str(output),
            str(source),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    header, sections = parse(output.read_bytes())
    assert header.elf_class == 64 and header.machine == 62
    section = elf.section_by_name(sections, ".nv_fatbin")
    assert section is not None and section.size > 0
    assert output.read_bytes()[section.offset : section.offset + 4] == b"\x50\xed\x55\xba"
