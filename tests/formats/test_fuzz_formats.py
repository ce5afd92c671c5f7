"""Fuzzing the pure parsers: on random and mutated input only FormatError may escape, quickly."""

from __future__ import annotations

import struct
from collections.abc import Callable

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from servewise.errors import FormatError
from servewise.formats import cubin, elf, fatbin
from servewise.formats._reader import BytesReader
from support.binaries import build_elf, container, entry, make_cubin

FUZZ = settings(max_examples=300, deadline=500, suppress_health_check=[HealthCheck.too_slow])

FATBIN_SEED = (
    container(entry(arch=90, flags=0x100011), entry(arch=120, header_size=112, flags=0x1200011))
    + b"\0" * 16
    + container(entry(b".target sm_80\n", kind=1, arch=80, header_size=80, isa=(9, 0)))
)
ELF_SEED = build_elf([(".nv_fatbin", 1, FATBIN_SEED), (".bss", 8, b"\0" * 64)])
CUBIN_SEED = make_cubin(0x06005A04, options="-arch sm_90a -m 64", virtual=90, a_flag=1)
SEEDS = [FATBIN_SEED, ELF_SEED, CUBIN_SEED]


def only_format_errors(call: Callable[[], object]) -> None:
    """Run ``call``; a FormatError is fine, any other exception fails the test."""
    try:
        call()
    except FormatError as error:
        assert error.expected and error.found and error.offset >= -1


def elf_all(data: bytes) -> object:
    """Header, sections and every section's bytes."""
    reader = BytesReader(data)
    header = elf.parse_elf_header(reader)
    sections = elf.parse_sections(reader, header)
    return [elf.read_section(reader, s) for s in sections if s.size < 1 << 20]


def fatbin_all(data: bytes) -> object:
    """Containers, and every entry's payload decompressed under a small bomb limit."""
    reader = BytesReader(data)
    results = []
    for found in fatbin.parse_containers(reader):
        for item in found.entries:
            payload = fatbin.read_payload(reader, item)
            results.append(fatbin.decompress_payload(item, payload, max_size=1 << 20))
    return results


def entry_direct(data: bytes) -> object:
    """``entry_header_size`` then ``parse_entry_header`` as a streaming caller uses them."""
    size = fatbin.entry_header_size(data[:64])
    return fatbin.parse_entry_header(data[:size], 0x1000, 0x1000 + len(data))


def everything(data: bytes) -> None:
    """Every parser entry point on ``data``."""
    only_format_errors(lambda: elf_all(data))
    only_format_errors(lambda: fatbin_all(data))
    only_format_errors(lambda: entry_direct(data))
    only_format_errors(lambda: fatbin.parse_container_header(data))
    only_format_errors(lambda: cubin.parse_cubin(BytesReader(data)))
    only_format_errors(lambda: cubin.cubin_span(data[:64]))


@FUZZ
@given(st.binary(max_size=4096))
def test_random_bytes(data: bytes) -> None:
    everything(data)


@FUZZ
@given(st.binary(max_size=512))
def test_random_bytes_behind_magics(tail: bytes) -> None:
    everything(b"\x7fELF\x02\x01\x01\x41\x08" + tail)
    everything(fatbin.CONTAINER_MAGIC_BYTES + b"\x01\x00\x10\x00" + tail)


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    """A valid seed with a few bytes overwritten, words replaced, and maybe truncated."""
    data = bytearray(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(1, 8))):
        position = draw(st.integers(0, len(data) - 1))
        if draw(st.booleans()) and position + 8 <= len(data):
            value = draw(st.sampled_from([0, 1, 0xFF, 0xFFFF, 0xFFFFFFFF, 1 << 63, 64, 4096]))
            struct.pack_into("<Q", data, position, value)
        else:
            data[position] = draw(st.integers(0, 255))
    if draw(st.booleans()):
        data = data[: draw(st.integers(0, len(data)))]
    return bytes(data)


@FUZZ
@given(mutated())
def test_mutated_valid_inputs(data: bytes) -> None:
    everything(data)


def test_seeds_are_valid() -> None:
    assert len(fatbin.parse_containers(BytesReader(FATBIN_SEED))) == 2
    reader = BytesReader(ELF_SEED)
    sections = elf.parse_sections(reader, elf.parse_elf_header(reader))
    assert elf.section_by_name(sections, ".nv_fatbin") is not None
    assert cubin.parse_cubin(BytesReader(CUBIN_SEED)).arch.sass_name == "sm_90a"
