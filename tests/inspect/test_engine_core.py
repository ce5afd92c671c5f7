"""A verdict needs evidence: empty folders, non-libraries and engine-less builds never pass."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from servewise.cli import app
from servewise.errors import SourceError
from servewise.inspect.engine_core import scan_coverage
from servewise.inspect.gate import gate
from servewise.inspect.scan import scan_build
from servewise.knowledge.gpus import GpuCatalog
from support.binaries import build_elf
from support.paths import CUDA
from support.paths import GOOD_NIGHTLY as GOOD

#: A host ELF object without GPU code (an x86-64 shared object with one data section).
HOST_ONLY = build_elf([(".rodata", 1, b"just a helper\0")], machine=62, osabi=0, abi_version=0)


def run(*args: str) -> tuple[int, str, str]:
    """Exit code, stdout, and stderr with its line wrapping undone."""
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, " ".join(result.stderr.split())


def venv_without_engine(root: Path) -> Path:
    """A virtual environment's layout with a pure-Python package and a host-only extension."""
    site = root / "lib" / "python3.11" / "site-packages"
    (site / "requests").mkdir(parents=True)
    (site / "requests" / "__init__.py").write_text("__version__ = '2.32.0'\n")
    (site / "_cffi_backend.cpython-311-x86_64-linux-gnu.so").write_bytes(HOST_ONLY)
    (root / "pyvenv.cfg").write_text("home = /usr/bin\n")
    return root


def bytes_read_by_this_process() -> int:
    """``rchar`` of /proc/self/io: every byte read(2) returned, cached or not."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


# ---------------------------------------------------------------------------- the library


def test_evidence_of_an_engine_build_names_its_core() -> None:
    coverage = scan_coverage(scan_build(str(GOOD)))
    assert coverage.engine_core == ("vllm/_C.abi3.so",)
    assert coverage.reason is None and coverage.to_dict()["engine_core"] == ["vllm/_C.abi3.so"]
    assert coverage.files_listed > coverage.files_read >= coverage.elf_objects > 0
    assert "deep_gemm" in coverage.known_libraries


def test_empty_folder_has_no_verdict(tmp_path: Path, catalog: GpuCatalog) -> None:
    (tmp_path / "empty").mkdir()
    result = gate(scan_build(str(tmp_path / "empty")), catalog.find("h200"))
    assert not result.passed and result.exit_code == 1 and result.basis is None
    assert result.coverage.files_listed == 0 and result.coverage.elf_objects == 0
    assert result.no_verdict_reason and "no engine build" in result.no_verdict_reason
    data = result.to_dict()
    assert data["passed"] is False and data["engine_core"] is None
    assert data["verdict_basis"] is None and "site-packages" in data["no_verdict_reason"]


def test_require_does_not_rescue_a_build_without_gpu_code(
    tmp_path: Path, catalog: GpuCatalog
) -> None:
    venv = venv_without_engine(tmp_path / "venv")
    require = ("_cffi_backend",)
    result = gate(scan_build(str(venv)), catalog.find("h200"), require=require)
    assert [v.verdict for v in result.verdicts] == ["no-gpu-code"]
    assert not result.passed and result.basis is None


def test_cuda_libraries_without_engine_core_need_require(
    tmp_path: Path, catalog: GpuCatalog
) -> None:
    shutil.copy(CUDA / "libsw_sm90a.so", tmp_path / "libsw_sm90a.so")
    report = scan_build(str(tmp_path))
    plain = gate(report, catalog.find("h200"))
    assert not plain.passed and plain.basis is None
    assert plain.no_verdict_reason and "GPU code but no engine core" in plain.no_verdict_reason
    assert "--require" in plain.no_verdict_reason
    named = gate(report, catalog.find("h200"), require=("libsw_sm90a",))
    assert named.passed and named.basis == "required libraries"
    assert not gate(report, catalog.find("b200"), require=("libsw_sm90a",)).passed


def test_model_requirements_also_name_what_to_check(
    tmp_path: Path, catalog: GpuCatalog
) -> None:
    # A DeepGEMM on its own: the model names it, so it is judged without an engine core.
    (tmp_path / "vllm" / "third_party" / "deep_gemm").mkdir(parents=True)
    shutil.copy(CUDA / "libdispatch_with_sm120.so",
                tmp_path / "vllm" / "third_party" / "deep_gemm" / "_C.abi3.so")
    result = gate(scan_build(str(tmp_path)), catalog.find("rtx-pro-6000"), model="deepseek-v4")
    assert result.basis == "required libraries" and result.passed


def test_explicit_non_object_file_is_a_source_error(tmp_path: Path) -> None:
    empty = tmp_path / "x.so"
    empty.write_bytes(b"")
    with pytest.raises(SourceError) as info:
        scan_build(str(empty))
    assert "not an ELF object" in info.value.message and "empty file" in info.value.message
    assert info.value.hint and "site-packages" in info.value.hint


def test_non_object_inside_a_folder_is_skipped_with_a_note(tmp_path: Path) -> None:
    (tmp_path / "x.so").write_bytes(os.urandom(5000))
    report = scan_build(str(tmp_path))
    assert report.libraries == ()
    assert report.notes == ("x.so: not an ELF file, skipped",)


def test_huge_sparse_non_object_is_decided_from_its_first_bytes(tmp_path: Path) -> None:
    huge = tmp_path / "x.so"
    with open(huge, "wb") as handle:
        handle.truncate(100 * 2**30)
    before = bytes_read_by_this_process()
    with pytest.raises(SourceError):
        scan_build(str(huge))
    folder_report = scan_build(str(tmp_path))
    assert folder_report.notes == ("x.so: not an ELF file, skipped",)
    # Two scans of a 100 GiB file, and they read less than a mebibyte between them.
    assert bytes_read_by_this_process() - before < 2**20


# ---------------------------------------------------------------------------- the command line


def test_gate_empty_folder_fails_with_what_it_looked_at(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    code, out, _err = run("gate", str(tmp_path / "empty"), "--gpu", "h200")
    assert code == 1
    assert "FAIL" in out and "PASS" not in out
    assert "listed 0 files" in out and "no engine build" in out and "wheel" in out


@pytest.mark.parametrize("content", [b"", b"\x00" * 4096, bytes(range(256)) * 16])
def test_gate_on_a_named_non_library_is_exit_2(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "x.so"
    path.write_bytes(content)
    code, _out, err = run("gate", str(path), "--gpu", "h200")
    assert code == 2
    assert "not an ELF object" in err and "hint" in err and "Traceback" not in err
    code, out, _err = run("inspect", str(path), "--json")
    assert code == 2
    assert json.loads(out)["error"] == "source_error"


def test_gate_venv_without_engine_fails(tmp_path: Path) -> None:
    venv = venv_without_engine(tmp_path / "venv")
    code, out, _err = run("gate", str(venv), "--gpu", "rtx-pro-6000", "--json")
    assert code == 1
    data = json.loads(out)
    assert data["passed"] is False and data["engine_core"] is None
    assert data["files_listed"] == 2 and data["files_read"] == 1 and data["elf_objects"] == 1
    assert data["cuda_libraries"] == 0 and "no engine build" in data["engine_core_reason"]


def test_gate_cuda_without_core_fails_unless_required(tmp_path: Path) -> None:
    shutil.copy(CUDA / "libsw_sm120f.so", tmp_path / "libsw_sm120f.so")
    code, out, _err = run("gate", str(tmp_path), "--gpu", "rtx-pro-6000")
    assert code == 1 and "no engine core" in out and "--require" in out
    code, out, _err = run("gate", str(tmp_path), "--gpu", "rtx-pro-6000",
                          "--require", "libsw_sm120f")
    assert code == 0 and "PASS" in out


def test_inspect_warns_but_lists(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    code, out, err = run("inspect", str(tmp_path / "empty"))
    assert code == 0 and "warning" in err and "no engine build" in err
    code, out, err = run("inspect", str(tmp_path / "empty"), "--json")
    assert code == 0 and "no engine build" in err
    data = json.loads(out)
    assert data["engine_core"] is None and data["libraries"] == []
    assert "no engine build" in data["engine_core_reason"]


def test_inspect_of_an_engine_build_has_no_warning() -> None:
    code, out, err = run("inspect", str(GOOD), "--json")
    assert code == 0 and "warning" not in err
    assert json.loads(out)["engine_core"] == ["vllm/_C.abi3.so"]
