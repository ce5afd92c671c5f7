"""servewise itself interrupted: Ctrl-C mid-search, SIGTERM mid-launch (real subprocesses)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from servewise.launch.process import group_members, stop_group
from servewise.launch.readiness import ReadinessProbe
from servewise.store import Store

Standin = Callable[..., tuple[list[str], int]]


def wait_for(path: Path, timeout: float = 30.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.1)
    return [int(pid) for pid in path.read_text().split()]


def servewise(*argv: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "servewise", *argv], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_ctrl_c_mid_search(standin: Standin, store_dir: Path, tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    argv, _ = standin("--hang", "--child", "--pidfile", str(pidfile), "--max-model-len",
                      "{value}")
    argv[argv.index("--port") + 1] = "{port}"
    env = {**os.environ, "SERVEWISE_CACHE_DIR": str(store_dir)}
    process = servewise("search", "--json", "--start", "1024", "--timeout", "120", "--",
                        *argv, env=env)
    leader = wait_for(pidfile)[0]
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    left = group_members(leader)
    stop_group(leader, grace=0.5)
    assert left == []
    assert process.returncode == 130, err
    document = json.loads(out)
    assert document["status"] == "interrupted"
    assert document["attempts"][0]["outcome"] == "interrupted"
    with Store(store_dir / "servewise.db") as store:
        stored = store.search(document["search_id"])
        assert stored is not None and stored["status"] == "interrupted"
        assert store.launches(search_id=document["search_id"])[0]["outcome"] == "interrupted"


def test_sigterm_mid_launch(standin: Standin, store_dir: Path, tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    argv, port = standin("--hang", "--child", "--ignore-term", "--pidfile", str(pidfile))
    env = {**os.environ, "SERVEWISE_CACHE_DIR": str(store_dir)}
    process = servewise("launch", "--json", "--grace", "1", "--port", str(port), "--", *argv,
                        env=env)
    leader = wait_for(pidfile)[0]
    process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=60)
    left = group_members(leader)
    stop_group(leader, grace=0.5)
    assert left == []  # SIGTERM ignored by the engine: SIGKILL after the grace period
    document = json.loads(out)
    assert process.returncode == 130, err
    assert document["outcome"] == "interrupted" and document["stopped"] == "killed"
    assert "SIGTERM" in document["message"]


def test_sglang_readiness_asks_health_generate(standin: Standin) -> None:
    argv, port = standin()
    engine = subprocess.Popen(argv, stdout=subprocess.DEVNULL, start_new_session=True)
    probe = ReadinessProbe("127.0.0.1", port, "sglang")
    try:
        deadline = time.monotonic() + 30
        while not probe.step():
            assert time.monotonic() < deadline, probe.last_status
            time.sleep(0.1)
        assert probe.stage == "ready" and probe.models == ["standin"]
        vllm = ReadinessProbe("127.0.0.1", port, "vllm")
        assert vllm.step()
        vllm.close()
    finally:
        probe.close()
        stop_group(engine.pid, engine, grace=2)


def test_foreground_launch_serves_until_ctrl_c(standin: Standin, store_dir: Path,
                                               tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    argv, port = standin("--child", "--pidfile", str(pidfile))
    env = {**os.environ, "SERVEWISE_CACHE_DIR": str(store_dir)}
    process = servewise("launch", "--json", "--port", str(port), "--", *argv, env=env)
    assert process.stdout is not None
    first = process.stdout.readline()  # the ready document (indented JSON) comes first
    lines = [first]
    while not lines[-1].startswith("}"):
        lines.append(process.stdout.readline())
    document = json.loads("".join(lines))
    assert document["ready"] and document["stopped"] is None
    leader = wait_for(pidfile)[0]
    assert len(group_members(leader)) == 2  # still serving
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    left = group_members(leader)
    stop_group(leader, grace=0.5)
    assert left == [] and process.returncode == 0, err
    with Store(store_dir / "servewise.db") as store:
        stored = store.launch(document["run_id"])
        assert stored is not None and stored["ended"] == "stopped by the user"
        assert stored["stopped"] == "terminated"
