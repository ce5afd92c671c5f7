"""The one-pass dynamic-symbol reader: fixtures and real libraries against readelf, faults."""

from __future__ import annotations

import glob
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from servewise.formats.dynamic import MAX_SAMPLED, DynamicCollector, symbol_namespace
from servewise.formats.dynamic_info import DynamicInfo
from servewise.formats.stream import StreamScanner
from support.binaries import build_dynamic_elf
from support.paths import CUDA, ROOT, cuda_expected
from support.readelf import dynamic_facts, find_readelf

EXPECTED = cuda_expected()
needs_readelf = pytest.mark.skipif(find_readelf() is None, reason="readelf is not installed")

#: Real shared objects on this machine (the CUDA toolkit's, the CPU engine environment's).
REAL = sorted(
    {
        *glob.glob("/usr/local/cuda*/lib64/libcudart.so.*"),
        *glob.glob("/usr/local/cuda*/lib64/libcupti.so.*"),
        *glob.glob(str(ROOT / ".venv-engine/lib/python3*/site-packages/vllm/*.so")),
        *glob.glob(str(ROOT / ".venv-engine/lib/python3*/site-packages/triton/_C/libproton.so")),
    }
)


def collect(data: bytes, chunk: int | None = None, **options: Any) -> DynamicCollector:
    collector = DynamicCollector(**options)
    step = chunk or max(len(data), 1)
    view = memoryview(data)
    for start in range(0, len(data), step):
        collector.feed(view[start : start + step])
    return collector


def info(data: bytes, chunk: int | None = None) -> DynamicInfo | None:
    return collect(data, chunk).result()


# --------------------------------------------------------------------------- namespaces


@pytest.mark.parametrize(
    ("name", "namespace"),
    [
        ("_ZN9deep_gemm26SM100FP8FP4Gemm1D1DRuntime3runEiiii", "deep_gemm"),
        ("_ZNK7mscclpp12Communicator4rankEv", "mscclpp"),
        ("_ZNSt6vectorIiSaIiEE9push_backERKi", "std"),
        ("_ZNSt7__cxx1112basic_stringIcE", "std"),
        ("_ZGVZN4vllm8get_slotEvE5cache", "vllm"),  # guard variable of a local static
        ("_ZZN4vllm8get_slotEvE5cache", "vllm"),  # the local static itself
        ("_ZTVN12tensorrt_llm7RuntimeE", "tensorrt_llm"),  # vtable
        ("_ZTIN10flashinfer5ErrorE", "flashinfer"),  # type info
        ("_ZNVKR5flash3fooEv", "flash"),
        ("_Z20invokeFp4Quantizationv", None),  # a global function: no namespace
        ("_ZN99short", None),  # length beyond the name
        ("ncclCommInitRank", "nccl"),
        ("pncclAllReduce", "pnccl"),
        ("nvshmem_init", "nvshmem"),
        ("cublasLtMatmul", "cublas"),
        ("nccl", "nccl"),
        ("_init", None),
        ("__cudaRegisterFatBinary", None),
        ("X", None),
    ],
)
def test_symbol_namespace(name: str, namespace: str | None) -> None:
    assert symbol_namespace(name) == namespace


# --------------------------------------------------------------------------- fixtures


IDENTITY = {name: e["identity"] for name, e in EXPECTED.items() if e.get("identity")}


@pytest.mark.parametrize("name", sorted(IDENTITY))
def test_fixtures_say_what_they_were_built_with(name: str) -> None:
    facts = IDENTITY[name]
    found = info((CUDA / name).read_bytes())
    assert found is not None and found.complete
    assert found.soname == facts["soname"]
    assert list(found.python_modules) == facts["python_modules"]
    assert set(facts["namespaces"]) <= set(found.namespaces)
    if facts["c_prefix"]:
        assert found.namespaces[facts["c_prefix"]] == 3  # CommInitRank, AllReduce, GetVersion


@needs_readelf
@pytest.mark.parametrize(
    "path",
    [str(CUDA / n) for n, e in sorted(EXPECTED.items()) if e["kind"] != "cubin"
     and not n.endswith(".o")] + REAL,
    ids=lambda p: Path(p).name,
)
def test_same_as_readelf(path: str) -> None:
    data = Path(path).read_bytes()
    reference = dynamic_facts(Path(path))
    found = info(data, 1 << 20)
    assert found is not None
    assert found.soname == reference.soname
    assert found.needed == reference.needed
    assert found.exported == len(reference.exported)
    modules = sorted(n[7:] for n in reference.exported if n.startswith("PyInit_"))
    assert list(found.python_modules) == modules
    counts: dict[str, int] = {}
    for name in reference.exported:
        namespace = symbol_namespace(name)
        if namespace and not name.startswith("PyInit_"):
            counts[namespace] = counts.get(namespace, 0) + 1
    top = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[: len(found.namespaces)]
    if not found.sampled:
        assert found.namespaces == dict(top)


def test_not_dynamic_objects_give_nothing() -> None:
    for name in ("saxpy_sm90a.cubin", "sw_rdc.o"):
        assert info((CUDA / name).read_bytes()) is None
    assert info(b"") is None
    assert info(b"not an ELF file at all" * 10) is None
    collector = collect(b"\x7fELF")
    assert collector.result() is None and collector.problem is None


@pytest.mark.parametrize("chunk", [1, 7, 64, 333, 4096, None])
def test_chunking_does_not_change_the_result(chunk: int | None) -> None:
    for name in ("libsw_id_nccl.so", "libdispatch_deep_gemm_cpp.so", "libsw_multiarch.so"):
        data = (CUDA / name).read_bytes()
        assert info(data, chunk) == info(data)


def test_the_stream_scanner_carries_it() -> None:
    scanner = StreamScanner()
    scanner.feed((CUDA / "libsw_id_mscclpp.so").read_bytes())
    found = scanner.finish()
    assert found.dynamic is not None and found.dynamic.soname == "libmscclpp.so.0"
    assert len(found.containers) == 1  # the fatbin is still found beside it


# --------------------------------------------------------------------------- layouts


SYMBOLS = [("ncclCommInitRank", True), ("_ZN7mscclpp4Comm3getEv", True),
           ("PyInit_nccl_py", True), ("cudaMalloc", False)]


@pytest.mark.parametrize(
    "layout",
    [
        {},
        {"bits": 32},
        {"little": False},
        {"bits": 32, "little": False},
        {"section_table": False},  # sized by DT_HASH
        {"hash_table": False},  # sized by the section table
    ],
    ids=repr,
)
def test_synthetic_layouts(layout: dict[str, Any]) -> None:
    data = build_dynamic_elf(SYMBOLS, soname="libnccl.so.2", needed=("libcudart.so.13",),
                             tail=b"\x90" * 5000, **layout)
    found = info(data, 100)
    assert found == DynamicInfo(
        soname="libnccl.so.2", needed=("libcudart.so.13",), python_modules=("nccl_py",),
        exported=3, namespaces={"mscclpp": 1, "nccl": 1},
    )


def test_an_unsized_symbol_table_still_gives_soname_and_modules() -> None:
    data = build_dynamic_elf(SYMBOLS, soname="libx.so.1", section_table=False, hash_table=False)
    collector = collect(data)
    found = collector.result()
    assert found is not None and not found.complete
    assert found.soname == "libx.so.1" and found.python_modules == ("nccl_py",)
    assert collector.problem and "sized" in collector.problem


def test_a_symbol_table_beyond_the_head_is_a_problem_not_a_crash() -> None:
    data = build_dynamic_elf(SYMBOLS, soname="libx.so.1")
    collector = collect(data, head_limit=100)  # only the headers fit
    assert collector.result() is None
    assert collector.problem


def test_large_tables_are_sampled_evenly() -> None:
    count = MAX_SAMPLED * 3
    symbols = [(f"_ZN3big{i}fEv" if i % 2 else f"ncclFn{i}", True) for i in range(count)]
    found = info(build_dynamic_elf(symbols))
    assert found is not None and found.sampled
    assert abs(found.exported - count) <= 3
    assert set(found.namespaces) == {"big", "nccl"}
    assert abs(found.namespaces["nccl"] - count / 2) < count * 0.05


@pytest.mark.parametrize("cut", [10, 63, 64, 200, 0.5, -40, -1])
def test_truncated_files_never_raise(cut: float) -> None:
    data = (CUDA / "libsw_id_nccl.so").read_bytes()
    end = int(len(data) * cut) if isinstance(cut, float) else (cut % len(data))
    collector = collect(data[:end], 333)
    result = collector.result()
    if result is None and end > 1000:
        assert collector.problem  # it had the headers: it says what was cut off


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_corrupted_headers_never_raise(data: st.DataObject) -> None:
    original = bytearray(build_dynamic_elf(SYMBOLS, soname="libnccl.so.2", tail=b"\0" * 64))
    for _ in range(data.draw(st.integers(1, 8))):
        at = data.draw(st.integers(0, len(original) - 1))
        original[at] = data.draw(st.integers(0, 255))
    chunk = data.draw(st.sampled_from([1, 17, 4096]))
    found = info(bytes(original), chunk)
    assert found is None or isinstance(found.exported, int)


def test_memory_stays_bounded() -> None:
    # A first loadable segment larger than the head limit is held only up to the limit.
    data = build_dynamic_elf(SYMBOLS, tail=b"\xcc" * 300_000)
    collector = collect(data, 4096, head_limit=2048)
    assert collector.result() is not None
    assert sys.getsizeof(collector._head) < 8192


@pytest.mark.parametrize("chunk", [1, 97, 4096, None])
def test_machine_code_segments_are_not_searched_for_strings(chunk: int | None) -> None:
    data = build_dynamic_elf(SYMBOLS, tail=b"\0sm90_fp8_gemm_1d2d\0",
                             code=b"\x90" * 64 + b"\0sm120_fp8_gemm_1d1d\0" + b"\x90" * 64)
    collector = collect(data, chunk)
    assert len(collector.code_ranges) == 1
    scanner = StreamScanner()
    step = chunk or len(data)
    for start in range(0, len(data), step):
        scanner.feed(data[start : start + step])
    names = scanner.finish().evidence.names
    assert set(names) == {"sm_90"}  # the string in the code segment is not a string table's


def test_a_first_executable_segment_is_searched() -> None:
    # ld -z noseparate-code: headers, read-only data and code share the first segment.
    data = build_dynamic_elf(SYMBOLS, tail=b"\0sm90_fp8_gemm_1d2d\0", first_executable=True)
    assert collect(data).code_ranges == ()
    scanner = StreamScanner()
    scanner.feed(data)
    assert set(scanner.finish().evidence.names) == {"sm_90"}
