"""The command line: exit codes, --json on every command, errors without tracebacks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from servewise.cli import app
from support.paths import BAD_NIGHTLY as BAD
from support.paths import CUDA
from support.paths import GOOD_NIGHTLY as GOOD


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_inspect_json_lists_archs_in_nvidia_spelling() -> None:
    code, out, _ = run("inspect", str(CUDA / "libsw_multiarch.so"), "--json")
    assert code == 0
    data = json.loads(out)
    (library,) = data["libraries"]
    assert library["sass"] == ["sm_80", "sm_90a", "sm_100f", "sm_120f"]
    assert library["ptx"] == ["compute_120"]
    assert library["containers"] == 1


def test_inspect_json_reports_jit_dispatch_as_arch_strings() -> None:
    code, out, _ = run("inspect", str(BAD), "--json")
    assert code == 0
    libraries = {lib["path"]: lib for lib in json.loads(out)["libraries"]}
    deep_gemm = libraries["vllm/third_party/deep_gemm/_C.abi3.so"]
    assert "sm_90" in deep_gemm["jit_dispatch"] and "sm_120" not in deep_gemm["jit_dispatch"]
    assert all(isinstance(v, int) for v in deep_gemm["jit_dispatch"].values())


def test_inspect_entries() -> None:
    code, out, _ = run("inspect", str(CUDA / "libsw_sm90a_lz4.so"), "--json", "--entries")
    assert code == 0
    (library,) = json.loads(out)["libraries"]
    kinds = {(e["kind"], e["arch"], e["compression"]) for e in library["entry_list"]}
    assert kinds == {("sass", "sm_90a", "lz4"), ("ptx", "compute_90", "lz4")}
    ptx = next(e for e in library["entry_list"] if e["kind"] == "ptx")
    assert ptx["ptx_isa"] and ptx["uncompressed_bytes"] > ptx["stored_bytes"] > 0
    code, out, _ = run("inspect", str(CUDA / "libsw_sm90a_lz4.so"), "--entries")
    assert code == 0 and "compute_90" in out and "lz4" in out


def test_inspect_human_table() -> None:
    code, out, _ = run("inspect", str(GOOD))
    assert code == 0
    assert "deep_gemm" in out and "sm_120f" in out


def test_gate_exit_codes_follow_the_seed_story() -> None:
    assert run("gate", str(GOOD), "--gpu", "rtx-pro-6000", "--model", "deepseek-v4")[0] == 0
    code, out, _ = run("gate", str(BAD), "--gpu", "rtx-pro-6000", "--model", "deepseek-v4")
    assert code == 1
    assert "FAIL" in out


def test_gate_json() -> None:
    code, out, _ = run("gate", str(BAD), "--gpu", "RTX PRO 6000", "--require", "deep_gemm",
                       "--json")
    assert code == 1
    data = json.loads(out)
    assert data["passed"] is False
    assert data["gpu"]["sm"] == "sm_120"
    failing = [lib for lib in data["libraries"] if lib["status"] == "error"]
    assert [lib["library_id"] for lib in failing] == ["deep_gemm"]


def test_gate_strict_fails_on_any_gap() -> None:
    assert run("gate", str(GOOD), "--gpu", "rtx-pro-6000")[0] == 0
    assert run("gate", str(GOOD), "--gpu", "rtx-pro-6000", "--strict")[0] == 1


def test_unknown_gpu_is_exit_2_with_a_hint() -> None:
    code, _out, err = run("gate", str(GOOD), "--gpu", "rtx-pro-7000")
    assert code == 2
    assert "servewise gpus" in err
    assert "Traceback" not in err


def test_unknown_gpu_json_error_on_stdout() -> None:
    code, out, _ = run("gate", str(GOOD), "--gpu", "nope-9000", "--json")
    assert code == 2
    error = json.loads(out)
    assert error["error"] == "usage_error" and error["hint"]


def test_missing_build_is_exit_2() -> None:
    code, _out, err = run("inspect", "/nonexistent/vllm.whl")
    assert code == 2
    assert "no such file" in err and "hint" in err


def test_corrupt_wheel_is_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "broken.whl"
    bad.write_bytes(GOOD.read_bytes()[: 4000])
    code, _out, err = run("inspect", str(bad))
    assert code == 2
    assert "broken.whl" in err and "Traceback" not in err


def test_missing_gpu_option_is_usage_exit_2() -> None:
    assert run("gate", str(GOOD))[0] == 2


def test_gpus_json() -> None:
    code, out, _ = run("gpus", "--json")
    assert code == 0
    gpus = json.loads(out)
    by_id = {gpu["id"]: gpu for gpu in gpus}
    assert len(gpus) >= 20
    assert any("h200" in gpu["aliases"] or gpu["id"] == "h200" for gpu in gpus)
    assert all(gpu["compute_capability"] or (gpu["vendor"] == "amd" and gpu["gfx_arch"])
               for gpu in by_id.values())
    assert by_id["mi300x"]["gfx_arch"] == "gfx942" and by_id["mi300x"]["sm"] is None


def test_gpus_table() -> None:
    code, out, _ = run("gpus")
    assert code == 0 and "12.0" in out


def test_console_script_runs_as_a_module() -> None:
    env = {**os.environ, "SERVEWISE_CACHE_DIR": os.environ["SERVEWISE_CACHE_DIR"]}
    result = subprocess.run([sys.executable, "-m", "servewise", "gate", str(GOOD), "--gpu",
                             "h200", "--json"], capture_output=True, text=True, env=env,
                            check=False)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["passed"] is True


def test_error_text_is_not_read_as_markup() -> None:
    code, _out, err = run("inspect", "/nonexistent/build[dim]x.whl")
    assert code == 2
    assert "build[dim]x.whl" in err
