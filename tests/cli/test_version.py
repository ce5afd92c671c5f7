"""The version command: the table, JSON, bad input."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from servewise.cli import app


def test_version_json_and_table() -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["version", "0.26.1rc1.dev229+g6f91edf96.d20260731", "--json"])
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["channel"] == "local-build" and data["official_build_possible"] is False
    assert data["commit"] == "6f91edf96" and data["build_date"] == "2026-07-31"
    result = runner.invoke(app, ["version", "vllm/vllm-openai:nightly"])
    assert result.exit_code == 0
    assert "floating" in result.stdout and "the publisher moves it" in result.stdout


def test_bad_version_exits_2_with_a_hint() -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["version", "not a version"])
    assert result.exit_code == 2
    assert "hint:" in result.stderr
    result = runner.invoke(app, ["version", "???", "--json"])
    assert result.exit_code == 2
    assert json.loads(result.stdout)["error"] == "usage_error"
