"""The committed CUDA fixtures and demo sample wheels agree with what built them.

``tests/data/cuda/expected.json`` and ``src/servewise/samples/expected.json`` are written
by ``scripts/build_cuda_fixtures.sh`` from the flags it passed to nvcc. Here they are
checked against NVIDIA's cuobjdump (skipped when the ``nvidia-cuda-cuobjdump`` wheel is
not installed) and against a minimal stdlib walk of the fatbin headers.
"""

from __future__ import annotations

import base64
import hashlib
import json
import struct
import zipfile
from pathlib import Path
from typing import Any

import pytest

from support.cuobjdump import (
    find_cuobjdump,
    header_entries,
    list_archs,
    normalise_for_cuobjdump,
)

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "cuda"
SAMPLES = ROOT / "src" / "servewise" / "samples"
SCRIPT = "scripts/build_cuda_fixtures.sh"

EXPECTED: dict[str, dict[str, Any]] = json.loads((DATA / "expected.json").read_text())["files"]
SAMPLE_EXPECTED: dict[str, dict[str, Any]] = json.loads((SAMPLES / "expected.json").read_text())[
    "wheels"
]

MAX_FIXTURE = 64 * 1024
MAX_TOTAL = 2 * 1024 * 1024
MAX_WHEEL = 300 * 1024

CUOBJDUMP = find_cuobjdump()
needs_cuobjdump = pytest.mark.skipif(
    CUOBJDUMP is None,
    reason="cuobjdump not found: pip install nvidia-cuda-cuobjdump (a [test] extra)",
)

FATBIN_KINDS = ("shared-library", "object")


# -- a minimal fatbin walk (stdlib only) ------------------------------------------------

FATBIN_MAGIC = 0xBA55ED50
FLAG_LZ4 = 0x2000
FLAG_ZSTD = 0x8000


def elf_sections(data: bytes) -> dict[str, bytes]:
    """Section name -> bytes of a little-endian ELF64 file."""
    assert data[:4] == b"\x7fELF" and data[4] == 2, "not an ELF64 file"
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize) for i in range(shnum)]
    strtab_off = headers[shstrndx][4]
    out: dict[str, bytes] = {}
    for name_off, sh_type, _flags, _addr, off, size in headers:
        end = data.index(b"\0", strtab_off + name_off)
        name = data[strtab_off + name_off : end].decode()
        out[name] = b"" if sh_type == 8 else data[off : off + size]  # 8 = SHT_NOBITS
    return out


def walk_fatbin(section: bytes) -> list[list[tuple[int, int, int]]]:
    """Containers of a fatbin section, each a list of entries ``(kind, arch, flags)``."""
    containers: list[list[tuple[int, int, int]]] = []
    pos = 0
    while pos + 16 <= len(section):
        magic, _version, hsize, fat_size = struct.unpack_from("<IHHQ", section, pos)
        if magic != FATBIN_MAGIC:
            pos += 8  # tolerate alignment padding
            continue
        entries: list[tuple[int, int, int]] = []
        e, end = pos + hsize, pos + hsize + fat_size
        while e < end:
            kind, _ver, ehs, padded = struct.unpack_from("<HHIQ", section, e)
            arch = struct.unpack_from("<I", section, e + 28)[0]
            flags = struct.unpack_from("<Q", section, e + 40)[0]
            entries.append((kind, arch, flags))
            e += ehs + padded
        containers.append(entries)
        pos = end
    return containers


def fatbin_sections(path: Path) -> dict[str, list[list[tuple[int, int, int]]]]:
    secs = elf_sections(path.read_bytes())
    return {n: walk_fatbin(secs[n]) for n in (".nv_fatbin", "__nv_relfatbin") if n in secs}


# -- (a) the files are there and small --------------------------------------------------


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_exists_and_is_small(name: str) -> None:
    path = DATA / name
    assert path.is_file(), f"{name} missing: run `make fixtures`"
    assert 0 < path.stat().st_size <= MAX_FIXTURE


def test_fixtures_total_size() -> None:
    total = sum((DATA / n).stat().st_size for n in EXPECTED)
    assert total <= MAX_TOTAL


def test_every_fixture_file_is_listed() -> None:
    on_disk = {p.name for p in DATA.iterdir() if p.is_file()} - {"expected.json", "README.md"}
    assert on_disk == set(EXPECTED)


def test_expected_json_shape() -> None:
    kinds = {"shared-library", "cubin", "embedded-cubin", "host-only", "host-library", "object"}
    for name, e in EXPECTED.items():
        assert e["kind"] in kinds, name
        assert all(a.startswith("sm_") for a in e["sass"]), name
        assert all(a.startswith("compute_") for a in e["ptx"]), name
        assert e["compression"] in {"zstd", "lz4", "none", None}, name
        if e["kind"] == "host-only":
            assert e["jit_dispatch"], name
    compressions = {e["compression"] for e in EXPECTED.values()}
    assert {"zstd", "lz4", "none"} <= compressions


# -- (b) cuobjdump agrees with expected.json --------------------------------------------


@needs_cuobjdump
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_cuobjdump_lists_expected_archs(name: str) -> None:
    entry = EXPECTED[name]
    elf, ptx = list_archs(DATA / name, CUOBJDUMP)
    if entry["cuobjdump_visible"]:
        want_elf = {normalise_for_cuobjdump(a) for a in entry["sass"]}
        want_ptx = {normalise_for_cuobjdump(a) for a in entry["ptx"]}
    else:  # host-only / embedded byte arrays: cuobjdump sees no device code
        want_elf, want_ptx = set(), set()
    assert (elf, ptx) == (want_elf, want_ptx)


@needs_cuobjdump
@pytest.mark.parametrize(
    "name", sorted(n for n, e in EXPECTED.items() if e["kind"] in FATBIN_KINDS)
)
def test_cuobjdump_headers_keep_family_suffix(name: str) -> None:
    entry = EXPECTED[name]
    entries = header_entries(DATA / name, CUOBJDUMP)
    assert {e.arch for e in entries if e.kind == "elf"} == set(entry["sass"])
    assert {e.arch for e in entries if e.kind == "ptx"} == set(entry["ptx"])
    compressed_kinds = {("sass" if e.kind == "elf" else "ptx") for e in entries if e.compressed}
    assert compressed_kinds == set(entry["compressed"])
    if "__nv_relfatbin" not in entry["sections"]:  # -rdc: linked copies stay raw
        for e in entries:
            kind = "sass" if e.kind == "elf" else "ptx"
            assert e.compressed == (kind in entry["compressed"]), e


# -- stdlib fatbin walk agrees with expected.json ---------------------------------------


@pytest.mark.parametrize(
    "name", sorted(n for n, e in EXPECTED.items() if e["kind"] in FATBIN_KINDS)
)
def test_fatbin_headers_match_expected(name: str) -> None:
    entry = EXPECTED[name]
    sections = fatbin_sections(DATA / name)
    assert {s: len(c) for s, c in sections.items()} == entry["sections"]
    assert sum(len(c) for c in sections.values()) == entry["containers"]
    sass: set[str] = set()
    ptx: set[str] = set()
    schemes: set[str] = set()
    for containers in sections.values():
        for container in containers:
            for kind, arch, flags in container:
                suffix = "a" if flags & 0x100000 else "f" if flags & 0x200000 else ""
                if kind == 2:
                    sass.add(f"sm_{arch}{suffix}")
                elif kind == 1:
                    ptx.add(f"compute_{arch}{suffix}")
                if flags & FLAG_ZSTD:
                    schemes.add("zstd")
                if flags & FLAG_LZ4:
                    schemes.add("lz4")
    assert sass == set(entry["sass"])
    assert ptx == set(entry["ptx"])
    want = entry["compression"]
    assert schemes == (set() if want == "none" else {want})


@pytest.mark.parametrize(
    "name", sorted(n for n, e in EXPECTED.items() if e["kind"] not in FATBIN_KINDS)
)
def test_non_fatbin_files_have_no_fatbin_section(name: str) -> None:
    data = (DATA / name).read_bytes()
    secs = elf_sections(data)
    assert ".nv_fatbin" not in secs and "__nv_relfatbin" not in secs
    if EXPECTED[name]["kind"] == "cubin":
        assert struct.unpack_from("<H", data, 18)[0] == 190  # EM_CUDA


def test_embedded_cubin_holds_the_sm90a_cubin() -> None:
    cubin = (DATA / "saxpy_sm90a.cubin").read_bytes()
    assert cubin in (DATA / "libsw_embedded_cubin_sm90a.so").read_bytes()


@pytest.mark.parametrize("name", sorted(n for n, e in EXPECTED.items() if e["kind"] == "host-only"))
def test_dispatcher_strings(name: str) -> None:
    entry = EXPECTED[name]
    data = (DATA / name).read_bytes()
    for names in entry["jit_names"].values():
        for n in names:
            assert n.encode() + b"\0" in data, n
    assert entry["version_string"].encode() in data
    has_sm120 = "sm_120" in entry["jit_dispatch"]
    assert (b"arch_major == 12\0" in data) == has_sm120
    assert (b"-gencode=arch=compute_120f,code=sm_120f" in data) == has_sm120
    assert (b"SM120FP8Gemm" in data) == has_sm120
    assert b"arch_major == 9\0" in data and b"arch_major == 10\0" in data
    assert (b"sm120_" in data) == has_sm120


# -- (c) provenance ---------------------------------------------------------------------


def test_readme_references_build_script() -> None:
    readme = (DATA / "README.md").read_text()
    assert SCRIPT in readme and "make fixtures" in readme
    assert (ROOT / SCRIPT).is_file()
    samples_readme = (SAMPLES / "README.md").read_text()
    assert SCRIPT in samples_readme


# -- demo sample wheels -----------------------------------------------------------------


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


@pytest.mark.parametrize("wheel", sorted(SAMPLE_EXPECTED))
def test_sample_wheel_is_a_valid_wheel(wheel: str) -> None:
    path = SAMPLES / wheel
    assert path.stat().st_size <= MAX_WHEEL
    version = wheel.split("-")[1]
    dist = f"vllm-{version}.dist-info"
    with zipfile.ZipFile(path) as zf:
        assert zf.testzip() is None
        names = set(zf.namelist())
        meta = zf.read(f"{dist}/METADATA").decode()
        assert f"Version: {version}\n" in meta and "Name: vllm\n" in meta
        assert "Tag: cp38-abi3-linux_x86_64" in zf.read(f"{dist}/WHEEL").decode()
        rows = [r.split(",") for r in zf.read(f"{dist}/RECORD").decode().splitlines()]
        assert {r[0] for r in rows} == names
        for member, digest, size in rows:
            if member == f"{dist}/RECORD":
                assert (digest, size) == ("", "")
                continue
            data = zf.read(member)
            assert digest == _record_hash(data) and int(size) == len(data), member
        expected = SAMPLE_EXPECTED[wheel]
        assert set(expected["members"]) <= names
        impls = "vllm/third_party/deep_gemm/include/deep_gemm/impls/"
        assert sorted(n.removeprefix(impls) for n in names if n.startswith(impls)) == sorted(
            expected["deep_gemm_headers"]
        )


@pytest.mark.parametrize("wheel", sorted(SAMPLE_EXPECTED))
def test_sample_wheel_members(wheel: str, tmp_path: Path) -> None:
    expected = SAMPLE_EXPECTED[wheel]["members"]
    with zipfile.ZipFile(SAMPLES / wheel) as zf:
        for member, want in expected.items():
            data = zf.read(member)
            if want["jit_dispatch"]:
                for names in want["jit_names"].values():
                    for n in names:
                        assert n.encode() + b"\0" in data, (member, n)
                assert (b"sm120_" in data) == ("sm_120" in want["jit_dispatch"])
                continue
            sections = elf_sections(data)
            entries = [e for c in walk_fatbin(sections[".nv_fatbin"]) for e in c]
            sass = {
                f"sm_{a}" + ("a" if f & 0x100000 else "f" if f & 0x200000 else "")
                for k, a, f in entries
                if k == 2
            }
            ptx = {f"compute_{a}" for k, a, _ in entries if k == 1}
            assert (sass, ptx) == (set(want["sass"]), set(want["ptx"])), member
            if CUOBJDUMP is not None:
                out = tmp_path / member.replace("/", "_")
                out.write_bytes(data)
                elf, cu_ptx = list_archs(out, CUOBJDUMP)
                assert elf == {normalise_for_cuobjdump(a) for a in want["sass"]}
                assert cu_ptx == set(want["ptx"])


def test_sample_story_differs_only_in_deep_gemm() -> None:
    good, bad = (
        SAMPLES / "vllm-0.26.1rc1.dev77+ga6b593d2-cp38-abi3-linux_x86_64.whl",
        SAMPLES / "vllm-0.26.1rc1.dev181+gf5a76426-cp38-abi3-linux_x86_64.whl",
    )
    with zipfile.ZipFile(good) as g, zipfile.ZipFile(bad) as b:
        for member in ("vllm/_C.abi3.so", "vllm/_moe_C.abi3.so"):
            assert g.read(member) == b.read(member)
        dg = "vllm/third_party/deep_gemm/_C.abi3.so"
        assert b"DeepGEMM a6b593d2" in g.read(dg)
        assert b"DeepGEMM f5a76426" in b.read(dg)
        assert b"arch_major == 12" in g.read(dg)
        assert b"arch_major == 12" not in b.read(dg)
