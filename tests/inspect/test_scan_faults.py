"""Faults around a multi-process scan: Ctrl-C mid-scan, and two scans sharing one store.

Both run the real command in subprocesses on a wheel big enough that the scan uses
worker processes and lasts a while (six ELF members of about 100 MiB each, stored).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from servewise.inspect.scan import PARALLEL_THRESHOLD
from support.paths import CUDA
from support.processes import alive, children_of
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


def libraries(output: str) -> list[dict[str, Any]]:
    """The libraries of an ``inspect --json`` output, without the fields that name the run."""
    data = json.loads(output)
    return [{k: v for k, v in lib.items() if k != "cached"} for lib in data["libraries"]]


@contextlib.contextmanager
def scanning(wheel: Path, cache: Path) -> Iterator[tuple[subprocess.Popen[bytes], set[int]]]:
    """``servewise inspect WHEEL --json`` in its own session, once its workers run.

    Whatever happens in the test, the whole session is killed at the end, so a failing
    test leaves no process behind either.
    """
    process = subprocess.Popen(command("inspect", str(wheel), "--json"), env=environment(cache),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        workers: set[int] = set()
        while not workers and time.monotonic() < deadline and process.poll() is None:
            workers = children_of(process.pid)
            time.sleep(0.002)
        if not workers:
            _out, err = process.communicate(timeout=120)
            pytest.fail(f"the scan never started worker processes (exit {process.returncode}):"
                        f" {err.decode()[-2000:]}")
        yield process, workers
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


@pytest.mark.parametrize("to_group", [True, False], ids=["ctrl-c", "sigint-to-parent"])
def test_interrupt_leaves_no_workers_and_a_usable_store(
    big_wheel: Path, tmp_path: Path, to_group: bool
) -> None:
    cache = tmp_path / "cache"
    with scanning(big_wheel, cache) as (process, workers):
        if to_group:
            os.killpg(process.pid, signal.SIGINT)  # what a terminal does on Ctrl-C
        else:
            os.kill(process.pid, signal.SIGINT)
        out, err = process.communicate(timeout=120)
        assert process.returncode == 130, err.decode()
        assert b"interrupted" in err and b"Traceback" not in err
        assert out == b""  # no partial result shown as complete
        assert not [pid for pid in workers if alive(pid)], "worker processes outlived the scan"
    # The next run opens the same store, finishes, and agrees with a scan that skips it.
    with sqlite3.connect(cache / "servewise.db") as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    again = subprocess.run(command("inspect", str(big_wheel), "--json"), env=environment(cache),
                           capture_output=True, text=True, timeout=180, check=False)
    assert again.returncode == 0, again.stderr
    fresh = subprocess.run(command("inspect", str(big_wheel), "--json", "--no-cache"),
                           env=environment(tmp_path / "other"), capture_output=True, text=True,
                           timeout=180, check=False)
    assert libraries(again.stdout) == libraries(fresh.stdout)
    assert len(libraries(fresh.stdout)) == len(FIXTURES)
    third = subprocess.run(command("inspect", str(big_wheel), "--json"), env=environment(cache),
                           capture_output=True, text=True, timeout=180, check=False)
    assert all(lib["cached"] for lib in json.loads(third.stdout)["libraries"])


def test_a_killed_worker_is_an_error_not_a_hang(big_wheel: Path, tmp_path: Path) -> None:
    with scanning(big_wheel, tmp_path / "cache") as (process, workers):
        os.kill(min(workers), signal.SIGKILL)  # as the kernel's OOM killer would
        out, err = process.communicate(timeout=120)
        assert process.returncode == 2, err.decode()
        error = json.loads(out)  # with --json the error is the output
        assert error["error"] == "source_error" and "a scan worker died" in error["message"]
        assert b"Traceback" not in err
        assert not [pid for pid in workers if alive(pid)]


def test_two_scans_sharing_one_new_store(big_wheel: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    runs = [subprocess.Popen(command("inspect", str(big_wheel), "--json"), env=environment(cache),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)]
    try:
        outputs = [run.communicate(timeout=300) for run in runs]
    finally:
        for run in runs:
            run.kill()
            run.wait()
    for run, (_out, err) in zip(runs, outputs, strict=True):
        assert run.returncode == 0, err
    first, second = (libraries(out) for out, _err in outputs)
    assert first == second and len(first) == len(FIXTURES)
    with sqlite3.connect(cache / "servewise.db") as db:
        keys = [key for (key,) in db.execute("SELECT key FROM scan_cache")]
        (version,) = db.execute("PRAGMA user_version").fetchone()
    assert len(keys) == len(set(keys)) == len(FIXTURES)  # one entry per library, not two
    assert version >= 1
