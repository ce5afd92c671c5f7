"""Worker processes: results for every item, and no worker left when the consumer stops."""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from multiprocessing.connection import Connection

import pytest

from servewise.errors import SourceError
from servewise.inspect import workers
from servewise.inspect.workers import run_in_workers
from support.processes import alive


def square(item: int) -> dict[str, int]:
    return {"pid": os.getpid(), "value": item * item}


def slow(item: float) -> tuple[float, float]:
    """When the item ran, on the clock every process shares."""
    began = time.monotonic()
    time.sleep(item)
    return began, time.monotonic()


def suicide(item: int) -> int:
    if item == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    return item


def test_every_item_once_on_several_workers() -> None:
    results = dict(run_in_workers(square, list(range(40)), 3))
    assert {number: r["value"] for number, r in results.items()} == {i: i * i for i in range(40)}
    pids = {r["pid"] for r in results.values()}
    assert os.getpid() not in pids and 1 <= len(pids) <= 3
    assert not [pid for pid in pids if alive(pid)]


def test_largest_first_items_spread_over_workers() -> None:
    # Handed out in order to whichever worker is free: two long items run side by side.
    ran = dict(run_in_workers(slow, [0.6, 0.6, 0.01, 0.01], 2))
    assert sorted(ran) == [0, 1, 2, 3]
    (first_began, first_ended), (second_began, second_ended) = ran[0], ran[1]
    assert second_began < first_ended and first_began < second_ended  # side by side


def test_stopping_early_kills_every_worker() -> None:
    results = run_in_workers(square, list(range(100)), 2)
    _number, first = next(results)
    results.close()
    assert not alive(first["pid"])


def test_a_worker_that_dies_is_an_error_not_a_hang() -> None:
    with pytest.raises(SourceError) as info:
        list(run_in_workers(suicide, list(range(8)), 2, what=lambda n: f"member {n}"))
    assert "died (exit code -9)" in info.value.message and "member 3" in info.value.message


def _late_serve(connection: Connection) -> None:
    time.sleep(0.5)  # the moment between the fork and the worker's own SIGINT handling
    workers._serve(connection, _double)


def _double(item: int) -> int:
    return item * 2


def test_a_ctrl_c_right_after_the_fork_does_not_kill_a_worker() -> None:
    """Ctrl-C reaches the whole process group, new workers included."""
    context = multiprocessing.get_context("fork")
    ours, theirs = context.Pipe()
    worker = context.Process(target=_late_serve, args=(theirs,), daemon=True)
    with workers._sigint_blocked():
        worker.start()
    theirs.close()
    try:
        assert worker.pid is not None
        time.sleep(0.1)
        os.kill(worker.pid, signal.SIGINT)  # before the worker ignores SIGINT
        ours.send((0, 21))
        assert ours.poll(30), f"the worker ended (exit code {worker.exitcode})"
        assert ours.recv() == (0, 42)
        ours.send(None)
        worker.join(10)
        assert worker.exitcode == 0
    finally:
        worker.kill()
        worker.join()
        ours.close()
