"""The documentation cannot drift: every command is documented and README examples run."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from servewise.cli import app
from support.paths import ROOT, SAMPLES

README = (ROOT / "README.md").read_text()
GATE_DOC = (ROOT / "docs" / "gate.md").read_text()


def _commands() -> list[str]:
    group = get_command(app)
    return sorted(group.commands)  # type: ignore[attr-defined]


def test_readme_starts_with_the_two_commands() -> None:
    head = "\n".join(README.splitlines()[:6])
    assert "make demo" in head and "make test" in head


@pytest.mark.parametrize("command", _commands())
def test_every_command_is_documented(command: str) -> None:
    assert f"servewise {command}" in README
    group = get_command(app)
    assert group.commands[command].help  # type: ignore[attr-defined]


def test_gate_doc_names_every_option() -> None:
    group = get_command(app)
    for command in ("inspect", "gate"):
        for param in group.commands[command].params:  # type: ignore[attr-defined]
            for option in param.opts:
                if option.startswith("--") and option != "--help":
                    assert option in GATE_DOC or option in README, (command, option)


def _examples(section: str) -> list[list[str]]:
    """The ``.venv/bin/servewise`` lines of a shell block, with ``$S`` made the samples folder."""
    examples = []
    for line in section.splitlines():
        if line.startswith(".venv/bin/servewise"):
            line = re.sub(r'"\$S/([^"]+)"', lambda m: shlex.quote(str(SAMPLES / m.group(1))), line)
            examples.append(shlex.split(line)[1:])
    return examples


def _readme_examples() -> list[list[str]]:
    return _examples(README.split("### Examples", 1)[1].split("```sh", 1)[1].split("```", 1)[0])


def _builds_examples() -> list[list[str]]:
    doc = (ROOT / "docs" / "builds.md").read_text()
    return _examples(doc.split("## Examples that run", 1)[1].split("```sh", 1)[1].split("```")[0])


def test_builds_doc_names_every_option() -> None:
    doc = (ROOT / "docs" / "builds.md").read_text()
    group = get_command(app)
    for command in ("diff", "version"):
        for param in group.commands[command].params:  # type: ignore[attr-defined]
            for option in param.opts:
                if option.startswith("--") and option != "--help":
                    assert option in doc, (command, option)



@pytest.mark.parametrize("argv", _readme_examples() + _builds_examples())
def test_readme_examples_run(
    argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SERVEWISE_CACHE_DIR", str(tmp_path))
    result = CliRunner().invoke(app, argv)
    assert result.exit_code in (0, 1), result.output
    assert result.stdout.strip()
