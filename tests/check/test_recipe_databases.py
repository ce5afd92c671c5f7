"""check with vLLM's recipe database: the shipped snapshot, `--max-model-len auto`, unknown
speculative methods, AMD GPUs and multi-node recipes (issue 26)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from servewise.check.agreement import agreement
from servewise.cli import run
from servewise.recipes import load_recipes
from support.paths import ROOT


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERVEWISE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("SERVEWISE_DATA_DIR", str(tmp_path / "data"))


def _check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code = run(["check", "--json", *args])
    return code, json.loads(capsys.readouterr().out)


def test_a_bundled_model_uses_a_shipped_vllm_recipe_without_an_import(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert not (tmp_path / "data" / "recipes").exists()
    code, report = _check(capsys, "deepseek-ai/DeepSeek-V4-Flash", "--gpu", "h200:8",
                          "--engine", "vllm")
    recipe = report["recipe"]
    assert isinstance(recipe, dict)
    assert recipe["id"].startswith("vllm-recipes/deepseek-ai/deepseek-v4-flash/")
    assert recipe["recipe"]["origin"] == "vllm-recipes (shipped snapshot)"
    assert code in (0, 1)


def test_max_model_len_auto_fits_the_context_as_vllm_does(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, report = _check(capsys, "llama-3.1-8b-instruct", "--gpu", "rtx-4090:1",
                          "--engine", "vllm")
    assert code == 1  # the model's own 131,072 tokens do not fit one 24 GB card
    code, report = _check(capsys, "llama-3.1-8b-instruct", "--gpu", "rtx-4090:1",
                          "--engine", "vllm", "--", "--max-model-len", "auto")
    assert code == 0, report["problems"]
    notes = [f["message"] for f in report["findings"]]
    assert any("--max-model-len auto: vLLM lowers the context" in n for n in notes)
    argv = report["command"]["argv"]
    assert argv[argv.index("--max-model-len") + 1] == "auto"
    planned = report["plan"]["startup_detail"]["max_model_len"]
    assert 0 < planned < 131072


def test_an_unknown_speculative_method_is_a_note_not_a_failure(
        capsys: pytest.CaptureFixture[str]) -> None:
    spec = '{"method":"dspark","num_speculative_tokens":7}'
    _code, report = _check(capsys, "deepseek-ai/DeepSeek-V4-Flash", "--gpu", "h200:8",
                          "--engine", "vllm", "--", "--speculative-config", spec)
    findings = report["findings"]
    assert isinstance(findings, list)
    note = [f for f in findings if "dspark" in f["message"]]
    assert note and note[0]["level"] == "note" and "not modelled" in note[0]["message"]
    assert not any("dspark" in p["message"] for p in report["problems"])
    assert spec in report["command"]["argv"]


def test_an_amd_gpu_is_planned_and_the_gate_says_it_judges_cuda_only(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, report = _check(capsys, "llama-3.1-70b", "--gpu", "mi300x:2", "--engine", "vllm",
                          "--build", "vllm/vllm-openai-rocm:v0.12.0")
    messages = [f["message"] for f in report["findings"]]
    assert any("judges CUDA builds only" in m for m in messages)
    assert report["plan"] is not None and code == 0
    assert run(["gate", str(ROOT / "pyproject.toml"), "--gpu", "mi300x"]) == 2
    assert "judges CUDA builds only" in capsys.readouterr().err


def test_check_nodes_picks_a_multi_node_recipe(capsys: pytest.CaptureFixture[str]) -> None:
    _code, report = _check(capsys, "moonshotai/Kimi-K2-Instruct", "--gpu", "h200:8",
                          "--engine", "vllm", "--nodes", "2", "--strategy", "multi_node_tp")
    recipe = report["recipe"]
    assert isinstance(recipe, dict) and recipe["recipe"]["match"]["nodes"] == 2
    commands = report["command"]["commands"]
    assert len(commands) == 2 and "--headless" in commands[1]["argv"]


MODELS = ("openai/gpt-oss-120b", "moonshotai/Kimi-K2-Instruct")


def test_every_disagreement_with_the_database_is_documented_with_its_cause() -> None:
    """For two models (the script covers all): each combination the database offers gets
    WILL START, or WILL NOT START with the cause docs/recipes.md lists for it."""
    doc = (ROOT / "docs" / "recipes.md").read_text("utf-8")
    listed = dict(re.findall(r"^\| `([^`]+)` \| \w+ \| \w+ \| (.*) \|$", doc, re.MULTILINE))
    book = load_recipes()
    results = agreement(book, models=MODELS)
    assert len(results) > 20
    for result in results:
        if result.will_start:
            assert result.recipe not in listed, f"{result.recipe} now agrees: update the docs"
        else:
            assert result.recipe in listed, f"{result.recipe}: {result.cause}"
            assert listed[result.recipe].rstrip(".").removesuffix("...")[:60] in \
                result.cause.replace("|", "\\|")


def test_check_serves_the_checkpoint_asked_for_not_the_recipe_s(
        capsys: pytest.CaptureFixture[str]) -> None:
    _code, report = _check(capsys, "deepseek-ai/DeepSeek-V4-Flash-0731", "--gpu",
                           "rtx-pro-6000:2", "--engine", "vllm", "--format", "vllm")
    argv = report["command"]["argv"]
    assert argv[:3] == ["vllm", "serve", "deepseek-ai/DeepSeek-V4-Flash-0731"]
    assert "MJPansa/DeepSeek-V4-Flash-0731-NVFP4" not in argv
    assert "--served-model-name" not in argv  # the recipe's name for other weights
    assert report["model"] == "deepseek-ai/DeepSeek-V4-Flash-0731"
    notes = [f["message"] for f in report["findings"] if "not the weights" in f["message"]]
    assert notes and "MJPansa/DeepSeek-V4-Flash-0731-NVFP4" in notes[0]
