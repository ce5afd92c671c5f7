"""``recipe save``: a ready launch becomes a verified user recipe that ``check`` prefers.

The launch document is :func:`support.launch_docs.llama_launch` (check's real answer and a
real vLLM 0.19.0 H100 log; the engine cannot run here): tests/launch/test_evidence_engine.py
does the same with a real CPU engine launch.
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

import pytest

from servewise.cli import run
from servewise.errors import UsageError
from servewise.recipes.save import engine_flags, recipe_from_run
from servewise.store import Store
from support.launch_docs import CHECK_ARGS, FLAGS, MODEL, llama_launch

ARGS = [MODEL, *FLAGS, "--port", "8000"]


@pytest.fixture
def folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SERVEWISE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("SERVEWISE_DATA_DIR", str(tmp_path / "data"))
    return tmp_path


def _launch(capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert run(CHECK_ARGS) == 0
    return llama_launch(json.loads(capsys.readouterr().out), "launch-20261207-050000-abcdef")


def test_engine_flags_drop_the_machines_own() -> None:
    assert engine_flags([MODEL, *FLAGS, "--port", "1", "--host=0.0.0.0",
                         "--served-model-name", "x"]) == (
        MODEL, ["--max-model-len", "8192", "--gpu-memory-utilization", "0.95",
                "--kv-cache-dtype", "fp8"])
    assert engine_flags(["--model-path", "/m", "--tp", "2"]) == ("/m", ["--tp", "2"])


def test_recipe_from_run(folders: Path, capsys: pytest.CaptureFixture[str]) -> None:
    launch = _launch(capsys)
    saved = recipe_from_run(launch, engine_args=ARGS, gpu="h100", gpu_count=1, who="me",
                            today=datetime.date(2026, 12, 7), device={"driver": "580.1"})
    recipe = saved.recipe
    assert recipe.id == "user/vllm/llama-3.1-8b-instruct/h100-sxm/1gpu"
    assert (recipe.status, recipe.checkpoint, recipe.match.hw, recipe.match.gpus) == (
        "verified", MODEL, "h100-sxm", 1)
    assert recipe.argv == ("--max-model-len", "8192", "--gpu-memory-utilization", "0.95",
                           "--kv-cache-dtype", "fp8")
    assert recipe.image == "vllm/vllm-openai:v0.19.0"
    assert recipe.provenance.engine_version == "0.19.0"
    assert recipe.provenance.source == "measured: servewise launch " + launch["run_id"]
    assert "driver 580.1" in recipe.provenance.notes
    assert saved.evidence["observed"]["kv_cache_tokens"] == 952032
    assert saved.evidence["prediction"]["source"] == "check"


@pytest.mark.parametrize(("change", "message"), [
    ({"outcome": "failed", "ready": False}, "did not become ready"),
    ({"engine": None}, "not a vLLM or SGLang server"),
])
def test_only_a_ready_engine_launch_is_a_recipe(folders: Path, change: dict[str, Any],
                                                message: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(UsageError, match=message):
        recipe_from_run({**_launch(capsys), **change}, engine_args=ARGS, gpu="h100")


def test_no_gpu_is_a_usage_error(folders: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(UsageError, match="no GPU known"):
        recipe_from_run(_launch(capsys), engine_args=ARGS, gpu=None)


def test_save_then_check_prefers_it_and_show_prints_the_evidence(
        folders: Path, capsys: pytest.CaptureFixture[str]) -> None:
    launch = _launch(capsys)
    with Store() as store:
        store.put_launch(launch["run_id"], launch)
    assert run(["recipe", "save", launch["run_id"], "--gpu", "h100:1", "--json"]) == 0
    saved = json.loads(capsys.readouterr().out)
    assert Path(saved["file"]).parent == folders / "data" / "recipes"
    assert Path(saved["evidence_file"]).is_file()
    assert run(["check", MODEL, "--gpu", "h100:1", "--json"]) == 0
    check = json.loads(capsys.readouterr().out)
    assert check["recipe"]["id"] == saved["id"]
    assert check["recipe"]["status"] == "verified"
    assert run(["recipe", "show", saved["id"], "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["evidence"]["run_id"] == launch["run_id"]
    assert run(["recipe", "show", saved["id"]]) == 0
    assert "952,032" in capsys.readouterr().out
    assert run(["recipe", "save", "launch-nothing", "--gpu", "h100:1", "--json"]) == 2
    assert "no launch" in json.loads(capsys.readouterr().out)["message"]


def test_the_served_model_list_names_the_model_last(folders: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    launch = {**_launch(capsys), "prediction": None, "models": ["tiny", "org/served-name"]}
    saved = recipe_from_run(launch, engine_args=["--port", "8000"], gpu="h100")
    assert saved.recipe.match.model == "org/served-name"
    with pytest.raises(UsageError, match="names no model"):
        recipe_from_run({**launch, "models": ["tiny"]}, engine_args=[], gpu="h100")
