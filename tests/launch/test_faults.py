"""Launches of stand-in engines that fail in every way the issue names; none leaves a process."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from servewise.launch.process import group_members, stop_group
from servewise.launch.run import EngineRun, LaunchResult, LaunchSpec

Standin = Callable[..., tuple[list[str], int]]


def run(argv: list[str], port: int, tmp_path: Path, *, timeout: float = 20.0,
        grace: float = 2.0, log_path: Path | None = None) -> tuple[LaunchResult, int | None]:
    spec = LaunchSpec(argv=tuple(argv), engine=None, port=port,
                      log_path=log_path or tmp_path / "engine.log", timeout_s=timeout,
                      grace_s=grace)
    with EngineRun(spec) as engine:
        result = engine.wait_ready()
        pgid = engine.process.pid if engine.process is not None else None
    final = engine.result or result
    if pgid is not None:
        assert group_members(pgid) == [], "the engine's group outlived the launch"
    return final, pgid


def test_ready_then_stopped(standin: Standin, tmp_path: Path) -> None:
    argv, port = standin("--child")
    result, _ = run(argv, port, tmp_path)
    assert result.ready and result.stage == "ready"
    assert result.models == ("standin",)
    assert result.numbers["kv_cache_tokens"] == 65408
    assert result.stopped == "terminated"
    assert "listening" in (tmp_path / "engine.log").read_text()


def test_nonexistent_command(tmp_path: Path) -> None:
    result, pgid = run(["/nonexistent/engine", "--port", "1"], 18991, tmp_path)
    assert result.outcome == "start_error" and pgid is None
    assert "no such program" in result.message


def test_port_taken(standin: Standin, tmp_path: Path) -> None:
    import socket

    argv, port = standin()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))
        sock.listen()
        result, pgid = run(argv, port, tmp_path)
    assert result.outcome == "port_in_use" and pgid is None
    assert str(port) in result.message and result.hint


def test_silent_hang_times_out(standin: Standin, tmp_path: Path) -> None:
    argv, port = standin("--hang")
    result, _ = run(argv, port, tmp_path, timeout=2.0)
    assert result.outcome == "timeout" and result.stage == "port"
    assert "connect" in result.message and result.diagnosis is None


def test_sigkilled_engine(standin: Standin, tmp_path: Path) -> None:
    argv, port = standin("--delay", "30", "--child")
    spec = LaunchSpec(argv=tuple(argv), engine=None, port=port,
                      log_path=tmp_path / "engine.log", timeout_s=30, grace_s=2)
    with EngineRun(spec) as engine:
        assert engine.start() is None and engine.process is not None
        pgid = engine.process.pid
        threading.Timer(1.0, os.kill, (pgid, signal.SIGKILL)).start()
        result = engine.wait_ready()
    assert result.outcome == "failed" and result.exit_code == -9
    assert "SIGKILL" in result.message and "OOM" in result.message
    assert group_members(pgid) == []  # the forked child went with the group


def test_child_ignoring_sigterm_is_killed(standin: Standin, tmp_path: Path) -> None:
    argv, port = standin("--ignore-term", "--child")
    result, _ = run(argv, port, tmp_path, grace=1.0)
    assert result.ready and result.stopped == "killed"


def test_fatal_line_while_running(standin: Standin, tmp_path: Path) -> None:
    argv, port = standin("--fatal")
    began = time.monotonic()
    result, _ = run(argv, port, tmp_path, timeout=60.0)
    assert time.monotonic() - began < 30  # not the deadline: the fatal line ended the wait
    assert result.outcome == "failed" and "still running" in result.message
    cause = result.root_cause()
    assert cause is not None and cause.category == "kv_cache_insufficient"
    assert cause.library == "vllm-config"
    assert result.numbers["estimated_max_model_len"] == 65408


def test_exit_code_reported(standin: Standin, tmp_path: Path) -> None:
    argv, port = standin("--exit", "3")
    result, _ = run(argv, port, tmp_path)
    assert result.outcome == "failed" and result.exit_code == 3
    assert "code 3" in result.message


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_full_disk_for_logs(standin: Standin, tmp_path: Path) -> None:
    argv, port = standin("--spam")
    result, _ = run(argv, port, tmp_path, log_path=Path("/dev/full"))
    assert result.outcome == "log_error"
    assert "No space left" in result.message and result.hint


def test_interrupt_stops_the_group(standin: Standin, tmp_path: Path) -> None:
    argv, port = standin("--hang", "--child")
    spec = LaunchSpec(argv=tuple(argv), engine=None, port=port,
                      log_path=tmp_path / "engine.log", timeout_s=30, grace_s=2)
    timer = threading.Timer(1.0, signal.raise_signal, (signal.SIGINT,))
    with EngineRun(spec) as engine:
        timer.start()
        result = engine.wait_ready()
        pgid = engine.process.pid if engine.process else 0
    assert result.outcome == "interrupted" and result.exit_status == 130
    assert group_members(pgid) == []


def test_watchdog_stops_the_group_when_servewise_dies(standin: Standin, tmp_path: Path
                                                      ) -> None:
    """A servewise killed with SIGKILL mid-launch: the watchdog ends the engine's group."""
    import subprocess

    argv, port = standin("--hang", "--child", "--pidfile", str(tmp_path / "pids"))
    script = (
        "import sys; from pathlib import Path\n"
        "from servewise.launch.run import EngineRun, LaunchSpec\n"
        f"spec = LaunchSpec(argv=tuple({argv!r}), engine=None, port={port}, "
        f"log_path=Path({str(tmp_path / 'e.log')!r}), timeout_s=60, grace_s=1)\n"
        "EngineRun(spec).wait_ready()\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", script])
    pids_file = tmp_path / "pids"
    deadline = time.monotonic() + 30
    while not pids_file.exists() or not pids_file.read_text().strip():
        assert time.monotonic() < deadline, "the stand-in never started"
        time.sleep(0.1)
    leader = int(pids_file.read_text().split()[0])
    assert len(group_members(leader)) == 2
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 15
    while group_members(leader) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = group_members(leader)
    detail = {pid: (Path(f"/proc/{pid}/stat").read_text() if Path(f"/proc/{pid}").exists()
                    else "") for pid in left}
    watchdogs = [p.name for p in Path("/proc").iterdir() if p.name.isdigit() and
                 b"launch.watchdog" in _cmdline(p)]
    stop_group(leader, grace=0.5)  # never leave a process behind, even when the test fails
    assert left == [], (detail, watchdogs, leader)


def _cmdline(path: Path) -> bytes:
    try:
        return (path / "cmdline").read_bytes()
    except OSError:
        return b""


class _FullDisk:
    """A log file on a disk that has just filled up."""

    def write(self, data: bytes) -> int:
        import errno

        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass


def test_disk_fills_while_streaming(standin: Standin, tmp_path: Path) -> None:
    argv, port = standin("--spam", "--child")
    spec = LaunchSpec(argv=tuple(argv), engine=None, port=port,
                      log_path=tmp_path / "engine.log", timeout_s=30, grace_s=2)
    with EngineRun(spec) as engine:
        assert engine.start() is None and engine.pump is not None
        assert engine.process is not None
        pgid = engine.process.pid
        original, engine.pump.sink = engine.pump.sink, _FullDisk()  # type: ignore[assignment]
        assert original is not None
        original.close()
        result = engine.wait_ready()
    assert result.outcome == "log_error" and "No space left" in result.message
    assert group_members(pgid) == []
