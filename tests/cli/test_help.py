"""Every command and subcommand answers ``--help`` (and the root ``--version``)."""

from __future__ import annotations

from typing import Any

import pytest
import typer.main

from servewise.cli import app, run


def _paths(command: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    paths = [prefix]
    subcommands = getattr(command, "commands", None)
    if subcommands:
        for name, sub in sorted(subcommands.items()):
            paths.extend(_paths(sub, (*prefix, name)))
    return paths


COMMANDS = _paths(typer.main.get_command(app))


def test_the_app_has_the_commands_users_are_told_about() -> None:
    names = {path[0] for path in COMMANDS if path}
    assert {"inspect", "gate", "diff", "tags", "bisect", "plan", "model", "diagnose",
            "bench", "runs", "version", "gpus"} <= names


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "servewise")
def test_help_works(path: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> None:
    assert run([*path, "--help"]) == 0
    out = capsys.readouterr().out
    assert "Usage:" in out
    assert "--help" in out


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["--version"]) == 0
    assert capsys.readouterr().out.startswith("servewise ")


def test_usage_error_keeps_json(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    assert run(["gate", "--json"]) == 2
    data = json.loads(capsys.readouterr().out)
    assert data["error"] == "usage_error"
    assert "REF" in data["message"] or "Missing" in data["message"]


@pytest.mark.parametrize("text", ["h200:0", "h200:-1", "h200:x"])
def test_gpu_count_below_one_is_refused_everywhere(text: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["plan", "llama-3.1-8b-instruct", "--gpu", text]) == 2
    assert run(["gate", "nothing.so", "--gpu", text]) == 2
    err = capsys.readouterr().err
    assert "NAME:COUNT" in err
