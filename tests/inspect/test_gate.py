"""Gate verdicts: every fixture against several GPUs, requirements, strictness, the seed story."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from servewise.errors import UsageError
from servewise.inspect.gate import VERDICTS, gate
from servewise.inspect.scan import scan_build
from servewise.knowledge.gpus import GpuCatalog
from support.binaries import container, entry
from support.paths import BAD_NIGHTLY as BAD
from support.paths import CUDA, cuda_expected
from support.paths import GOOD_NIGHTLY as GOOD

# (fixture, gpu alias, expected verdict) — derived by hand from the build flags and the
# compatibility rules of research/gate.md §2, not from servewise's output.
CASES = [
    ("libsw_sm80.so", "a100", "native"),
    ("libsw_sm80.so", "a10", "native"),
    ("libsw_sm80.so", "h200", "missing"),
    ("libsw_sm80.so", "rtx-pro-6000", "missing"),
    ("libsw_sm86.so", "a100", "missing"),
    ("libsw_sm86.so", "a10", "native"),
    ("libsw_sm86.so", "l4", "native"),
    ("libsw_sm90.so", "h200", "native"),
    ("libsw_sm90.so", "b200", "missing"),
    ("libsw_sm90a.so", "h100", "native"),
    ("libsw_sm90a.so", "gh200", "native"),
    ("libsw_sm90a.so", "b200", "missing"),
    ("libsw_sm100a.so", "b200", "native"),
    ("libsw_sm100a.so", "b300", "missing"),
    ("libsw_sm100a.so", "rtx-pro-6000", "missing"),
    ("libsw_sm100f.so", "b200", "native"),
    ("libsw_sm100f.so", "b300", "native"),
    ("libsw_sm100f.so", "rtx-pro-6000", "missing"),
    ("libsw_sm120.so", "rtx-pro-6000", "native"),
    ("libsw_sm120.so", "gb10", "native"),
    ("libsw_sm120.so", "b200", "missing"),
    ("libsw_sm120a.so", "rtx-pro-6000", "native"),
    ("libsw_sm120a.so", "gb10", "missing"),
    ("libsw_sm120f.so", "rtx-pro-6000-max-q", "native"),
    ("libsw_sm120f.so", "gb10", "native"),
    ("libsw_sm120f.so", "rtx-5090", "native"),
    ("libsw_compute90_ptx.so", "a100", "missing"),
    ("libsw_compute90_ptx.so", "h200", "ptx-jit"),
    ("libsw_compute90_ptx.so", "b200", "ptx-jit"),
    ("libsw_compute90_ptx.so", "rtx-pro-6000", "ptx-jit"),
    ("libsw_multiarch.so", "a10", "native"),
    ("libsw_multiarch.so", "h200", "native"),
    ("libsw_multiarch.so", "b300", "native"),
    ("libsw_multiarch.so", "gb10", "native"),
    ("libsw_multiarch.so", "thor", "missing"),
    ("libsw_sm90a_lz4.so", "b200", "ptx-jit"),
    ("libsw_sm90a_zstd.so", "h200", "native"),
    ("libsw_two_sources.so", "rtx-pro-6000", "native"),
    ("libsw_two_sources.so", "gb10", "ptx-jit"),
    ("libsw_rdc.so", "gb10", "native"),
    ("libsw_embedded_cubin_sm90a.so", "h200", "native"),
    ("libsw_embedded_cubin_sm90a.so", "b200", "missing"),
    ("saxpy_sm120a.cubin", "rtx-pro-6000", "native"),
    ("saxpy_sm120a.cubin", "gb10", "missing"),
    ("saxpy_sm100f.cubin", "b300", "native"),
    ("saxpy_sm80.cubin", "rtx-3090", "native"),
    ("libdispatch_with_sm120.so", "rtx-pro-6000", "jit-dispatch"),
    ("libdispatch_with_sm120.so", "gb10", "jit-dispatch"),
    ("libdispatch_with_sm120.so", "h200", "jit-dispatch"),
    ("libdispatch_with_sm120.so", "a100", "missing"),
    ("libdispatch_without_sm120.so", "rtx-pro-6000", "missing"),
    ("libdispatch_without_sm120.so", "b200", "jit-dispatch"),
    ("libsw_sm90a_none.so", "h200", "native"),
    ("libsw_sm90a_none.so", "rtx-pro-6000", "ptx-jit"),
    ("libsw_sm90a_default.so", "b300", "ptx-jit"),
    ("libsw_sm90a_lz4ptx.so", "a100", "missing"),
    ("libsw_sass_with_host_strings.so", "b200", "native"),
    # Its sm100_ host strings must not make it a JIT library: compiled code decides.
    ("libsw_sass_with_host_strings.so", "b300", "missing"),
    ("sw_rdc.o", "rtx-pro-6000", "native"),
    ("sw_rdc.o", "h100-pcie", "native"),
    ("sw_rdc.o", "b200", "missing"),
    ("saxpy_sm120f.cubin", "gb10", "native"),
    ("saxpy_sm120f.cubin", "b200", "missing"),
    ("saxpy_sm90a.cubin", "gh200", "native"),
    ("saxpy_sm90a.cubin", "a100", "missing"),
    # identity fixtures: libraries that name themselves (SONAME, PyInit_, namespaces)
    ("libsw_id_nccl.so", "rtx-pro-6000", "native"),
    ("libsw_id_nccl.so", "gb10", "native"),
    ("libsw_id_nccl.so", "b300", "native"),
    ("libsw_id_nccl.so", "thor", "missing"),
    ("libsw_id_mscclpp.so", "h200", "native"),
    ("libsw_id_mscclpp.so", "b300", "missing"),
    ("libsw_id_mscclpp.so", "gb10", "missing"),
    ("libsw_id_trtllm.so", "rtx-pro-6000", "native"),
    ("libsw_id_trtllm.so", "a100", "missing"),
    ("libsw_id_common_ops.so", "b200", "native"),
    ("libsw_id_flashinfer.so", "rtx-pro-6000", "missing"),
    ("libsw_id_flash_attn.so", "a10", "native"),
    ("libsw_id_flash_attn.so", "b200", "ptx-jit"),
    ("libsw_id_mscclpp_py.so", "h200", "no-gpu-code"),
    ("libdispatch_deep_gemm_cpp.so", "rtx-pro-6000", "jit-dispatch"),
    ("libdispatch_deep_gemm_cpp.so", "a100", "missing"),
]


#: Fixtures identified, by their SONAME and exported namespace, as an engine's core library.
ENGINE_CORES = {"libsw_id_trtllm.so"}


def test_every_fixture_has_verdict_cases() -> None:
    assert {fixture for fixture, _gpu, _verdict in CASES} == set(cuda_expected())


@pytest.mark.parametrize(("fixture", "gpu", "verdict"), CASES)
def test_fixture_verdicts(fixture: str, gpu: str, verdict: str, catalog: GpuCatalog) -> None:
    report = scan_build(str(CUDA / fixture))
    result = gate(report, catalog.find(gpu))
    assert [v.verdict for v in result.verdicts] == [verdict]
    assert result.verdicts[0].verdict in VERDICTS
    if fixture in ENGINE_CORES:
        # An engine core library is a build of its own: required, judged without --require.
        assert result.basis == "engine core"
        assert result.verdicts[0].required_by == ("engine core",)
        assert result.passed == (verdict != "missing")
        return
    # Nothing is required here, so no gap is an error ...
    assert result.verdicts[0].status != "error"
    # ... but a lone library is no engine build: without --require there is no verdict.
    assert not result.passed and result.basis is None
    assert result.no_verdict_reason and "no engine core" in result.no_verdict_reason
    # Named with --require it is judged (when it has GPU code), and a gap fails.
    named = gate(report, catalog.find(gpu), require=(fixture,))
    if verdict == "no-gpu-code":
        assert named.basis is None and not named.passed
    else:
        assert named.basis == "required libraries"
        assert named.passed == (verdict != "missing")
    # With --strict every gap counts, required or not.
    strict = gate(report, catalog.find(gpu), strict=True)
    assert (strict.verdicts[0].status == "error") == (verdict == "missing")


def test_require_by_file_name_fails_on_gap(catalog: GpuCatalog) -> None:
    report = scan_build(str(CUDA / "libsw_sm90a.so"))
    result = gate(report, catalog.find("b200"), require=("libsw_sm90a",))
    assert not result.passed and result.exit_code == 1
    (verdict,) = result.verdicts
    assert verdict.status == "error" and verdict.required_by == ("--require libsw_sm90a",)
    assert "no code for CC 10.0" in verdict.reason


def test_core_library_is_required(tmp_path: Path, catalog: GpuCatalog) -> None:
    site = tmp_path / "site"
    (site / "vllm").mkdir(parents=True)
    shutil.copy(CUDA / "libsw_sm90a.so", site / "vllm" / "_C.abi3.so")
    shutil.copy(CUDA / "libsw_sm100f.so", site / "vllm" / "_vllm_fa3_C.abi3.so")
    report = scan_build(str(site))
    on_h200 = gate(report, catalog.find("h200"))
    assert on_h200.passed
    on_b200 = gate(report, catalog.find("b200"))
    core = next(v for v in on_b200.verdicts if v.path == "vllm/_C.abi3.so")
    assert core.required_by == ("engine core",) and core.status == "error"
    assert not on_b200.passed


def test_seed_story_deepseek_v4_on_rtx_pro_6000(catalog: GpuCatalog) -> None:
    gpu = catalog.find("rtx-pro-6000")
    good = gate(scan_build(str(GOOD)), gpu, model="deepseek-v4")
    bad = gate(scan_build(str(BAD)), gpu, model="DeepSeek-V4-Flash-0731-NVFP4")
    assert good.passed and good.exit_code == 0
    assert not bad.passed and bad.exit_code == 1
    dg_good = next(v for v in good.verdicts if "deep_gemm" in v.path)
    dg_bad = next(v for v in bad.verdicts if "deep_gemm" in v.path)
    assert dg_good.verdict == "jit-dispatch" and "sm_120" in dg_good.matching
    assert dg_bad.verdict == "missing" and dg_bad.status == "error"
    assert any(r.startswith("model ") for r in dg_bad.required_by)
    # FlashAttention 3 is Hopper-only by design: reported, never an error here.
    fa3 = next(v for v in bad.verdicts if "fa3" in v.path)
    assert fa3.verdict == "missing" and fa3.status == "info"
    # Without the model, nothing requires DeepGEMM: the bad build passes with a note.
    assert gate(scan_build(str(BAD)), gpu).passed


def test_absent_required_library_fails(catalog: GpuCatalog) -> None:
    report = scan_build(str(CUDA / "libsw_sm120f.so"))
    result = gate(report, catalog.find("rtx-pro-6000"), require=("deep_gemm",))
    assert not result.passed
    assert result.absent == (("deep_gemm", "--require deep_gemm"),)
    assert result.to_dict()["absent_required"][0]["library_id"] == "deep_gemm"


def test_unknown_require_is_a_usage_error(catalog: GpuCatalog) -> None:
    report = scan_build(str(CUDA / "libsw_sm120f.so"))
    with pytest.raises(UsageError) as caught:
        gate(report, catalog.find("h200"), require=("no_such_library",))
    assert "deep_gemm" in (caught.value.hint or "")


def test_unknown_model_is_a_usage_error(catalog: GpuCatalog) -> None:
    report = scan_build(str(CUDA / "libsw_sm120f.so"))
    with pytest.raises(UsageError):
        gate(report, catalog.find("h200"), model="no-such-model-family")


def test_archs_outside_the_usual_range_are_reported_not_fatal(
    tmp_path: Path, catalog: GpuCatalog
) -> None:
    # Whatever SM number a binary declares is listed; the gate judges it like any other.
    odd = tmp_path / "odd.fatbin"
    odd.write_bytes(container(entry(arch=1000), entry(arch=13, kind=1)))
    report = scan_build(str(odd))
    (library,) = report.libraries
    assert library.scan.sass == ("sm_1000",) and library.scan.ptx == ("compute_13",)
    result = gate(report, catalog.find("h200"))
    assert [v.verdict for v in result.verdicts] == ["ptx-jit"]
