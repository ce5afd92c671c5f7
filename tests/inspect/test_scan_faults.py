"""Faults around a multi-process scan: Ctrl-C mid-scan, and two scans sharing one store.

Both run the real command in subprocesses on a wheel big enough that the scan uses
worker processes and lasts a while (six ELF members of about 100 MiB each, stored).
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

import pytest

from servewise.inspect.scan import PARALLEL_THRESHOLD
from support.paths import CUDA
from support.zips import build_wheel

FIXTURES = ("libsw_sm80.so", "libsw_sm90a.so", "libsw_sm100f.so", "libsw_sm120f.so",
            "libdispatch_with_sm120.so", "libsw_multiarch.so")
MEMBER_MIB = 100


@pytest.fixture(scope="module")
def big_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel whose members are real fixtures followed by distinct filler (no compression)."""
    members: dict[str, tuple[bytes, int]] = {}
    for number, name in enumerate(FIXTURES):
        block = random.Random(number).randbytes(2**20)
        members[f"pkg/{name}"] = ((CUDA / name).read_bytes() + block * MEMBER_MIB,
                                  zipfile.ZIP_STORED)
    members["pkg-1.0.dist-info/METADATA"] = (b"Name: pkg\nVersion: 1.0\n", zipfile.ZIP_STORED)
    path = build_wheel(tmp_path_factory.mktemp("wheel") / "pkg-1.0-py3-none-any.whl", members)
    assert path.stat().st_size > PARALLEL_THRESHOLD * 4
    return path


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "servewise", *args]


def environment(cache: Path) -> dict[str, str]:
    return {**os.environ, "SERVEWISE_CACHE_DIR": str(cache)}


def children_of(pid: int) -> set[int]:
    """Processes whose parent is ``pid`` (from /proc)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # The command name may hold spaces: the fields after its closing parenthesis.
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == pid:
            found.add(int(entry.name))
    return found


def alive(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def libraries(output: str) -> list[dict[str, Any]]:
    """The libraries of an ``inspect --json`` output, without the fields that name the run."""
    data = json.loads(output)
    return [{k: v for k, v in lib.items() if k != "cached"} for lib in data["libraries"]]


@pytest.mark.parametrize("to_group", [True, False], ids=["ctrl-c", "sigint-to-parent"])
def test_interrupt_leaves_no_workers_and_a_usable_store(
    big_wheel: Path, tmp_path: Path, to_group: bool
) -> None:
    cache = tmp_path / "cache"
    process = subprocess.Popen(command("inspect", str(big_wheel), "--json"),
                               env=environment(cache), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 60
    workers: set[int] = set()
    while len(workers) < 2 and time.monotonic() < deadline and process.poll() is None:
        workers |= children_of(process.pid)
        time.sleep(0.005)
    assert len(workers) >= 2, "the scan never started its worker processes"
    if to_group:
        os.killpg(process.pid, signal.SIGINT)  # what a terminal does on Ctrl-C
    else:
        os.kill(process.pid, signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130, err.decode()
    assert b"interrupted" in err and b"Traceback" not in err
    assert out == b""  # no partial result shown as complete
    time.sleep(0.2)
    assert not [pid for pid in workers if alive(pid)], "worker processes outlived the scan"
    # The next run opens the same store, finishes, and agrees with a scan that skips it.
    with sqlite3.connect(cache / "servewise.db") as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    again = subprocess.run(command("inspect", str(big_wheel), "--json"), env=environment(cache),
                           capture_output=True, text=True, timeout=120, check=False)
    assert again.returncode == 0, again.stderr
    fresh = subprocess.run(command("inspect", str(big_wheel), "--json", "--no-cache"),
                           env=environment(tmp_path / "other"), capture_output=True, text=True,
                           timeout=120, check=False)
    assert libraries(again.stdout) == libraries(fresh.stdout)
    assert len(libraries(fresh.stdout)) == len(FIXTURES)
    third = subprocess.run(command("inspect", str(big_wheel), "--json"), env=environment(cache),
                           capture_output=True, text=True, timeout=120, check=False)
    assert all(lib["cached"] for lib in json.loads(third.stdout)["libraries"])


def test_two_scans_sharing_one_new_store(big_wheel: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    runs = [subprocess.Popen(command("inspect", str(big_wheel), "--json"), env=environment(cache),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)]
    outputs = [run.communicate(timeout=180) for run in runs]
    for run, (_out, err) in zip(runs, outputs, strict=True):
        assert run.returncode == 0, err
    first, second = (libraries(out) for out, _err in outputs)
    assert first == second and len(first) == len(FIXTURES)
    with sqlite3.connect(cache / "servewise.db") as db:
        keys = [key for (key,) in db.execute("SELECT key FROM scan_cache")]
        (version,) = db.execute("PRAGMA user_version").fetchone()
    assert len(keys) == len(set(keys)) == len(FIXTURES)  # one entry per library, not two
    assert version >= 1
