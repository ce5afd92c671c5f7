"""``bisect`` on files: each build named once, and said oldest first whichever way given."""

from __future__ import annotations

from pathlib import Path

import pytest

from servewise.cli import run
from support.paths import BAD_NIGHTLY, GOOD_NIGHTLY


def test_newest_first_files_are_named_once_and_turned_round(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    new, old = tmp_path / "new.whl", tmp_path / "old.whl"
    new.write_bytes(BAD_NIGHTLY.read_bytes())
    old.write_bytes(GOOD_NIGHTLY.read_bytes())
    code = run(["bisect", str(new), str(old), "--jit-arch", "sm_120", "--no-cache"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    good = next(line for line in captured.out.splitlines() if line.startswith("last good"))
    bad = next(line for line in captured.out.splitlines() if line.startswith("first bad"))
    assert good.count(str(old)) == 1 and str(new) not in good
    assert bad.count(str(new)) == 1 and str(old) not in bad
    assert "given newest first" in captured.err
    assert "oldest first as given" in captured.err  # the plan, before the ends are judged
