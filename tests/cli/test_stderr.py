"""stderr is not wrapped when it is not a terminal: paths and commands stay whole."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_a_long_error_stays_on_one_line(tmp_path: Path) -> None:
    long_name = tmp_path / ("very-long-folder-name-" * 8) / "missing-build.so"
    proc = subprocess.run(
        [sys.executable, "-m", "servewise", "gate", str(long_name), "--gpu", "h200"],
        capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 2
    error_lines = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert error_lines, proc.stderr
    assert str(long_name) in error_lines[0], proc.stderr
