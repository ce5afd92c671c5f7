"""The diff command: JSON, the human table, exit codes, bad input."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from servewise.cli import app
from support.paths import BAD_NIGHTLY as BAD
from support.paths import GOOD_NIGHTLY as GOOD


def test_cli(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["diff", str(GOOD), str(BAD), "--json"])
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["differ"] is True and data["exit_code"] == 1
    assert data["summary"]["archs_lost"] == ["sm_120", "sm_120f"]
    (deep_gemm,) = [lib for lib in data["libraries"] if lib["status"] == "changed"]
    assert deep_gemm["jit_dispatch"]["lost"] == ["sm_120", "sm_120f"]
    assert data["a"]["engine"]["commit"] == "a6b593d2"
    result = runner.invoke(app, ["diff", str(GOOD), str(BAD)])
    assert result.exit_code == 1
    assert "DIFFER" in result.stdout and "-sm_120" in result.stdout
    result = runner.invoke(app, ["diff", str(GOOD), str(GOOD), "--gpu", "h200", "--all"])
    assert result.exit_code == 0 and "SAME" in result.stdout
    assert "vllm/_C.abi3.so" in result.stdout  # --all lists unchanged libraries too
    result = runner.invoke(app, ["diff", str(GOOD), str(tmp_path / "missing.whl")])
    assert result.exit_code == 2
    result = runner.invoke(app, ["diff", str(GOOD), str(BAD), "--gpu", "no-such-gpu", "--json"])
    assert result.exit_code == 2 and json.loads(result.stdout)["error"] == "usage_error"
