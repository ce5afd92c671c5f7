"""docs/plan.md cannot drift: its examples run and it names every option."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from servewise.cli import app, run
from support.paths import ROOT

PLAN_DOC = (ROOT / "docs" / "plan.md").read_text()


def _examples() -> list[list[str]]:
    block = PLAN_DOC.split("```sh", 1)[1].split("```", 1)[0]
    return [shlex.split(line)[1:] for line in block.splitlines()
            if line.startswith(".venv/bin/servewise")]


@pytest.mark.parametrize("argv", _examples())
def test_plan_doc_examples_run(argv: list[str], tmp_path: Path,
                               monkeypatch: pytest.MonkeyPatch,
                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("SERVEWISE_CACHE_DIR", str(tmp_path))
    assert run(argv) in (0, 1)
    assert capsys.readouterr().out.strip()


@pytest.mark.parametrize("name", ["plan", "model"])
def test_every_option_is_documented(name: str) -> None:
    import typer.main

    command = typer.main.get_command(app).commands[name]  # type: ignore[attr-defined]
    for param in command.params:
        for option in param.opts:
            if option.startswith("--") and option != "--help":
                assert option in PLAN_DOC, option
