"""Hostile numbers and names on the command line: usage errors (exit 2) saying what is
expected, never an internal error, a hang, or a plan built on them."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from servewise.cli import run
from servewise.knowledge.gpus import MAX_GPUS_PER_NODE


def usage(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    """Run ``argv`` with --json; the error document of a usage error."""
    code = run([*argv])
    out = capsys.readouterr().out
    assert code == 2, out
    document = json.loads(out)
    assert "internal" not in str(document.get("message")), document
    return document


@pytest.mark.parametrize(("argv", "said"), [
    (["plan", "llama-3.1-8b-instruct", "--gpu", "h100", "--gpu-memory", "0MiB", "--json"],
     "expected from 1 MiB to 64 TiB"),
    (["plan", "llama-3.1-8b-instruct", "--gpu", "h100:100000", "--json"],
     f"a node has at most {MAX_GPUS_PER_NODE}"),
    (["check", "llama-3.1-8b-instruct", "--gpu", "h100:100000", "--json"],
     f"a node has at most {MAX_GPUS_PER_NODE}"),
    (["plan", "a/" + "b" * 5000, "--gpu", "h100", "--json"], "5002 characters"),
    (["plan", "a" * 300, "--gpu", "h100", "--json"], "cannot be a model folder"),
])
def test_hostile_plan_arguments_are_usage_errors(
        capsys: pytest.CaptureFixture[str], argv: list[str], said: str) -> None:
    document = usage(capsys, *argv)
    assert said in str(document["message"])
    assert document["hint"]


@pytest.mark.parametrize(("option", "value", "said"), [
    ("--resolution", "0", "cannot end a search"),
    ("--resolution", "nan", "cannot end a search"),
    ("--start", "nan", "is not a value of --param"),
    ("--max", "1e308", "is not a value of --param"),
    ("--min", "1e308", "--min"),
])
def test_hostile_search_bounds_are_usage_errors(
        capsys: pytest.CaptureFixture[str], option: str, value: str, said: str) -> None:
    document = usage(capsys, "search", "--json", "--no-hints", option, value, "--",
                     sys.executable, "-c", "pass", "--max-model-len", "{value}")
    assert said in str(document["message"])


def test_a_negative_layer_count_is_refused_with_what_is_expected(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(
        {"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32,
         "num_hidden_layers": -32}))
    code = run(["plan", str(folder), "--gpu", "h100", "--json"])
    document = json.loads(capsys.readouterr().out)
    assert code == 2
    assert "num_hidden_layers from 0 to" in str(document["message"])
    assert "-32 layers" not in json.dumps(document)
