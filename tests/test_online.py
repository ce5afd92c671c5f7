"""The real vllm==0.33.0 wheel from PyPI: listing against cuobjdump, and the gate's verdicts.

Marked ``online`` (skipped by default); run with ``pytest -m online``.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from servewise.inspect.gate import gate
from servewise.inspect.report import BuildReport
from servewise.inspect.scan import scan_build
from servewise.knowledge.gpus import load_gpu_catalog
from support.cuobjdump import find_cuobjdump, list_archs, normalise_for_cuobjdump

pytestmark = pytest.mark.online


@pytest.fixture(scope="module")
def wheel() -> Path:
    cache = Path.home() / ".cache" / "servewise-bench"
    found = sorted(cache.glob("vllm-0.33.0-*.whl"))
    if not found:
        cache.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-d", str(cache),
                        "vllm==0.33.0"], check=True)
        found = sorted(cache.glob("vllm-0.33.0-*.whl"))
    return found[0]


@pytest.fixture(scope="module")
def report(wheel: Path) -> BuildReport:
    return scan_build(str(wheel))


def test_known_facts_of_the_wheel(report: BuildReport) -> None:
    libs = {lib.path.rsplit("/", 1)[-1]: lib for lib in report.libraries}
    assert len(libs) == 13
    assert libs["_vllm_fa3_C.abi3.so"].scan.sass == ("sm_90a",)
    assert libs["_flashmla_C.abi3.so"].scan.sass == ("sm_90a", "sm_100f")
    assert libs["_qutlass_C.abi3.so"].scan.sass == ("sm_100f",)
    assert libs["_deepselect_C.abi3.so"].scan.sass == ("sm_100f",)
    assert libs["_vllm_fa2_C.abi3.so"].scan.sass == ("sm_80",)
    assert libs["_vllm_fa2_C.abi3.so"].scan.ptx == ("compute_80",)
    deep_gemm = libs["_C_extension.abi3.so"]
    assert not deep_gemm.has_compiled_code
    assert {"sm_90", "sm_100", "sm_120"} <= set(deep_gemm.dispatch)
    assert deep_gemm.provenance.library_id == "deep_gemm"
    core = libs["_C_stable_libtorch.abi3.so"]
    assert core.provenance.library_id == "vllm-core" and "sm_100" in core.dispatch


def test_every_library_is_identified_by_its_bytes_too(report: BuildReport) -> None:
    for library in report.libraries:
        signals = library.provenance.identified_by
        assert library.provenance.library_id, library.path
        # every vllm extension module exports PyInit_<its name>
        assert {"path", "package", "python-module"} <= set(signals), library.path
    libs = {lib.path.rsplit("/", 1)[-1]: lib for lib in report.libraries}
    deep_gemm = libs["_C_extension.abi3.so"]
    assert deep_gemm.provenance.identified_by == (
        "path", "package", "folder", "python-module", "symbols", "dispatch")
    assert deep_gemm.scan.dynamic is not None
    assert {"deep_gemm", "deep_jit"} <= set(deep_gemm.scan.dynamic.namespaces)
    assert report.package_version("vllm") == "0.33.0"


@pytest.mark.skipif(find_cuobjdump() is None, reason="cuobjdump not installed")
def test_same_archs_as_cuobjdump(wheel: Path, report: BuildReport, tmp_path: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        for library in report.libraries:
            archive.extract(library.path, tmp_path)
            elf, ptx = list_archs(tmp_path / library.path)
            (tmp_path / library.path).unlink()
            assert {normalise_for_cuobjdump(a) for a in library.scan.sass} == elf, library.path
            assert {normalise_for_cuobjdump(a) for a in library.scan.ptx} == ptx, library.path


@pytest.mark.parametrize(("gpu", "passed", "deep_gemm"), [
    ("rtx-pro-6000", True, "jit-dispatch"),
    ("h200", True, "jit-dispatch"),
    ("a100", False, "missing"),
])
def test_verdicts_with_deep_gemm_required(report: BuildReport, gpu: str, passed: bool,
                                          deep_gemm: str) -> None:
    result = gate(report, load_gpu_catalog().find(gpu), require=("deep_gemm",))
    assert result.passed is passed
    verdicts = {v.path.rsplit("/", 1)[-1]: v for v in result.verdicts}
    assert verdicts["_C_extension.abi3.so"].verdict == deep_gemm
    assert verdicts["_C_stable_libtorch.abi3.so"].verdict == "native"
    fa3 = verdicts["_vllm_fa3_C.abi3.so"]
    assert fa3.verdict == ("native" if gpu == "h200" else "missing")
    assert fa3.status in ("ok", "info")
