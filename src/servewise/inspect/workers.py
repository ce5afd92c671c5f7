"""Worker processes for scans that stop cleanly: on Ctrl-C, on an error, or when one dies.

:func:`run_in_workers` forks a fixed set of workers, each with its own pipe. The parent
hands the next item to whichever worker answered, so the largest items, given first,
spread over the cores. There is no shared queue and no lock a killed worker could leave
held, and nothing re-spawns a worker behind the parent's back, so when the consumer stops
early — a member error, ``KeyboardInterrupt``, a closed generator — every worker is
killed and reaped before the call returns. Workers ignore SIGINT (Ctrl-C reaches the
whole process group; the parent decides) and, on Linux, are killed by the kernel if the
parent dies first.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import signal
import sys
from collections.abc import Callable, Generator, Iterator, Sequence
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import Any, TypeVar

from servewise.errors import SourceError

Item = TypeVar("Item")

_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """Ask Linux to SIGKILL this process when its parent ends (no orphan scans)."""
    if sys.platform != "linux":
        return
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        return


def _serve(connection: Connection, function: Callable[[Any], Any]) -> None:
    """A worker's loop: receive ``(number, item)``, send ``(number, result)``; ``None`` ends it."""
    # The worker was forked with SIGINT blocked (see _sigint_blocked): a Ctrl-C in the moment
    # between the fork and this line waits, and is dropped once SIGINT is ignored.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    _die_with_parent()
    while True:
        try:
            task = connection.recv()
        except EOFError:
            return
        if task is None:
            return
        number, item = task
        connection.send((number, function(item)))


@contextlib.contextmanager
def _sigint_blocked() -> Iterator[None]:
    """Hold SIGINT back while workers are forked, so none starts able to die of a Ctrl-C.

    A forked child keeps the parent's blocked signals; the parent's own Ctrl-C is delivered
    when the block ends, so it still stops the scan.
    """
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _died(worker: BaseProcess, reading: str) -> SourceError:
    """The error for a worker that ended while it had an item."""
    worker.join(timeout=5)
    return SourceError(
        f"a scan worker died (exit code {worker.exitcode}) while reading {reading}",
        hint="the machine may be short of memory; run again, or scan fewer files at once",
        found=reading,
    )


def _hand(
    connection: Connection, task: tuple[int, Any], worker: BaseProcess,
    what: Callable[[int], str],
) -> None:
    """Send a worker its next item; a worker already gone is an error, not a broken pipe."""
    try:
        connection.send(task)
    except OSError:
        raise _died(worker, what(task[0])) from None


def run_in_workers(
    function: Callable[[Item], Any],
    items: Sequence[Item],
    workers: int,
    *,
    what: Callable[[int], str] = str,
) -> Generator[tuple[int, Any]]:
    """``(index, function(item))`` for every item, in the order they finish.

    ``function`` must return picklable data and must not raise (return errors as data).
    ``what`` names an item for the error raised when a worker dies while on it.
    """
    context = multiprocessing.get_context("fork")
    workers_of: dict[Connection, BaseProcess] = {}
    finished = False
    try:
        for _ in range(min(workers, len(items))):
            ours, theirs = context.Pipe()
            started: BaseProcess = context.Process(target=_serve, args=(theirs, function),
                                                   daemon=True)
            with _sigint_blocked():
                started.start()
            theirs.close()
            workers_of[ours] = started
        pending = iter(enumerate(items))
        busy: dict[Connection, int] = {}
        for connection in workers_of:
            task = next(pending, None)
            if task is None:
                break
            _hand(connection, task, workers_of[connection], what)
            busy[connection] = task[0]
        while busy:
            # A worker that dies makes its pipe readable (end of file) and its sentinel ready.
            sentinels = {workers_of[c].sentinel: c for c in busy}
            for handle in wait([*busy, *sentinels]):
                found = sentinels.get(handle) if isinstance(handle, int) else handle
                if not isinstance(found, Connection) or found not in busy or not found.poll():
                    continue
                connection = found
                try:
                    number, result = connection.recv()
                except (EOFError, OSError):  # end of file, or a reset pipe
                    raise _died(workers_of[connection], what(busy[connection])) from None
                del busy[connection]
                task = next(pending, None)
                if task is not None:
                    _hand(connection, task, workers_of[connection], what)
                    busy[connection] = task[0]
                yield number, result
        for connection in workers_of:
            connection.send(None)
        finished = True
    finally:
        for connection, worker in workers_of.items():
            if not finished:
                worker.kill()
            worker.join()
            connection.close()


__all__ = ["run_in_workers"]
