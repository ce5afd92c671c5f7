"""``sweep --ray``: configurations as Ray tasks on a local cluster the test starts.

The cluster is one head node (``ray start --head --block``, in its own process group, stopped
at the end) with 2 CPUs standing in for GPUs (``--ray-resource CPU``). Two configurations
reserving one each must run at once; a third that needs 3 cannot be placed on any node and is
refused at once (Ray would wait for it forever). Afterwards no engine is left and every
CPU of the cluster is free again. Ctrl-C in the middle cancels the tasks: the engines are
gone, the finished cells kept, and the same command finishes the rest.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from servewise.cli import run
from support.engine import free_port
from support.processes import alive  # a zombie is an engine that ended: not alive
from support.sweeps import synthetic_command

ray = pytest.importorskip("ray")

RAY_BIN = Path(sys.executable).parent / "ray"  # installed beside the interpreter with ray


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A one-node Ray cluster with 2 CPUs on 127.0.0.1; its address."""
    if not RAY_BIN.exists():
        pytest.skip(f"no ray command at {RAY_BIN}")
    folder = tempfile.mkdtemp(prefix="sw-ray-", dir="/tmp")  # short: Ray's socket paths
    port = free_port()
    log = Path(folder) / "head.log"
    with log.open("wb") as handle:
        head = subprocess.Popen(
            [str(RAY_BIN), "start", "--head", "--block", f"--port={port}", "--num-cpus=2",
             "--num-gpus=0", "--include-dashboard=false", "--disable-usage-stats",
             "--node-ip-address=127.0.0.1", f"--temp-dir={folder}"],
            stdout=handle, stderr=subprocess.STDOUT, start_new_session=True,
            env={**os.environ, "RAY_USAGE_STATS_ENABLED": "0"})
    try:
        deadline = time.monotonic() + 120
        while "Ray runtime started" not in log.read_text(errors="replace"):
            if head.poll() is not None or time.monotonic() > deadline:
                pytest.fail("ray start failed:\n" + log.read_text(errors="replace")[-3000:])
            time.sleep(0.25)
        yield f"127.0.0.1:{port}"
    finally:
        head.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            head.wait(timeout=30)
        with contextlib.suppress(ProcessLookupError):  # anything of its group still there
            os.killpg(head.pid, signal.SIGKILL)
        head.wait()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.filterwarnings("ignore::ResourceWarning")
def test_two_configurations_at_once_on_a_local_cluster(
        cluster: str, tmp_path: Path, store_dir: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    serving = synthetic_command(ttft_s=0.02, itl_s=0.02)
    plan = tmp_path / "ray.yaml"
    plan.write_text(yaml.safe_dump({
        "name": "ray", "timeout": 60,
        "configurations": [{"name": "one", "command": serving, "gpus": 1},
                           {"name": "two", "command": serving, "gpus": 1},
                           {"name": "too-big", "command": serving, "gpus": 3}],
        "workloads": [{"isl": 16, "osl": 20, "concurrency": 2, "num_prompts": 8},
                      {"isl": 32, "osl": 20, "concurrency": 4, "num_prompts": 8}],
    }))
    code = run(["sweep", str(plan), "--ray", cluster, "--ray-resource", "CPU", "--json"])
    document = json.loads(capsys.readouterr().out)
    assert code == 1  # too-big could not be placed; the others ran
    tables = {t["match"]["configuration"]: t for t in document["configurations"]}
    assert tables["too-big"]["status"] == "start_error"
    assert "no node of the cluster has 3 CPU" in tables["too-big"]["message"]
    one, two = tables["one"], tables["two"]
    for table in (one, two):
        assert table["status"] == "done", table
        assert [r["workload"]["max_concurrency"] for r in table["speed"]] == [2, 4]
        assert all(r["failed"] == 0 and r["ttft_ms"] >= 20 for r in table["speed"])
    # they ran at once: each started before the other ended
    assert one["started_at"] < two["ended_at"] and two["started_at"] < one["ended_at"]
    state = json.loads((tmp_path / "ray.sweep.json").read_text())
    records = [state["configurations"][t["configuration_key"]] for t in (one, two)]
    for record in records:
        assert record["ray"]["resource"] == "CPU" and record["worker_pid"] != os.getpid()
        assert not alive(record["launch"]["pid"])  # the engine is gone
        assert "listening on" in Path(record["ray"]["local_log"]).read_text()  # streamed back
    # nothing left running on the cluster: every CPU is free again
    assert cpus_free(cluster) == 2.0


def cpus_free(address: str) -> float:
    ray.init(address=address, log_to_driver=False, logging_level="WARNING")
    try:
        deadline = time.monotonic() + 30
        while ray.available_resources().get("CPU") != 2.0 and time.monotonic() < deadline:
            time.sleep(0.5)
        return float(ray.available_resources().get("CPU", 0.0))
    finally:
        ray.shutdown()


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.filterwarnings("ignore::ResourceWarning")
def test_ctrl_c_cancels_the_tasks_and_the_sweep_resumes(
        cluster: str, tmp_path: Path, store_dir: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    slow = synthetic_command(ttft_s=0.02, itl_s=0.05)  # a cell takes about 20 s
    plan = tmp_path / "ray.yaml"
    plan.write_text(yaml.safe_dump({
        "name": "ray", "timeout": 60,
        "configurations": [{"name": "one", "command": slow, "gpus": 1},
                           {"name": "two", "command": slow, "gpus": 1}],
        "workloads": [{"isl": 16, "osl": 20, "concurrency": 2, "num_prompts": 4},
                      {"isl": 16, "osl": 40, "concurrency": 2, "num_prompts": 20}],
    }))
    state_path = tmp_path / "ray.sweep.json"
    argv = [sys.executable, "-m", "servewise", "sweep", str(plan), "--ray", cluster,
            "--ray-resource", "CPU", "--json"]
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env={**os.environ, "SERVEWISE_CACHE_DIR": str(store_dir)})
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # interrupt once a cell is finished
            if state_path.exists() and json.loads(state_path.read_text())["cells"]:
                break
            time.sleep(0.2)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130, err.decode()[-2000:]
    assert json.loads(out)["status"] == "interrupted"
    first = json.loads(state_path.read_text())
    records = list(first["configurations"].values())
    assert {r["status"] for r in records} == {"interrupted"}
    for record in records:  # the cancelled tasks' engines are gone
        deadline = time.monotonic() + 15
        while alive(record["engine_pid"]) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not alive(record["engine_pid"])
    assert cpus_free(cluster) == 2.0
    done = {key: cell["run_ids"] for key, cell in first["cells"].items()}
    assert 1 <= len(done) < 4

    code = run(["sweep", str(plan), "--ray", cluster, "--ray-resource", "CPU", "--json"])
    document = json.loads(capsys.readouterr().out)
    assert code == 0 and document["cells"]["done"] == 4
    second = json.loads(state_path.read_text())
    for key, run_ids in done.items():  # the finished cells were not run again
        assert second["cells"][key]["run_ids"] == run_ids
