"""Tests for JIT-dispatch evidence: names, classes, asserts, gencode flags, headers, git hashes."""

from __future__ import annotations

import itertools
import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from servewise.archs import Arch
from servewise.formats.dispatch_strings import (
    MAX_NAME,
    DispatchStringCollector,
    DispatchStrings,
    header_arch,
)
from support.paths import CUDA

DATA = CUDA
EXPECTED = json.loads((DATA / "expected.json").read_text())["files"]
_KERNEL_NAME = re.compile(r"^sm\d+[af]?_")


def collect(*chunks: bytes) -> DispatchStrings:
    """DispatchStrings from ``chunks`` fed in order as one host region."""
    collector = DispatchStringCollector()
    for chunk in chunks:
        collector.feed(chunk)
    return collector.result()


def split_everywhere(data: bytes) -> list[DispatchStrings]:
    """DispatchStrings from ``data`` cut in two at every offset."""
    return [collect(data[:at], data[at:]) for at in range(len(data) + 1)]


# -- what counts as evidence ---------------------------------------------------


def test_name_at_string_start_is_evidence() -> None:
    found = collect(b"\0sm90_foo\0")
    assert found.names == {"sm_90": ("sm90_foo",)}
    assert found.counts() == {"sm_90": 1}
    assert found.archs == (Arch(90),)


def test_name_at_region_start_is_evidence() -> None:
    assert collect(b"sm120_fp8_gemm_1d1d").names == {"sm_120": ("sm120_fp8_gemm_1d1d",)}


@pytest.mark.parametrize("text", [b"xsm90_foo", b"_sm90_foo", b"Zsm120_bar", b"cutlass_sm90_gemm"])
def test_name_inside_a_word_is_not_evidence(text: bytes) -> None:
    assert collect(b"\0" + text + b"\0").names == {}
    assert collect(text).names == {}


def test_mangled_name_after_length_digits() -> None:
    found = collect(b"_ZN9deep_gemm15sm120_fp8_gemm_aE\0")
    assert found.names == {"sm_120": ("sm120_fp8_gemm_aE",)}


def test_suffixes_are_kept() -> None:
    found = collect(b"\0sm90a_gemm\0sm100f_gemm\0")
    assert found.names == {"sm_100f": ("sm100f_gemm",), "sm_90a": ("sm90a_gemm",)}


def test_mangled_class_name() -> None:
    found = collect(b"_ZN9deep_gemm13SM120ArchSpec4runEv\0")
    assert found.names == {"sm_120": ("SM120ArchSpec4runEv",)}
    assert collect(b"\0xSM120ArchSpec\0").names == {}
    assert collect(b"\0SM120archSpec\0").names == {}  # the class part starts upper case


def test_arch_major_assert() -> None:
    assert collect(b"\0arch_major == 12\0").names == {"sm_120": ("arch_major == 12",)}
    assert collect(b"\0arch_major == 9)").names == {"sm_90": ("arch_major == 9",)}
    assert collect(b"\0arch_major() == 10 && x").counts() == {"sm_100": 1}
    assert collect(b"\0arch_major == 123\0").names == {}  # three digits: not a major


def test_gencode_flag() -> None:
    found = collect(b"\0-gencode=arch=compute_120f,code=sm_120f\0")
    assert found.names == {"sm_120f": ("arch=compute_120f",)}
    assert found.archs == (Arch(120, "f"),)
    assert collect(b"\0-gencode=arch=compute_90a,code=sm_90a\0").counts() == {"sm_90a": 1}


@pytest.mark.parametrize(
    "text",
    [b"\0sm10_foo\0", b"\0sm19_foo\0", b"\0sm200_foo\0", b"\0sm999_foo\0",
     b"\0SM200ArchSpec\0", b"\0arch=compute_200\0", b"\0arch=compute_15\0", b"\0sm1000_foo\0"],
)
def test_numbers_outside_20_to_199_are_ignored(text: bytes) -> None:
    assert collect(text).names == {}


@pytest.mark.parametrize("number", [20, 75, 199])
def test_numbers_at_the_edges_are_kept(number: int) -> None:
    assert collect(b"\0sm%d_k\0" % number).counts() == {f"sm_{number}": 1}


def test_distinct_names_counted_once() -> None:
    found = collect(b"\0sm90_a\0sm90_a\0sm90_b\0", b"\0sm90_a\0")
    assert found.names == {"sm_90": ("sm90_a", "sm90_b")}


def test_git_hash() -> None:
    found = collect(b"\0built from git hash 0123abcd4567ef89\0")
    assert found.git_hashes == ("0123abcd4567ef89",)
    assert collect(b"\0git: a6b593d2\0git-commit=f5a76426\0").git_hashes == (
        "a6b593d2",
        "f5a76426",
    )
    assert collect(b"\0git 12345\0").git_hashes == ()  # fewer than 7 hex digits
    assert collect(b"\0DeepGEMM a6b593d2\0").git_hashes == ()  # no "git" beside it


def test_long_names_are_capped() -> None:
    name = b"sm90_" + b"k" * (MAX_NAME + 50)
    found = collect(b"\0" + name + b"\0")
    assert found.names == {"sm_90": ((b"sm90_" + b"k" * MAX_NAME).decode(),)}


# -- chunk boundaries and regions --------------------------------------------------

_SAMPLE = (
    b"\0" * 250
    + b"\0sm90_fp8_gemm_1d2d\0_ZN9deep_gemm15sm120_fp8_gemm_aE"
    + b"\0_ZN9deep_gemm13SM100ArchSpec\0arch_major == 12\0"
    + b"-gencode=arch=compute_120f,code=sm_120f\0git_hash=0123abcdef\0"
    + b"cutlass_sm80_gemm\0xSM90Foo\0"
    + b"\0" * 250
)


def test_split_at_every_offset_finds_each_name_once() -> None:
    whole = collect(_SAMPLE)
    assert whole.counts() == {"sm_90": 1, "sm_120": 2, "sm_100": 1, "sm_120f": 1}
    assert whole.git_hashes == ("0123abcdef",)
    for at, found in enumerate(split_everywhere(_SAMPLE)):
        assert found == whole, at


def test_byte_by_byte_feed_matches_whole() -> None:
    assert collect(*(_SAMPLE[i : i + 1] for i in range(len(_SAMPLE)))) == collect(_SAMPLE)


@pytest.mark.parametrize(
    "text", [b"xsm90_foo", b"_sm90_foo", b"xSM120ArchSpec", b"cutlass_sm100_gemm"]
)
def test_word_before_name_seen_across_a_boundary(text: bytes) -> None:
    """The byte before a name decides, even when a chunk boundary falls right after it."""
    data = b"\0" * 400 + text + b"\0" * 400
    for at, found in enumerate(split_everywhere(data)):
        assert found.names == {}, at


def test_name_not_double_counted_inside_a_longer_match() -> None:
    """``sm90_x1sm100_y`` is one name in one pass; no chunking may add ``sm100_y``."""
    data = b"\0" * 400 + b"sm90_x1sm100_y" + b"\0" * 400
    assert collect(data).names == {"sm_90": ("sm90_x1sm100_y",)}
    for at, found in enumerate(split_everywhere(data)):
        assert found.names == {"sm_90": ("sm90_x1sm100_y",)}, at


def test_cut_separates_regions() -> None:
    collector = DispatchStringCollector()
    collector.feed(b"\0\0sm9")
    collector.cut()
    collector.feed(b"0_foo\0")
    assert collector.result().names == {}  # "sm9" | "0_foo" never joined

    collector = DispatchStringCollector()
    collector.feed(b"xyz")
    collector.cut()
    collector.feed(b"sm90_foo\0")  # a region start is a string start
    assert collector.result().names == {"sm_90": ("sm90_foo",)}


def test_result_is_repeatable_and_collector_continues() -> None:
    collector = DispatchStringCollector()
    collector.feed(b"\0sm90_a\0")
    first = collector.result()
    assert collector.result() == first
    collector.feed(b"\0sm100_b\0")
    assert collector.result().counts() == {"sm_90": 1, "sm_100": 1}


_TOKENS = st.sampled_from(
    [b"sm90_a", b"sm120f_b", b"x", b"_", b"0", b"1", b"SM100Spec", b"arch_major == 12",
     b"arch=compute_90a", b"git ", b"abcdef12", b"\0", b" ", b"sm", b"SM", b"\0" * 150,
     b"_sm100_k", b"zSM90Spec"]
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    parts=st.lists(_TOKENS, min_size=1, max_size=120),
    cuts=st.lists(st.integers(min_value=0, max_value=3000), max_size=8),
)
def test_random_chunking_never_changes_the_result(parts: list[bytes], cuts: list[int]) -> None:
    data = b"".join(parts)
    bounds = sorted({0, len(data), *(c % (len(data) + 1) for c in cuts)})
    chunks = [data[a:b] for a, b in itertools.pairwise(bounds)]
    whole = collect(data)
    assert collect(*chunks) == whole
    assert collect(*(data[i : i + 1] for i in range(len(data)))) == whole


# -- headers and fixtures ---------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "arch"),
    [
        ("deep_gemm/include/deep_gemm/impls/sm120_fp8_gemm_1d1d.cuh", "sm_120"),
        ("impls/sm90_bf16_gemm.cuh", "sm_90"),
        ("x/impls/sm100f_gemm.cuh", "sm_100f"),
        ("x/impls/sm120_fp8_gemm.h", None),
        ("x/other/sm120_fp8_gemm.cuh", None),
        ("x/myimpls/sm120_fp8_gemm.cuh", None),
        ("x/impls/sm12_fp8.cuh", None),
        ("x/impls/sm300_fp8.cuh", None),
        ("x/impls/common.cuh", None),
    ],
)
def test_header_arch(path: str, arch: str | None) -> None:
    assert header_arch(path) == arch


@pytest.mark.parametrize(
    "name", sorted(name for name, info in EXPECTED.items() if info.get("jit_dispatch"))
)
def test_dispatch_fixture_counts(name: str) -> None:
    info = EXPECTED[name]
    found = collect((DATA / name).read_bytes())
    kernels = {
        arch: sorted(n for n in names if _KERNEL_NAME.match(n))
        for arch, names in found.names.items()
    }
    kernels = {arch: names for arch, names in kernels.items() if names}
    assert {arch: len(names) for arch, names in kernels.items()} == info["jit_dispatch"]
    assert kernels == {arch: sorted(names) for arch, names in info["jit_names"].items()}
    with_120 = "sm_120" in info["jit_dispatch"]
    assert ("arch_major == 12" in found.names.get("sm_120", ())) == with_120
    assert ("arch=compute_120f" in found.names.get("sm_120f", ())) == with_120


def test_git_hash_needs_the_word_git_or_a_pin() -> None:
    collector = DispatchStringCollector()
    collector.feed(
        b"\x00digit 1234567\x00git 89abcdef\x00vllm-project/DeepGEMM@e21c821f\x00 @a6b593d2\x00"
    )
    assert collector.result().git_hashes == ("89abcdef", "e21c821f")
