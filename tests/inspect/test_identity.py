"""Library identity on the layouts real packages use, several kernel packages side by side.

Each build is laid out from the committed fixtures the way the package installs itself
(tests/support/layouts.py); servewise must name every library, say which signals agreed,
and find the engine core of every engine's layout.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from servewise.cli import app
from servewise.errors import UsageError
from servewise.inspect.engine_core import scan_coverage
from servewise.inspect.gate import gate
from servewise.inspect.report import BuildReport
from servewise.inspect.scan import scan_build
from servewise.knowledge.gpus import GpuCatalog
from support import layouts
from support.layouts import Dist, install


def ids(report: BuildReport) -> dict[str, tuple[str | None, tuple[str, ...]]]:
    """Path → (library id, signals that agreed)."""
    return {
        lib.path: (lib.provenance.library_id, lib.provenance.identified_by)
        for lib in report.libraries
    }


def test_sglang_image_with_kernel_packages_side_by_side(tmp_path: Path) -> None:
    report = scan_build(str(layouts.sglang_image(tmp_path / "image")))
    site = "usr/local/lib/python3.12/dist-packages/"
    found = ids(report)
    assert found == {
        site + "deep_gemm/_C.so": ("deep_gemm", ("path", "package", "folder", "symbols",
                                                 "dispatch")),
        site + "flashinfer_cubin/cubins/fmha/trtllm/fmha_kernel_sm100f.cubin": (
            "flashinfer-cubin", ("path", "package", "folder")),
        site + "flashinfer_cubin/cubins/fmha/trtllm/fmha_kernel_sm120a.cubin": (
            "flashinfer-cubin", ("path", "package", "folder")),
        site + "flashinfer_jit_cache/jit_cache/batch_decode/batch_decode.so": (
            "flashinfer-jit-cache", ("path", "package", "folder")),
        site + "mscclpp/_mscclpp.cpython-312-x86_64-linux-gnu.so": (
            "mscclpp", ("path", "package", "folder", "python-module")),
        site + "mscclpp/lib/libmscclpp.so": (
            "mscclpp", ("path", "package", "folder", "soname", "symbols")),
        site + "sgl_kernel/flash_ops.abi3.so": (
            "sgl_kernel_flash_ops", ("path", "package", "folder")),
        site + "sgl_kernel/sm100/common_ops.abi3.so": (
            "sgl_kernel", ("path", "package", "folder", "python-module")),
        site + "sgl_kernel/sm90/common_ops.abi3.so": (
            "sgl_kernel", ("path", "package", "folder", "python-module")),
        "usr/lib/x86_64-linux-gnu/libnccl.so.2": (
            "nccl", ("path", "soname", "symbols", "version-string")),
    }
    by_path = {lib.path: lib for lib in report.libraries}
    nccl = by_path["usr/lib/x86_64-linux-gnu/libnccl.so.2"]
    assert nccl.provenance.library_version == "2.27.3+cuda13.0"
    assert nccl.provenance.package is None  # no distribution lists a system library
    dg = by_path[site + "deep_gemm/_C.so"]
    assert dg.provenance.package == "sgl-deep-gemm" and dg.provenance.bundled_version == "0.2.5"
    evidence = scan_coverage(report)
    assert evidence.engine_core == (site + "sgl_kernel/sm100/common_ops.abi3.so",
                                    site + "sgl_kernel/sm90/common_ops.abi3.so")
    assert ("sglang", "0.5.2") in report.packages


def test_vllm_image_layout(tmp_path: Path) -> None:
    report = scan_build(str(layouts.vllm_image(tmp_path / "image")))
    site = "usr/local/lib/python3.12/dist-packages/"
    found = ids(report)
    assert found[site + "vllm/_C.abi3.so"][0] == "vllm-core"
    assert found[site + "vllm/third_party/deep_gemm/_C.abi3.so"] == (
        "deep_gemm", ("path", "package", "folder", "symbols", "dispatch"))
    assert found[site + "nvidia/nccl/lib/libnccl.so.2"] == (
        "nccl", ("path", "package", "soname", "symbols", "version-string"))
    assert scan_coverage(report).engine_core == (site + "vllm/_C.abi3.so",)
    assert report.package_version("vllm") == "0.26.1rc1.dev77+ga6b593d2"


def test_standalone_deep_gemm_wheel_passes_require(tmp_path: Path, catalog: GpuCatalog) -> None:
    # The case: deep_gemm/deep_gemm_cpp*.so, not vllm/third_party/deep_gemm/_C*.so.
    built = layouts.wheel(tmp_path, layouts.deep_gemm_standalone())
    report = scan_build(str(built))
    (library,) = report.libraries
    assert library.provenance.library_id == "deep_gemm"
    assert library.provenance.identified_by == (
        "path", "package", "folder", "python-module", "symbols", "dispatch")
    assert library.provenance.bundled_version == "2.1.1"
    result = gate(report, catalog.find("rtx-pro-6000"), require=("deep_gemm",))
    assert result.passed and not result.absent
    (verdict,) = result.verdicts
    assert verdict.verdict == "jit-dispatch" and verdict.required_by == ("--require deep_gemm",)
    # an alias works the same way
    assert gate(report, catalog.find("rtx-pro-6000"), require=("DeepGEMM",)).passed


def test_a_renamed_library_is_known_by_its_bytes(tmp_path: Path) -> None:
    folder = tmp_path / "opt" / "vendor"
    folder.mkdir(parents=True)
    shutil.copy(layouts.CUDA / "libsw_id_nccl.so", folder / "libcomm_v2.so")
    shutil.copy(layouts.CUDA / "libsw_id_mscclpp.so", folder / "libfast_allreduce.so")
    shutil.copy(layouts.CUDA / "libdispatch_with_sm120.so", folder / "libgemm_jit.so")
    found = ids(scan_build(str(tmp_path)))
    assert found == {
        "opt/vendor/libcomm_v2.so": ("nccl", ("soname", "symbols", "version-string")),
        "opt/vendor/libfast_allreduce.so": ("mscclpp", ("soname", "symbols")),
        "opt/vendor/libgemm_jit.so": ("deep_gemm", ("symbols", "dispatch")),
    }


def test_tensorrt_llm_wheel_has_an_engine_core(tmp_path: Path) -> None:
    report = scan_build(str(layouts.wheel(tmp_path, layouts.tensorrt_llm())))
    found = ids(report)
    assert found["tensorrt_llm/libs/libtensorrt_llm.so"] == (
        "tensorrt_llm", ("path", "package", "soname", "symbols"))
    assert found["tensorrt_llm/libs/libth_common.so"][0] == "tensorrt_llm_torch_ops"
    assert scan_coverage(report).engine_core == ("tensorrt_llm/libs/libtensorrt_llm.so",)


def test_flash_attn_wheel(tmp_path: Path) -> None:
    report = scan_build(str(layouts.wheel(tmp_path, layouts.flash_attn())))
    assert ids(report) == {
        "flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so": (
            "flash_attn", ("path", "package", "python-module", "symbols")),
    }


def test_require_an_unknown_name_suggests_the_closest(tmp_path: Path,
                                                      catalog: GpuCatalog) -> None:
    report = scan_build(str(layouts.sglang_image(tmp_path / "image")))
    with pytest.raises(UsageError) as caught:
        gate(report, catalog.find("h200"), require=("deepgem",))
    error = caught.value
    assert "did you mean deep_gemm" in error.message
    assert error.fields["close_matches"][0] == "deep_gemm"
    assert any("deep_gemm/_C.so" in near for near in error.fields["closest_in_build"])
    with pytest.raises(UsageError) as caught:
        gate(report, catalog.find("h200"), require=("mscclp",))
    assert caught.value.fields["close_matches"][0] == "mscclpp"
    # an alias is no typo: it names the library, which is in the build
    assert gate(report, catalog.find("h200"), require=("msccl++",)).closest == {}


def test_require_an_absent_library_names_what_the_build_has(tmp_path: Path,
                                                             catalog: GpuCatalog) -> None:
    site = tmp_path / "site"
    install(site, Dist("vllm", "0.26.1", layouts.sample_vllm_files()))
    report = scan_build(str(site))
    result = gate(report, catalog.find("h200"), require=("flash_attn_3", "flashmla"))
    assert not result.passed
    assert [name for name, _ in result.absent] == ["flashmla"]
    assert result.verdicts  # flash_attn_3 is in the sample, flashmla is not
    result = gate(report, catalog.find("h200"), require=("flashinfer",))
    (absent,) = result.to_dict()["absent_required"]
    assert absent["library_id"] == "flashinfer"
    assert isinstance(absent["closest_in_build"], list)
    fa = gate(report, catalog.find("h200"), require=("flash-attn",))  # upstream flash-attn
    near = fa.closest["flash-attn"]
    assert near and near[0].startswith("vllm/vllm_flash_attn/")


def test_cli_shows_signals_and_closest(tmp_path: Path) -> None:
    image = layouts.sglang_image(tmp_path / "image")
    runner = CliRunner()
    result = runner.invoke(app, ["inspect", str(image), "--json"])
    assert result.exit_code == 0, result.stdout
    data = json.loads(result.stdout)
    nccl = next(lib for lib in data["libraries"] if lib["path"].endswith("libnccl.so.2"))
    assert nccl["identified_by"] == ["path", "soname", "symbols", "version-string"]
    assert nccl["soname"] == "libnccl.so.2" and nccl["library_version"] == "2.27.3+cuda13.0"
    assert nccl["version_strings"] == ["NCCL version 2.27.3+cuda13.0"]
    result = runner.invoke(app, ["gate", str(image), "--gpu", "h200", "--require", "deepgem"])
    assert result.exit_code == 2
    assert "did you mean deep_gemm" in " ".join(result.stderr.split())
