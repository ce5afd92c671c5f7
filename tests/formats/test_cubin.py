"""Tests for raw cubin parsing: SM and a/f suffix for ABI v1 and v2, notes, span."""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path
from typing import Any

import pytest

from servewise.archs import Arch
from servewise.errors import FormatError
from servewise.formats import cubin
from servewise.formats._reader import BytesReader
from support.binaries import build_elf, compat, make_cubin, note
from support.paths import CUDA, cuda_fixtures

DATA = CUDA


def info_of(data: bytes) -> cubin.CubinInfo:
    """Parse ``data`` as a cubin."""
    return cubin.parse_cubin(BytesReader(data))


def test_v1_plain_and_a() -> None:
    plain = info_of(make_cubin(0x005A055A, abi=7, osabi=51, version=129))
    assert plain.arch == Arch(90) and plain.toolkit_version == 129 and plain.virtual_arch == 90
    assert plain.abi_version == 7 and plain.osabi == 51 and plain.suffix_source == "none"
    accel = info_of(make_cubin(0x005A0D5A, abi=7, osabi=51, version=129))
    assert accel.arch == Arch(90, "a") and accel.suffix_source == "e_flags"


def test_v2_suffix_from_tkinfo_and_compat() -> None:
    assert info_of(make_cubin(0x06007802, options="-arch sm_120f -m 64")).arch == Arch(120, "f")
    a = info_of(make_cubin(0x06005A04, options="-arch sm_90a -m 64", virtual=90, a_flag=1))
    assert a.arch == Arch(90, "a") and a.suffix_source == "tkinfo"
    assert a.tool_args == "-arch sm_90a -m 64" and a.virtual_arch == 90 and a.toolkit_version == 130
    compat_only = info_of(make_cubin(0x06006402, a_flag=1))
    assert compat_only.arch == Arch(100, "a") and compat_only.suffix_source == "compat"
    plain = info_of(make_cubin(0x06006402, options="-arch sm_100 -m 64", a_flag=0))
    assert plain.arch == Arch(100) and plain.suffix_source == "none"
    # an option naming another SM is not trusted for the suffix
    assert info_of(make_cubin(0x06006402, options="-arch sm_90a")).arch == Arch(100)


def test_v2_virtual_arch_differs() -> None:
    assert info_of(make_cubin(0x06005A04, virtual=80)).virtual_arch == 80


def test_unknown_abi_disambiguated_by_low_byte() -> None:
    assert info_of(make_cubin(0x0050, abi=0, osabi=0, version=110)).arch == Arch(80)
    assert info_of(make_cubin(0x06007802, abi=0, osabi=0)).arch == Arch(120)


def test_size_and_span() -> None:
    data = make_cubin(0x06005A04, options="-arch sm_90 -m 64")
    parsed = info_of(data)
    assert parsed.size == len(data)
    assert cubin.cubin_span(data[:64]) == len(data)
    embedded = b"\0" * 100 + data + b"trailing"
    assert cubin.parse_cubin(BytesReader(embedded[100:])).size == len(data)


def test_cubin_span_not_cuda() -> None:
    assert cubin.cubin_span(b"MZ" + b"\0" * 62) is None
    assert cubin.cubin_span(build_elf([], machine=62)[:64]) is None
    assert cubin.cubin_span(b"\x7fELF") is None
    with pytest.raises(FormatError):  # a CUDA ELF whose header does not fit in the prefix
        cubin.cubin_span(make_cubin(0x06005A04)[:40])


def test_wrong_machine_and_bad_flags() -> None:
    with pytest.raises(FormatError, match="machine"):
        info_of(build_elf([], machine=62))
    with pytest.raises(FormatError, match="e_flags"):
        info_of(make_cubin(0x06000002))


def test_malformed_notes_and_compat() -> None:
    truncated_note = struct.pack("<III", 12, 4000, 2000) + b"NVIDIA Corp\0"
    with pytest.raises(FormatError):
        info_of(make_cubin(0x06005A04, extra=[(cubin.NOTE_TKINFO, 7, truncated_note)]))
    with pytest.raises(FormatError):
        info_of(make_cubin(0x06005A04, extra=[(cubin.NOTE_TKINFO, 7, b"\x01\x02\x03\x04")]))
    with pytest.raises(FormatError):
        info_of(make_cubin(0x06005A04, extra=[(cubin.NV_COMPAT, 0x70000086, b"\x04\x0b\xff\x00")]))
    with pytest.raises(FormatError):
        info_of(make_cubin(0x06005A04, extra=[(cubin.NV_COMPAT, 0x70000086, b"\x09\x01\x00\x00")]))
    # a tkinfo note of an unknown layout version is ignored
    odd = note(b"NVIDIA Corp", cubin.NT_TKINFO, struct.pack("<6I", 3, 0, 0, 0, 0, 0))
    assert info_of(make_cubin(0x06005A04, extra=[(cubin.NOTE_TKINFO, 7, odd)])).tool_args is None


def test_compat_attributes() -> None:
    attributes = cubin.compat_attributes(compat(1))
    assert attributes[9] == b"\x01\x00" and attributes[0x0B] == b"\x09" + b"\0" * 7


needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")


@needs_nvcc
@pytest.mark.parametrize(
    "target", ["sm_80", "sm_90", "sm_90a", "sm_100a", "sm_100f", "sm_120", "sm_120a", "sm_120f"]
)
def test_nvcc_cubins(tmp_path: Path, target: str) -> None:
    source = tmp_path / "k.cu"
    source.write_text("__global__ void k(float* x) { x[threadIdx.x] *= 2.0f; }\n")
    output = tmp_path / f"{target}.cubin"
    virtual = target.replace("sm_", "compute_")
    subprocess.run(
        [
            "nvcc",
            "-cubin",
            "-gencode",
            f"arch={virtual},code={target}",
            "-o",
            str(output),
            str(source),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    data = output.read_bytes()
    parsed = info_of(data)
    assert parsed.arch == Arch.parse(target)
    assert parsed.size == len(data) == cubin.cubin_span(data[:64])
    assert parsed.tool_args is not None and target in parsed.tool_args
    assert parsed.virtual_arch == parsed.arch.number


CUBINS = cuda_fixtures(("cubin",))
EMBEDDED = cuda_fixtures(("embedded-cubin",))


@pytest.mark.skipif(not CUBINS, reason="tests/data/cuda cubin fixtures not built yet")
@pytest.mark.parametrize(("name", "facts"), CUBINS, ids=[name for name, _ in CUBINS])
def test_committed_cubin(name: str, facts: dict[str, Any]) -> None:
    data = (DATA / name).read_bytes()
    parsed = info_of(data)
    assert [parsed.arch.sass_name] == facts["sass"]
    assert parsed.size == len(data) == cubin.cubin_span(data[:64])


@pytest.mark.skipif(not EMBEDDED, reason="tests/data/cuda embedded-cubin fixture not built yet")
@pytest.mark.parametrize(("name", "facts"), EMBEDDED, ids=[name for name, _ in EMBEDDED])
def test_committed_embedded_cubin(name: str, facts: dict[str, Any]) -> None:
    """Scanning a host library for ``\\x7fELF`` finds the embedded cubins via ``cubin_span``."""
    data = (DATA / name).read_bytes()
    found = set()
    position = data.find(b"\x7fELF", 1)
    while position >= 0:
        span = cubin.cubin_span(data[position : position + 64])
        if span is not None:
            found.add(info_of(data[position : position + span]).arch.sass_name)
        position = data.find(b"\x7fELF", position + 1)
    assert sorted(found) == sorted(facts["sass"])
