"""Tests for the fatbin container/entry parser, on hand-built regions and nvcc output."""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path
from typing import Any

import lz4.block  # type: ignore[import-untyped]
import pytest
import zstandard

from servewise.archs import Arch
from servewise.errors import FormatError
from servewise.formats import elf, fatbin
from servewise.formats._reader import BytesReader
from support.binaries import container, entry
from support.paths import CUDA, cuda_fixtures

DATA = CUDA


def parse(region: bytes) -> tuple[fatbin.FatbinContainer, ...]:
    """The containers of ``region``."""
    return fatbin.parse_containers(BytesReader(region))


def expect_error(region: bytes, what: str) -> FormatError:
    """The FormatError ``parse`` raises, checked for its fields."""
    with pytest.raises(FormatError) as info:
        parse(region)
    assert what in info.value.what, info.value
    assert info.value.expected and info.value.found
    return info.value


def test_constants() -> None:
    assert struct.pack("<I", fatbin.CONTAINER_MAGIC) == fatbin.CONTAINER_MAGIC_BYTES
    assert fatbin.CONTAINER_HEADER_SIZE == 16 and fatbin.ENTRY_HEADER_MIN == 64


def test_single_container_names_and_suffixes() -> None:
    region = container(
        entry(arch=90, flags=0x100011),
        entry(arch=120, flags=0x1200011, header_size=112),
        entry(
            b".version 9.0\n.target sm_120f\n\0",
            kind=1,
            arch=120,
            flags=0x200011,
            header_size=80,
            isa=(9, 0),
        ),
        entry(arch=80),
        entry(b"ir", kind=8, arch=90),
    )
    (only,) = parse(region)
    assert only.header.offset == 0 and only.header.end == len(region)
    names = [e.name for e in only.entries]
    assert names == ["sm_90a", "sm_120f", "compute_120f", "sm_80", "kind-8:sm_90"]
    sass, family, ptx, plain, other = only.entries
    assert sass.arch == Arch(90, "a") and sass.is_sass and sass.kind_name == "sass"
    assert family.arch == Arch(120, "f") and family.header_size == 112
    assert family.extra[:8] == struct.pack("<II", 0x48, 40)
    assert ptx.is_ptx and ptx.ptx_isa == (9, 0) and ptx.kind_name == "ptx"
    assert sass.ptx_isa is None and other.kind_name == "kind-8"
    assert plain.compression == "none" and not plain.is_compressed
    assert only.entries[-1].end == only.header.end
    assert sass.payload_offset == 16 + 64 and sass.payload_size == sass.padded_size == 16


@pytest.mark.parametrize("size", [64, 80, 96, 104, 112, 120])
def test_variable_header_sizes(size: int) -> None:
    region = container(entry(header_size=size), entry(header_size=size, arch=100))
    (only,) = parse(region)
    assert [e.header_size for e in only.entries] == [size, size]
    assert only.entries[1].offset == 16 + size + 16
    assert len(only.entries[0].extra) == size - 64


def test_several_containers_with_zero_padding() -> None:
    first = container(entry(arch=75))
    second = container(entry(arch=86), entry(arch=89))
    third = container(entry(arch=120))
    region = first + b"\0" * 8 + second + b"\0" * 24 + third + b"\0" * 40
    found = parse(region)
    assert [[e.name for e in c.entries] for c in found] == [
        ["sm_75"],
        ["sm_86", "sm_89"],
        ["sm_120"],
    ]
    assert found[1].header.offset == len(first) + 8
    assert found[2].header.offset == len(first) + 8 + len(second) + 24


def test_region_offset_and_size_inside_larger_input() -> None:
    region = container(entry(arch=90))
    data = b"JUNK" * 4 + region + b"MORE"
    (only,) = fatbin.parse_containers(BytesReader(data), 16, len(region))
    assert only.header.offset == 16 and only.entries[0].offset == 32


def test_empty_and_all_zero_regions() -> None:
    assert parse(b"") == ()
    assert parse(b"\0" * 10_000) == ()


def test_region_outside_input() -> None:
    with pytest.raises(FormatError):
        fatbin.parse_containers(BytesReader(b"\0" * 10), 4, 100)
    with pytest.raises(FormatError):
        fatbin.parse_containers(BytesReader(b"\0" * 10), -1)


def test_nonzero_gap_is_an_error() -> None:
    region = container(entry()) + b"\0\0\x01" + container(entry())
    error = expect_error(region, "fatbin container magic")
    assert error.offset == len(container(entry())) + 2


def test_wrapper_magic_is_not_a_container() -> None:
    wrapper = struct.pack("<IIQQ", fatbin.WRAPPER_MAGIC, 1, 0x1000, 0)
    expect_error(wrapper, "fatbin container magic")


def test_trailing_nonzero_bytes() -> None:
    expect_error(container(entry()) + b"\x50\xed", "fatbin container header")


def test_fat_size_past_end() -> None:
    body = entry()
    error = expect_error(container(body, fat_size=len(body) + 8), "fatbin container size")
    assert error.offset == 8


def test_container_version_and_sizes() -> None:
    expect_error(container(entry(), version=2), "version")
    expect_error(container(entry(), fat_size=0), "fatbin container size")
    bad_header = bytearray(container(entry()))
    struct.pack_into("<H", bad_header, 6, 8)
    expect_error(bytes(bad_header), "header size")


def test_entries_must_tile_container() -> None:
    body = entry()
    # container claims 8 bytes more than the entry: the remainder cannot hold an entry header
    region = container(body + b"\0" * 8)
    expect_error(region, "fatbin entry header")
    # padded size runs past the container end
    expect_error(container(entry(padded=1 << 20)), "fatbin entry size")


def test_padded_size_zero_is_an_empty_entry() -> None:
    region = container(entry(b"", padded=0), entry(arch=100))
    (only,) = parse(region)
    assert only.entries[0].padded_size == 0 and only.entries[0].end == 16 + 64


def test_header_size_zero_and_misaligned() -> None:
    expect_error(container(entry(header_size=0)), "fatbin entry header size")
    broken = bytearray(container(entry(header_size=80)))
    struct.pack_into("<I", broken, 16 + 4, 84)
    expect_error(bytes(broken), "fatbin entry header size")
    broken = bytearray(container(entry()))
    struct.pack_into("<I", broken, 16 + 4, 8192)
    expect_error(bytes(broken), "fatbin entry header size")


def test_header_size_past_container_end() -> None:
    region = container(entry(b"", header_size=64, padded=0))
    broken = bytearray(region)
    struct.pack_into("<I", broken, 16 + 4, 120)
    expect_error(bytes(broken), "fatbin entry header size")


def test_entry_version_arch_payload_checks() -> None:
    expect_error(container(entry(version=0x0102)), "fatbin entry version")
    expect_error(container(entry(arch=0)), "architecture")
    expect_error(container(entry(arch=5000)), "architecture")
    expect_error(container(entry(stored=1000)), "payload size")
    expect_error(container(entry(flags=0x100000 | 0x200000)), "fatbin entry flags")
    expect_error(container(entry(flags=fatbin.FLAG_LZ4 | fatbin.FLAG_ZSTD)), "fatbin entry flags")


def test_parse_entry_header_with_prefix_then_full() -> None:
    raw = entry(header_size=112)
    assert fatbin.entry_header_size(raw[:64]) == 112
    with pytest.raises(FormatError) as info:
        fatbin.parse_entry_header(raw[:64], 0x100, 0x100 + len(raw))
    assert info.value.expected.startswith("112") and info.value.found == "64 bytes"
    parsed = fatbin.parse_entry_header(raw[:112], 0x100, 0x100 + len(raw))
    assert parsed.offset == 0x100 and parsed.header_size == 112 and parsed.end == 0x100 + len(raw)
    with pytest.raises(FormatError):
        fatbin.parse_entry_header(raw[:40], 0, len(raw))
    with pytest.raises(FormatError):
        fatbin.entry_header_size(raw[:4])


def test_parse_container_header_direct() -> None:
    header = fatbin.parse_container_header(container(entry())[:16], base=0x400)
    assert header.offset == 0x400 and header.entries_offset == 0x410
    assert header.end == 0x410 + len(entry())
    with pytest.raises(FormatError):
        fatbin.parse_container_header(b"\x50\xed\x55\xba", base=0)


PTX = b"//\n.version 9.0\n.target sm_100a\n.address_size 64\n" * 20


@pytest.mark.parametrize("scheme", ["lz4", "zstd"])
def test_compressed_payloads_round_trip(scheme: str) -> None:
    text = PTX + b"\0"
    if scheme == "lz4":
        packed, flag = lz4.block.compress(text, store_size=False), fatbin.FLAG_LZ4
    else:
        packed, flag = zstandard.ZstdCompressor().compress(text), fatbin.FLAG_ZSTD
    region = container(
        entry(
            packed,
            kind=1,
            arch=100,
            flags=0x100011 | flag,
            header_size=80,
            isa=(9, 0),
            uncompressed=len(text),
        ),
    )
    reader = BytesReader(region)
    (only,) = fatbin.parse_containers(reader)
    (ptx,) = only.entries
    assert ptx.compression == scheme and ptx.is_compressed and ptx.payload_size == len(packed)
    payload = fatbin.read_payload(reader, ptx)
    assert payload == packed
    assert fatbin.decompress_payload(ptx, payload) == text
    source = fatbin.ptx_text(ptx, payload)
    assert source == PTX.decode() and fatbin.ptx_target(source) == "sm_100a"


@pytest.mark.parametrize("scheme", ["lz4", "zstd"])
def test_decompression_guards(scheme: str) -> None:
    text = b"A" * 100_000
    if scheme == "lz4":
        packed, flag = lz4.block.compress(text, store_size=False), fatbin.FLAG_LZ4
    else:
        packed, flag = zstandard.ZstdCompressor().compress(text), fatbin.FLAG_ZSTD

    def make(uncompressed: int, payload: bytes = packed) -> fatbin.FatbinEntry:
        raw = entry(payload, flags=0x11 | flag, uncompressed=uncompressed)
        return fatbin.parse_entry_header(raw, 0, len(raw))

    with pytest.raises(FormatError, match="uncompressed size"):
        fatbin.decompress_payload(make(len(text)), packed, max_size=1000)
    with pytest.raises(FormatError):
        fatbin.decompress_payload(make(0), packed)
    with pytest.raises(FormatError):  # declared smaller than the real output
        fatbin.decompress_payload(make(50_000), packed)
    with pytest.raises(FormatError):  # garbage payload
        fatbin.decompress_payload(make(len(text), b"\xff" * 64), b"\xff" * 64)
    assert fatbin.decompress_payload(make(len(text)), packed) == text


def test_legacy_compression_is_unsupported() -> None:
    raw = entry(b"x" * 16, flags=0x11 | fatbin.FLAG_LEGACY_COMPRESSED, stored=16, uncompressed=40)
    parsed = fatbin.parse_entry_header(raw, 0, len(raw))
    assert parsed.compression == "legacy"
    with pytest.raises(fatbin.UnsupportedCompressionError) as info:
        fatbin.decompress_payload(parsed, b"x" * 16)
    assert isinstance(info.value, FormatError) and "0x1000" in info.value.found


def test_uncompressed_ptx_strips_nuls_and_rejects_bad_utf8() -> None:
    raw = entry(PTX + b"\0\0\0", kind=1, arch=80, isa=(8, 8))
    reader = BytesReader(container(raw))
    ((ptx,),) = [c.entries for c in fatbin.parse_containers(reader)]
    assert fatbin.ptx_text(ptx, fatbin.read_payload(reader, ptx)) == PTX.decode()
    with pytest.raises(FormatError):
        fatbin.ptx_text(ptx, b"\xff\xfe")
    assert fatbin.ptx_target("no target here") is None


def test_read_payload_truncated() -> None:
    raw = entry(b"x" * 64)
    parsed = fatbin.parse_entry_header(raw, 0, len(raw))
    with pytest.raises(FormatError):
        fatbin.read_payload(BytesReader(raw[:100]), parsed)


def test_entry_count_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fatbin, "MAX_ENTRIES", 3)
    assert len(parse(container(entry(), entry(), entry()))[0].entries) == 3
    expect_error(container(entry(), entry()) + container(entry(), entry()), "fatbin region")


def _nvcc(tmp_path: Path, *args: str) -> bytes:
    """Compile a one-kernel source with nvcc ``args``; the output bytes."""
    source = tmp_path / "k.cu"
    source.write_text("__global__ void k(float* x) { x[threadIdx.x] *= 2.0f; }\n")
    output = tmp_path / "out.bin"
    subprocess.run(
        ["nvcc", *args, "-o", str(output), str(source)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return output.read_bytes()


needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")


@needs_nvcc
def test_nvcc_fatbin_suffixes(tmp_path: Path) -> None:
    data = _nvcc(
        tmp_path,
        "-fatbin",
        "-gencode",
        "arch=compute_90a,code=sm_90a",
        "-gencode",
        "arch=compute_120f,code=[sm_120f,compute_120f]",
        "-gencode",
        "arch=compute_80,code=[sm_80,compute_80]",
    )
    reader = BytesReader(data)
    names = sorted(e.name for c in fatbin.parse_containers(reader) for e in c.entries)
    assert names == ["compute_120f", "compute_80", "sm_120f", "sm_80", "sm_90a"]
    for c in fatbin.parse_containers(reader):
        for e in c.entries:
            payload = fatbin.decompress_payload(e, fatbin.read_payload(reader, e))
            if e.is_sass:
                assert payload[:4] == b"\x7fELF"
            else:
                target = fatbin.ptx_target(fatbin.ptx_text(e, fatbin.read_payload(reader, e)))
                assert target == e.arch.sass_name


@needs_nvcc
@pytest.mark.parametrize(("mode", "scheme"), [("size", "zstd"), ("speed", "lz4"), ("none", "none")])
def test_nvcc_compress_modes(tmp_path: Path, mode: str, scheme: str) -> None:
    data = _nvcc(
        tmp_path,
        "-fatbin",
        f"--compress-mode={mode}",
        "-gencode",
        "arch=compute_100f,code=[sm_100f,compute_100f]",
    )
    reader = BytesReader(data)
    entries = [e for c in fatbin.parse_containers(reader) for e in c.entries]
    ptx = next(e for e in entries if e.is_ptx)
    assert ptx.compression == scheme and ptx.name == "compute_100f"
    assert fatbin.ptx_target(fatbin.ptx_text(ptx, fatbin.read_payload(reader, ptx))) == "sm_100f"


@needs_nvcc
def test_nvcc_shared_library_section(tmp_path: Path) -> None:
    data = _nvcc(
        tmp_path,
        "-shared",
        "-Xcompiler",
        "-fPIC",
        "-gencode",
        "arch=compute_90a,code=sm_90a",
        "-gencode",
        "arch=compute_100f,code=sm_100f",
    )
    reader = BytesReader(data)
    header = elf.parse_elf_header(reader)
    section = elf.section_by_name(elf.parse_sections(reader, header), ".nv_fatbin")
    assert section is not None
    found = fatbin.parse_containers(reader, section.offset, section.size)
    # nvcc links a second (device-link) container: names repeat
    assert {e.name for c in found for e in c.entries} == {"sm_100f", "sm_90a"}
    assert len(found) >= 1


FIXTURES = cuda_fixtures(("shared-library", "object", "host-only"))


@pytest.mark.skipif(not FIXTURES, reason="tests/data/cuda fixtures not built yet")
@pytest.mark.parametrize(("name", "facts"), FIXTURES, ids=[name for name, _ in FIXTURES])
def test_committed_fixture(name: str, facts: dict[str, Any]) -> None:
    """Names, container counts per section and compression match ``expected.json``."""
    data = (DATA / name).read_bytes()
    reader = BytesReader(data)
    header = elf.parse_elf_header(reader)
    per_section: dict[str, int] = {}
    sass: set[str] = set()
    ptx: set[str] = set()
    compressed: set[str] = set()
    schemes: set[str] = set()
    for section in elf.parse_sections(reader, header):
        if section.name not in (".nv_fatbin", "__nv_relfatbin"):
            continue
        found = fatbin.parse_containers(reader, section.offset, section.size)
        per_section[section.name] = per_section.get(section.name, 0) + len(found)
        for item in (item for one in found for item in one.entries):
            (sass if item.is_sass else ptx).add(item.name)
            payload = fatbin.decompress_payload(item, fatbin.read_payload(reader, item))
            if item.is_sass:
                assert payload[:4] == b"\x7fELF"
            if item.is_compressed:
                compressed.add(item.kind_name)
                schemes.add(item.compression)
    assert sorted(sass) == sorted(facts["sass"])
    assert sorted(ptx) == sorted(facts["ptx"])
    assert per_section == facts["sections"]
    assert sum(per_section.values()) == (facts["containers"] or 0)
    assert sorted(compressed) == sorted(facts["compressed"])
    if facts["compression"] not in (None, "none"):
        assert schemes == {facts["compression"]}
