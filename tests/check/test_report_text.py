"""The check report as text and Markdown: short wrapped lines, the engine's words quoted once,
Markdown whose code spans survive the backticks inside them (issue 28, item 9)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from servewise.cli import run
from servewise.render.check import WIDTH, code_span

NO_FIT = ["llama-3.1-70b", "--gpu", "h100:2"]
"""131,072 tokens of Llama-3.1-70B do not fit beside its weights on two H100s."""


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERVEWISE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("SERVEWISE_DATA_DIR", str(tmp_path / "data"))


def test_a_failure_is_said_short_and_the_engine_is_quoted_once(
        capsys: pytest.CaptureFixture[str]) -> None:
    code = run(["check", *NO_FIT])
    out = capsys.readouterr().out
    assert code == 1
    lines = out.splitlines()
    long = [line for line in lines[1:] if len(line) > WIDTH and "https://" not in line]
    assert not long, long
    fail = next(line for line in lines if "FAIL" in line)
    assert len(fail) <= WIDTH and "131,072 tokens" in fail
    # vLLM's own error, once, and the figure to change it to
    assert out.count("To serve at least one request") == 1
    assert out.count("estimated maximum model length") == 1
    largest = re.search(r"estimated maximum model length is\s+(?:\|\s+)?(\d+)", out)
    assert "vllm says:" in out and largest is not None
    assert f"-> --max-model-len {largest.group(1)}" in out


def test_json_keeps_the_engine_words_apart(capsys: pytest.CaptureFixture[str]) -> None:
    code = run(["check", "--json", *NO_FIT])
    report = json.loads(capsys.readouterr().out)
    assert code == 1
    problem = report["problems"][0]
    assert problem["quote"].startswith("To serve at least one request")
    assert "To serve" not in problem["message"]


def _outside_fences(markdown: str) -> list[str]:
    lines, fenced = [], False
    for line in markdown.splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(line)
    return lines


def test_markdown_code_spans_are_never_nested(capsys: pytest.CaptureFixture[str]) -> None:
    run(["check", *NO_FIT, "--format", "markdown"])
    out = capsys.readouterr().out
    for line in _outside_fences(out):
        # the old report wrapped a fix holding a code span in another: ``servewise ...` ...`
        assert "``servewise" not in line, line
        runs = re.findall(r"`+", line)
        for size in {len(r) for r in runs}:
            assert sum(1 for r in runs if len(r) == size) % 2 == 0, line
    assert "fix: `servewise recipe list" in out  # the fix's own code span, as written
    assert re.search(r"fix: `--max-model-len \d+`", out)


@pytest.mark.parametrize(("text", "span"), [
    ("--max-model-len 8192", "`--max-model-len 8192`"),
    ("raise `gpu_memory_utilization`", "`` raise `gpu_memory_utilization` ``"),
    ("a ``b`` c", "```a ``b`` c```"),
])
def test_code_span(text: str, span: str) -> None:
    assert code_span(text) == span


def test_a_verdict_of_servewise_s_own_is_not_quoted_as_the_engine_s(
        capsys: pytest.CaptureFixture[str]) -> None:
    # SGLang starts with a pool shorter than one request and raises nothing
    code = run(["check", "--json", "llama-3.1-70b", "--gpu", "a100:2", "--engine", "sglang"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1
    problem = report["problems"][0]
    assert problem["quote"] is None and "will not start" in problem["message"]
