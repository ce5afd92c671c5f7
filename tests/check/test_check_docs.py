"""docs/check.md cannot drift: its examples run and it names every option of ``check``."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.main import get_command

from servewise.cli import app, run
from support.paths import ROOT, SAMPLES

DOC = (ROOT / "docs" / "check.md").read_text()


def _examples() -> list[list[str]]:
    block = DOC.split("## Examples", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    found = []
    for line in block.splitlines():
        if line.startswith(".venv/bin/servewise"):
            line = re.sub(r'"\$S/([^"]+)"',
                          lambda m: shlex.quote(str(SAMPLES / m.group(1))), line)
            found.append(shlex.split(line)[1:])
    return found


@pytest.mark.parametrize("argv", _examples())
def test_examples_run(argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("SERVEWISE_CACHE_DIR", str(tmp_path))
    assert run(argv) in (0, 1)
    assert capsys.readouterr().out.strip()


def test_every_option_is_documented() -> None:
    command = get_command(app).commands["check"]  # type: ignore[attr-defined]
    for param in command.params:
        for option in param.opts:
            if option.startswith("--") and option != "--help":
                assert option in DOC, option
