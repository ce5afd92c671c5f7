"""Tests for the one-pass stream scanner: fixtures, chunking, truncation, corruption, limits."""

from __future__ import annotations

import itertools
import json
import struct
import tracemalloc
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from servewise.formats import elf, fatbin
from servewise.formats._reader import BytesReader
from servewise.formats.stream import StreamFindings, StreamScanner
from support.paths import CUDA

DATA = CUDA
EXPECTED: dict[str, Any] = json.loads((DATA / "expected.json").read_text())["files"]
NAMES = sorted(EXPECTED)
_BYTES = {name: (DATA / name).read_bytes() for name in NAMES}
WITH_CONTAINERS = [name for name in NAMES if EXPECTED[name]["containers"]]
SMALL = 12_000


def scan(data: bytes, chunk: int | None = None, **options: Any) -> StreamFindings:
    """Scan ``data`` fed in ``chunk``-byte pieces (whole when ``None``)."""
    scanner = StreamScanner(**options)
    step = chunk or max(len(data), 1)
    for start in range(0, len(data), step):
        scanner.feed(data[start : start + step])
    return scanner.finish()


def scan_cuts(data: bytes, cuts: list[int]) -> StreamFindings:
    """Scan ``data`` split at the offsets ``cuts``."""
    bounds = sorted({0, len(data), *(c % (len(data) + 1) for c in cuts)})
    scanner = StreamScanner()
    for a, b in itertools.pairwise(bounds):
        scanner.feed(data[a:b])
    return scanner.finish()


def archs(found: StreamFindings) -> tuple[list[str], list[str]]:
    """Sorted distinct SASS names (fatbin entries and raw cubins) and PTX names."""
    sass = {e.name for c in found.containers for e in c.entries if e.is_sass}
    sass |= {c.info.arch.sass_name for c in found.cubins if c.info is not None}
    ptx = {e.name for c in found.containers for e in c.entries if e.is_ptx}
    return sorted(sass), sorted(ptx)


def shape(found: StreamFindings) -> list[tuple[int, int, list[tuple[int, str, str, int]]]]:
    """Containers as (offset, fat size, [(entry offset, arch, kind, header size)])."""
    return [
        (
            c.header.offset,
            c.header.fat_size,
            [(e.offset, e.arch.sass_name, e.kind_name, e.header_size) for e in c.entries],
        )
        for c in found.containers
    ]


# -- fixtures ---------------------------------------------------------------------


def _chunk_cases() -> list[tuple[str, int | None]]:
    cases: list[tuple[str, int | None]] = []
    for name in NAMES:
        sizes: list[int | None] = [7, 997, 4096, None]
        if len(_BYTES[name]) <= SMALL:
            sizes.insert(0, 1)
        cases.extend((name, size) for size in sizes)
    return cases


@pytest.mark.parametrize(("name", "chunk"), _chunk_cases())
def test_fixture_archs_and_containers(name: str, chunk: int | None) -> None:
    info = EXPECTED[name]
    data = _BYTES[name]
    found = scan(data, chunk)
    assert archs(found) == (sorted(info["sass"]), sorted(info["ptx"]))
    assert len(found.containers) == (info["containers"] or 0)
    assert found.warnings == ()
    assert found.size == len(data)
    if info["kind"] == "cubin":
        assert found.host_machine is None
        assert [c.offset for c in found.cubins] == [0]
    else:
        assert found.host_machine == 62  # x86-64 host library / object
        assert len(found.cubins) == (1 if info["kind"] == "embedded-cubin" else 0)
    if chunk is not None:
        assert found == scan(data)


@pytest.mark.parametrize("name", [n for n in NAMES if EXPECTED[n]["compression"]])
def test_fixture_compression(name: str) -> None:
    info = EXPECTED[name]
    found = scan(_BYTES[name], 997)
    entries = [e for c in found.containers for e in c.entries]
    schemes = {e.compression for e in entries if e.is_compressed}
    kinds = sorted({e.kind_name for e in entries if e.is_compressed})
    assert schemes == ({info["compression"]} if info["compression"] != "none" else set())
    assert kinds == sorted(info["compressed"])


@pytest.mark.parametrize("name", WITH_CONTAINERS)
def test_matches_section_parser(name: str) -> None:
    """The stream finds exactly the containers the section-based parser finds."""
    data = _BYTES[name]
    reader = BytesReader(data)
    sections = elf.parse_sections(reader, elf.parse_elf_header(reader))
    reference: list[fatbin.FatbinContainer] = []
    per_section: dict[str, int] = {}
    for section_name in (".nv_fatbin", "__nv_relfatbin"):
        section = elf.section_by_name(sections, section_name)
        if section is not None:
            found = fatbin.parse_containers(reader, section.offset, section.size)
            per_section[section_name] = len(found)
            reference.extend(found)
    reference.sort(key=lambda c: c.header.offset)
    assert per_section == EXPECTED[name]["sections"]
    for chunk in (7, 4096, None):
        streamed = scan(data, chunk)
        assert [c.header for c in streamed.containers] == [c.header for c in reference]
        assert list(streamed.containers) == reference  # offsets, archs, kinds, flags, sizes


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(NAMES),
    cuts=st.lists(st.integers(min_value=0, max_value=40_000), max_size=40),
)
def test_random_chunk_boundaries_never_change_the_result(name: str, cuts: list[int]) -> None:
    data = _BYTES[name]
    assert scan_cuts(data, cuts) == scan(data)


def test_empty_and_finish_twice() -> None:
    scanner = StreamScanner()
    scanner.feed(b"")
    first = scanner.finish()
    assert first.size == 0 and first.containers == () and first.cubins == ()
    assert first.warnings == () and first.host_machine is None
    assert scanner.finish() == first


def test_feed_accepts_memoryview_and_bytearray() -> None:
    data = _BYTES["libsw_multiarch.so"]
    scanner = StreamScanner()
    scanner.feed(memoryview(data)[:5000])
    scanner.feed(bytearray(data[5000:]))
    assert scanner.finish() == scan(data)


# -- synthetic containers -----------------------------------------------------------


def entry(
    arch: int = 90,
    *,
    kind: int = 2,
    flags: int = 0x11,
    payload: bytes = b"\xaa" * 24,
    padded: int | None = None,
) -> bytes:
    """A 64-byte entry header and its payload."""
    size = len(payload) if padded is None else padded
    head = struct.pack(
        "<HHIQIIHHIIIQQQ", kind, 0x0101, 64, size, 0, 0, 8, 1, arch, 0, 0, flags, 0, 0
    )
    return head + payload


def container(*entries: bytes, fat_size: int | None = None) -> bytes:
    """A container header followed by ``entries``."""
    body = b"".join(entries)
    size = len(body) if fat_size is None else fat_size
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, size) + body


def test_synthetic_containers_in_host_bytes() -> None:
    data = (
        b"\0sm90_host\0"
        + container(entry(90, flags=0x100011), entry(120, kind=1, flags=0x8011))
        + b"\0\0\0\0"
        + container(entry(100, flags=0x200011))
        + b"\0sm120_after\0"
    )
    for chunk in (1, 3, 16, 64, None):
        found = scan(data, chunk)
        assert archs(found) == (["sm_100f", "sm_90a"], ["compute_120"])
        assert [c.header.offset for c in found.containers] == [11, 11 + 16 + 2 * 88 + 4]
        assert found.evidence.counts() == {"sm_120": 1, "sm_90": 1}
        assert found.warnings == ()


def test_magic_in_host_bytes_that_is_not_a_container() -> None:
    data = b"\0sm90_a\0" + b"\x50\xed\x55\xba" + b"\x02\x00" + b"\0" * 30 + b"\0sm100_b\0"
    for chunk in (1, 5, None):
        found = scan(data, chunk)
        assert found.containers == () and found.warnings == ()
        assert found.evidence.counts() == {"sm_90": 1, "sm_100": 1}


def test_huge_payload_in_small_container_is_refused() -> None:
    """An entry whose payload runs past its container's end: the container is abandoned."""
    data = container(entry(90), entry(100, padded=2**60 - 8), fat_size=88 * 2) + b"\0" * 200
    found = scan(data, 64)
    assert len(found.containers) == 1
    assert [e.arch.sass_name for e in found.containers[0].entries] == ["sm_90"]
    assert len(found.warnings) == 1 and "offset 0x0" in found.warnings[0]


def test_huge_container_is_skipped_in_bounded_memory() -> None:
    """A container and entry declaring 2**60 bytes: skipped without buffering, then warned."""
    head = container(entry(90, padded=2**60), fat_size=2**60 + 64)[: 16 + 64]
    tail = b"\0" * 2**20
    scanner = StreamScanner()
    tracemalloc.start()
    try:
        scanner.feed(head)
        for _ in range(48):
            scanner.feed(tail)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    found = scanner.finish()
    assert peak < 6 * 2**20  # a few chunks, never the declared size
    assert len(found.containers) == 1 and found.containers[0].entries[0].padded_size == 2**60
    assert len(found.warnings) == 1 and "declares" in found.warnings[0]
    assert found.size == len(head) + 48 * len(tail)


# -- truncation and corruption ----------------------------------------------------


def _spans(found: StreamFindings) -> list[tuple[int, int]]:
    """Byte ranges a cut inside of must be reported: containers (once their magic is whole)
    and cubins (once their ``e_machine`` is)."""
    spans = [(c.header.offset + 3, c.header.end) for c in found.containers]
    spans += [(c.offset + 20, c.offset + c.info.size) for c in found.cubins if c.info is not None]
    return spans


@pytest.mark.parametrize(
    "name",
    ["libsw_multiarch.so", "libsw_two_sources.so", "libsw_rdc.so", "libsw_sm90a_lz4.so",
     "libsw_embedded_cubin_sm90a.so", "saxpy_sm120f.cubin", "libdispatch_with_sm120.so"],
)
def test_truncated_files_never_raise_and_warn_inside_containers(name: str) -> None:
    data = _BYTES[name]
    whole = scan(data)
    spans = _spans(whole)
    cuts = set(range(0, len(data), 53))
    for start, end in spans:
        cuts.update(range(start, min(end, len(data)), 7))
        cuts.update((start + 1, start + 15, start + 16, start + 17, start + 80, end - 1))
    for cut in sorted(cuts):
        found = scan(data[:cut], 997)
        assert found.size == cut
        inside = any(start < cut < end for start, end in spans)
        if inside:
            assert found.warnings, cut
        elif cut > max((end for _, end in spans), default=0):
            # Cut after the GPU code, only the dynamic symbols (at the file's end) may be lost.
            assert all(w.startswith("dynamic symbols not read") for w in found.warnings), cut


def _mutations(data: bytes, found: StreamFindings) -> list[tuple[int, int]]:
    """(offset, xor) pairs hitting every container header byte and entry header byte."""
    places: list[int] = []
    for c in found.containers:
        places.extend(range(c.header.offset, c.header.offset + 16))
        for e in c.entries:
            places.extend(range(e.offset, e.offset + e.header_size))
    return [(place, xor) for place in places for xor in (0x01, 0x80, 0xFF)]


@pytest.mark.parametrize("name", ["libsw_multiarch.so", "libsw_rdc.so", "libsw_sm90a_lz4ptx.so"])
def test_corrupted_headers_never_raise(name: str) -> None:
    data = _BYTES[name]
    clean = scan(data)
    for place, xor in _mutations(data, clean):
        broken = bytearray(data)
        broken[place] ^= xor
        found = scan(bytes(broken), 4096)
        assert found.size == len(data)
        assert len(found.containers) <= len(clean.containers) + 1


@pytest.mark.parametrize("name", ["saxpy_sm90a.cubin", "libsw_embedded_cubin_sm90a.so"])
def test_corrupted_cubin_headers_never_raise(name: str) -> None:
    data = _BYTES[name]
    at = scan(data).cubins[0].offset
    for place in range(at, at + 64):
        for xor in (0x01, 0x40, 0xFF):
            broken = bytearray(data)
            broken[place] ^= xor
            found = scan(bytes(broken), 512)
            assert found.size == len(data)


def _elf_header(**fields: int) -> bytes:
    values = {"ehsize": 64, "shoff": 0, "shnum": 0, "shentsize": 64, "phoff": 0, "phnum": 0,
              "phentsize": 56, "flags": 0x06005A04} | fields
    ident = b"\x7fELF" + bytes([2, 1, 1, 0x41, 8]) + b"\0" * 7
    return ident + struct.pack(
        "<HHIQQQIHHHHHH", 2, 190, 1, 0, values["phoff"], values["shoff"], values["flags"],
        values["ehsize"], values["phentsize"], values["phnum"], values["shentsize"],
        values["shnum"], 0,
    )


@pytest.mark.parametrize(
    "header",
    [
        _elf_header(shoff=64, shnum=3, shentsize=10),  # section entries too small
        _elf_header(shoff=4096, shnum=0),  # extended numbering beyond the prefix
        _elf_header(ehsize=0),  # spans nothing: must not loop forever
        _elf_header(phnum=2, phentsize=8),
    ],
)
def test_broken_cuda_elf_headers_are_warned_not_raised(header: bytes) -> None:
    data = b"\0sm90_a\0" + header + b"\0" * 100 + b"\0sm100_b\0"
    for chunk in (1, 13, None):
        found = scan(data, chunk)
        assert found.cubins == ()
        assert len(found.warnings) == 1 and "offset 0x8" in found.warnings[0]
        assert found.evidence.counts() == {"sm_90": 1, "sm_100": 1}


_MAGIC_BITS = st.sampled_from(
    [b"\x50\xed\x55\xba", b"\x7fELF", b"\x01\x00\x10\x00", b"\x02\x00\x01\x01", b"\xbe\x00",
     b"\x7fELF\x02\x01\x01A\x08", b"sm90_x", b"\0"]
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    parts=st.lists(st.one_of(st.binary(max_size=80), _MAGIC_BITS), max_size=40),
    cuts=st.lists(st.integers(min_value=0, max_value=4000), max_size=10),
)
def test_random_bytes_never_raise_and_chunking_is_irrelevant(
    parts: list[bytes], cuts: list[int]
) -> None:
    data = b"".join(parts)
    whole = scan(data)
    assert whole.size == len(data)
    assert scan_cuts(data, cuts) == whole


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(WITH_CONTAINERS),
    edits=st.lists(
        st.tuples(st.integers(min_value=0), st.integers(min_value=1, max_value=255)),
        min_size=1,
        max_size=6,
    ),
)
def test_random_corruption_never_raises(name: str, edits: list[tuple[int, int]]) -> None:
    data = bytearray(_BYTES[name])
    spans = _spans(scan(bytes(data)))
    for where, xor in edits:
        start, end = spans[where % len(spans)]
        data[start + (where // len(spans)) % min(end - start, 256)] ^= xor
    found = scan(bytes(data), 997)
    assert found.size == len(data)
    assert found == scan(bytes(data))


# -- raw cubins and the buffer limit -----------------------------------------------------


def test_cubin_over_the_limit_reports_e_flags_arch() -> None:
    data = _BYTES["saxpy_sm90a.cubin"]
    found = scan(data, 512, cubin_limit=1000)
    assert len(found.cubins) == 1
    cubin = found.cubins[0]
    assert cubin.offset == 0 and cubin.info is None and cubin.arch_hint == "sm_90"
    assert len(found.warnings) == 1
    assert "0x0" in found.warnings[0] and "1000" in found.warnings[0]
    assert scan(data, None, cubin_limit=len(data)).cubins[0].info is not None


def test_embedded_cubin_over_the_limit_is_skipped_and_scan_continues() -> None:
    data = _BYTES["libsw_embedded_cubin_sm90a.so"]
    full = scan(data)
    (cubin,) = full.cubins
    assert cubin.info is not None and cubin.info.arch.sass_name == "sm_90a"
    after = data + b"\0sm120_tail_kernel\0"
    for chunk in (7, 4096, None):
        found = scan(after, chunk, cubin_limit=1024)
        assert [(c.offset, c.info, c.arch_hint) for c in found.cubins] == [
            (cubin.offset, None, "sm_90")
        ]
        assert len(found.warnings) == 1 and f"{cubin.offset:#x}" in found.warnings[0]
        assert found.evidence.counts() == {"sm_120": 1}


def test_cubin_over_the_limit_cut_short_is_warned() -> None:
    data = _BYTES["saxpy_sm120f.cubin"]
    found = scan(data[:3000], 256, cubin_limit=1000)
    assert found.cubins[0].arch_hint == "sm_120"
    assert len(found.warnings) == 2 and "ends" in found.warnings[1]


def test_cubin_cut_short_under_the_limit() -> None:
    data = _BYTES["saxpy_sm80.cubin"]
    found = scan(data[:2000], 100)
    assert [(c.offset, c.info, c.arch_hint) for c in found.cubins] == [(0, None, "sm_80")]
    assert len(found.warnings) == 1 and "cut short" in found.warnings[0]


def test_two_cubins_back_to_back() -> None:
    data = _BYTES["saxpy_sm80.cubin"] + _BYTES["saxpy_sm120a.cubin"]
    for chunk in (1, 4096, None):
        found = scan(data, chunk)
        assert [c.offset for c in found.cubins] == [0, len(_BYTES["saxpy_sm80.cubin"])]
        assert archs(found) == (["sm_120a", "sm_80"], [])
        assert found.warnings == ()


def test_host_bytes_between_code_segments_reach_the_evidence_once() -> None:
    """With two machine-code ranges in one window, each host byte is fed once, none of code."""

    class Recorder:
        def __init__(self) -> None:
            self.fed: list[bytes] = []
            self.cuts = 0

        def feed(self, chunk: bytes) -> None:
            self.fed.append(chunk)

        def cut(self) -> None:
            self.cuts += 1

    scanner = StreamScanner()
    recorder = Recorder()
    scanner._evidence = recorder  # type: ignore[assignment]
    scanner._dynamic._code = ((10, 20), (30, 40))
    scanner._buf = bytearray(range(50))
    scanner._host_evidence(50)
    assert recorder.fed == [bytes(range(10)), bytes(range(20, 30)), bytes(range(40, 50))]
    assert recorder.cuts == 2
