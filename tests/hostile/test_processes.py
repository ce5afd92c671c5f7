"""Hostile engines: one whose child daemonizes (setsid, double fork) and a detached launch
killed before it was ready. Neither may leave an engine running that servewise cannot stop."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from servewise.launch.records import stop_run
from servewise.store import Store
from support.hostile import bounded, within_limits
from support.processes import alive

DAEMONIZING = """\
import os, sys, time
pidfile = sys.argv[1]
if os.fork() == 0:
    os.setsid()                      # leave the engine's session and process group
    if os.fork() == 0:
        with open(pidfile + ".tmp", "w") as handle:
            handle.write(str(os.getpid()))
        os.replace(pidfile + ".tmp", pidfile)
        while True:
            time.sleep(1)
    os._exit(0)                      # the daemon's parent exits: it is orphaned
print("INFO engine starting", flush=True)
while True:
    time.sleep(1)
"""


def test_a_daemonizing_child_is_adopted_and_stopped(tmp_path: Path) -> None:
    engine = tmp_path / "engine.py"
    engine.write_text(DAEMONIZING)
    pidfile = tmp_path / "daemon.pid"
    outcome = bounded(f"""
        import time
        from pathlib import Path
        from servewise.launch.run import EngineRun, LaunchSpec
        spec = LaunchSpec(argv=({sys.executable!r}, {str(engine)!r}, {str(pidfile)!r}),
                          engine=None, port=1, log_path=Path({str(tmp_path / "run.log")!r}),
                          timeout_s=3, grace_s=1)
        with EngineRun(spec) as run:
            result = run.wait_ready()
        print(result.outcome)
    """, timeout=60)
    within_limits(outcome)
    assert outcome.stdout.strip() == "timeout"
    daemon = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while alive(daemon) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(daemon), "the daemonized child escaped"


HANGING = "import time\nprint('INFO loading', flush=True)\nwhile True:\n    time.sleep(1)\n"


def test_a_detached_launch_killed_before_ready_can_still_be_stopped(tmp_path: Path) -> None:
    engine = tmp_path / "engine.py"
    engine.write_text(HANGING)
    cache = tmp_path / "cache"
    launcher = subprocess.Popen(
        [sys.executable, "-m", "servewise", "launch", "--detach", "--timeout", "120", "--port",
         "9", "--", sys.executable, str(engine)],
        env={**os.environ, "SERVEWISE_CACHE_DIR": str(cache)},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    pid = run_id = None
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and pid is None:
            time.sleep(0.2)
            if not (cache / "servewise.db").exists():
                continue
            with Store(cache / "servewise.db") as store:
                rows = store.launches(5)
            if rows and isinstance(rows[0].get("pid"), int):
                pid, run_id = rows[0]["pid"], rows[0]["run_id"]
        assert pid is not None, "the engine's pid was never recorded"
        assert rows[0]["outcome"] == "starting"
    finally:
        launcher.send_signal(signal.SIGKILL)  # servewise dies before the engine is ready
        launcher.wait()
    assert alive(pid)  # detached: the engine outlives servewise
    with Store(cache / "servewise.db") as store:
        stopped = stop_run(store, str(run_id), grace=2)
    assert stopped["stopped"] in ("terminated", "killed")
    assert not alive(pid)
