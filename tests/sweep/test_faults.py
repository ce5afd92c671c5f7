"""A sweep whose configurations fail: one dies at start-up, one hangs, one serves.

The serving one is the synthetic OpenAI server (a real HTTP server streaming tokens); the
failing ones are the stand-in engine (``--max-model-len 9000 --limit 4096`` prints vLLM's
KV-cache error and exits; ``--hang`` never listens). The sweep must record both failures with
their diagnosis or stage, finish the good configuration's cells, leave no process behind,
and resume without running anything twice -- also after a Ctrl-C in the middle.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from servewise.cli import run
from servewise.store import Store
from support.sweeps import standin_command, synthetic_command

WORKLOADS = [{"isl": 16, "osl": 8, "concurrency": [1, 4], "num_prompts": 8},
             {"isl": 32, "osl": 4, "concurrency": 2, "num_prompts": 6}]


def write_plan(path: Path, configurations: list[dict[str, Any]], **extra: Any) -> Path:
    path.write_text(yaml.safe_dump({"name": "faults", "timeout": 6,
                                    "configurations": configurations,
                                    "workloads": WORKLOADS, **extra}))
    return path


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def sweep_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = run(["sweep", *argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_failed_configurations_are_recorded_and_the_sweep_goes_on(
        tmp_path: Path, store_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan = write_plan(tmp_path / "plan.yaml", [
        {"name": "dies", "command": standin_command("--max-model-len", "9000", "--limit",
                                                    "4096")},
        {"name": "hangs", "command": standin_command("--hang")},
        {"name": "good", "command": synthetic_command(ttft_s=0.02, itl_s=0.002), "gpus": 2,
         "check": {"gpu": "h100:2", "model": str(tmp_path / "no-such-model")}},
    ])
    code, document = sweep_json(capsys, str(plan), "--markdown", str(tmp_path / "t.md"))
    assert code == 1  # two configurations failed; the good one ran
    tables = {t["match"]["configuration"]: t for t in document["configurations"]}
    dies, hangs, good = tables["dies"], tables["hangs"], tables["good"]
    assert dies["status"] == "failed"
    assert dies["launch"]["root_cause"]["category"] == "kv_cache_insufficient"
    assert hangs["status"] == "timeout" and hangs["launch"]["outcome"] == "timeout"
    assert good["status"] == "done" and good["gpus"] == 2
    # a check that cannot run (no such model) is recorded, and the launch goes ahead
    assert good["check"]["ran"] is False and "no-such-model" in good["check"]["why"]
    assert [row["workload"]["max_concurrency"] for row in good["speed"]] == [1, 4, 2]
    assert all(row["failed"] == 0 and row["ttft_ms"] >= 20 for row in good["speed"])
    assert document["cells"] == {"total": 6, "done": 2, "failed": 0}
    # each cell is a stored bench run, cited by every row
    with Store() as store:
        stored = {d["run_id"]: d for d in store.bench_runs(20)}
    assert {row["run_id"] for row in good["speed"]} <= set(stored)
    assert stored[good["speed"][0]["run_id"]]["gpus"] == 2
    # nothing left running: every engine the sweep started is gone
    state = json.loads((tmp_path / "plan.sweep.json").read_text())
    pids = [c["launch"]["pid"] for c in state["configurations"].values()]
    assert len(pids) == 3 and not any(alive(pid) for pid in pids if pid)
    text = (tmp_path / "t.md").read_text()
    assert "### good" in text and "| 16 | 8 | 4 |" in text and "kv_cache_insufficient" in text

    # resumed: nothing runs again (the failures are recorded, the cells done)
    started = time.monotonic()
    code, again = sweep_json(capsys, str(plan))
    assert code == 1 and time.monotonic() - started < 10
    assert again["configurations"] == document["configurations"]
    # --retry-failed launches the failed ones again, never the finished cells
    code, retried = sweep_json(capsys, str(plan), "--retry-failed")
    tables = {t["match"]["configuration"]: t for t in retried["configurations"]}
    assert tables["good"]["speed"] == good["speed"]
    assert tables["dies"]["launch"]["run_id"] != dies["launch"]["run_id"]


def test_ctrl_c_then_resume(tmp_path: Path, store_dir: Path) -> None:
    plan = write_plan(tmp_path / "plan.yaml", [
        {"name": "a", "command": synthetic_command(ttft_s=0.01, itl_s=0.05)},
        {"name": "b", "command": synthetic_command(ttft_s=0.01, itl_s=0.001)},
    ])
    state_path = tmp_path / "plan.sweep.json"
    argv = [sys.executable, "-m", "servewise", "sweep", str(plan), "--json"]
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env={**os.environ, "SERVEWISE_CACHE_DIR": str(store_dir)})
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # interrupt once the first cell is finished
            if state_path.exists() and json.loads(state_path.read_text())["cells"]:
                break
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130, err.decode()[-2000:]
    first = json.loads(state_path.read_text())
    assert json.loads(out)["status"] == "interrupted"
    done = {key: cell["run_ids"] for key, cell in first["cells"].items()
            if cell["status"] == "done"}
    assert 1 <= len(done) < 4
    pid = next(iter(first["configurations"].values()))["launch"]["pid"]
    assert not alive(pid)

    finished = subprocess.run(argv, capture_output=True, timeout=120,
                              env={**os.environ, "SERVEWISE_CACHE_DIR": str(store_dir)})
    assert finished.returncode == 0, finished.stderr.decode()[-2000:]
    second = json.loads(state_path.read_text())
    assert len(second["cells"]) == 4 and second["resumed"] == 1
    for key, run_ids in done.items():  # the finished cells were not run again
        assert second["cells"][key]["run_ids"] == run_ids
    assert all(cell["status"] == "done" for cell in second["cells"].values())


def test_an_sla_cell_searches_and_keeps_every_run(tmp_path: Path, store_dir: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """A workload with ``sla`` is a search; its row is the best run, every run stored."""
    plan = tmp_path / "sla.yaml"
    plan.write_text(yaml.safe_dump({
        "name": "sla", "timeout": 30,
        "configurations": [{"name": "curve", "command": synthetic_command(
            ttft_s=0.01, ttft_per_active_s=0.02, itl_s=0.002)}],
        "workloads": [{"isl": 16, "osl": 4, "sla": "ttft_p99<=300ms", "concurrency": 1,
                       "sla_max": 12}]}))
    code, document = sweep_json(capsys, str(plan))
    assert code == 0
    (table,) = document["configurations"]
    (row,) = table["speed"]
    # the limit holds up to 14, so the cap of 12 is the answer
    assert row["sla"]["best"] == 12 and row["sla"]["status"] == "maximum"
    assert row["workload"]["max_concurrency"] == 12
    state = json.loads((tmp_path / "sla.sweep.json").read_text())
    (cell,) = state["cells"].values()
    assert row["run_id"] == cell["sla"]["best_run_id"] and 2 <= len(cell["run_ids"]) <= 8
    with Store() as store:
        assert all(store.bench_run(run_id) is not None for run_id in cell["run_ids"])


def test_a_sweep_from_flags_resumes_from_the_store(store_dir: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    command = shlex.join(synthetic_command(ttft_s=0.01, itl_s=0.001))
    argv = ["--config", f"a={command}", "--isl", "8", "--osl", "4", "--concurrency", "1,2",
            "--num-prompts", "4", "--gpus", "1"]
    code, first = sweep_json(capsys, *argv)
    assert code == 0 and first["cells"]["done"] == 1
    assert Path(first["state_path"]).parent == store_dir / "sweeps"
    code, again = sweep_json(capsys, *argv)  # the same command: nothing runs again
    assert code == 0 and again["state_path"] == first["state_path"]
    assert again["configurations"] == first["configurations"]
