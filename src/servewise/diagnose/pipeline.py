"""Read a large log on two cores: the reading in one process, the diagnosis in the other.

A :class:`~servewise.diagnose.scan.LogScanner` does two kinds of work per chunk: reading
(the pre-filter, finding and parsing the lines worth parsing, assembling them into events)
and judging (the facts and phases of each parsed line, the rules on each event). Neither
needs the other's state, in one direction: which lines are parsed depends only on the
reading side (an open traceback keeps it parsing), and the judging side only consumes what
the reading side produces, in order. :func:`feed_log` therefore runs the reading in a forked
child process, which sends each chunk's parsed lines (their number, format and text) and
events, in log order, to the parent; the parent replays them into its own classifier exactly
as the one-process scanner would have, so the diagnosis is the same (the tests check it).

It is used only where it pays and is safe: a regular file of at least
:data:`PARALLEL_BYTES`, on Linux (``fork``), with a core to spare (on a busy machine two
processes share one core's time and lose by the hand-over). Memory stays bounded: the
pipe holds at most a few batches, each the product of one chunk.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import traceback
from collections.abc import Iterable
from multiprocessing.connection import Connection
from typing import Any

from servewise.diagnose.scan import LogScanner
from servewise.errors import ServewiseError
from servewise.formats.logevents import Event
from servewise.formats.logline import LogLine

__all__ = ["PARALLEL_BYTES", "feed_log", "parallel_possible"]

PARALLEL_BYTES = 32 * 2**20
"""A log at least this large is read in a second process (below it, starting one costs more
than it saves)."""


def parallel_possible(size: int | None) -> bool:
    """Whether a log of ``size`` bytes (None: unknown, as a pipe's) is read on two cores: a
    large regular file, on Linux, with a core to spare (the CPUs this process may run on, less
    the other processes running now). On a machine already busy, two processes would only share one
    core's time and pay for the hand-over."""
    if size is None or size < PARALLEL_BYTES or sys.platform != "linux":
        return False
    return _spare_cores() >= 1.0


def _spare_cores() -> float:
    """CPUs this process may use, less the processes running now besides this one (0 on one
    CPU). The count is the kernel's of runnable tasks (``/proc/loadavg``), an instant's view:
    a one-minute average would count this command's own previous run."""
    try:
        cpus = len(os.sched_getaffinity(0))
        with open("/proc/loadavg", encoding="ascii") as handle:
            running = int(handle.read().split()[3].split("/")[0])
    except (AttributeError, OSError, ValueError, IndexError):
        return 0.0
    return 0.0 if cpus < 2 else float(cpus - max(running - 1, 0))


def feed_log(scanner: LogScanner, chunks: Iterable[bytes], size: int | None = None) -> None:
    """Feed every chunk to ``scanner``, reading in a second process when
    :func:`parallel_possible` says so for ``size``; the caller then calls
    :meth:`~servewise.diagnose.scan.LogScanner.finish` as usual."""
    if not parallel_possible(size):
        for chunk in chunks:
            scanner.feed(chunk)
        return
    feed_in_parallel(scanner, chunks)


def feed_in_parallel(scanner: LogScanner, chunks: Iterable[bytes]) -> None:
    """Feed ``chunks`` to ``scanner`` with the reading done by a forked child (any size;
    Linux). ``scanner`` must not have been fed yet."""
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=_read, args=(scanner, chunks, sender), daemon=True)
    child.start()
    sender.close()
    done = False
    try:
        while not done:
            done = _replay(scanner, receiver.recv())
    except EOFError as exc:
        raise RuntimeError("the log-reading process ended without a result") from exc
    finally:
        receiver.close()
        if not done:
            child.terminate()
        child.join()


def _replay(scanner: LogScanner, message: tuple[Any, ...]) -> bool:
    """Apply one message of the reading process; True when it was the last."""
    kind = message[0]
    if kind == "error":
        _, error_type, text, hint, fields = message
        error = error_type.__new__(error_type)
        ServewiseError.__init__(error, text, hint=hint, **fields)
        raise error
    if kind == "crash":
        raise RuntimeError(f"the log-reading process failed:\n{message[1]}")
    _, items, lines, parsed, size, head = message
    take_line, take_event = scanner._take_line, scanner._take_event
    for item in items:
        if type(item) is tuple:
            number, source, text = item
            take_line(LogLine(number, text, source=source))
        else:
            take_event(item)
    scanner._adopt(lines=lines, parsed=parsed, size=size, head=head)
    return bool(kind == "end")


def _read(scanner: LogScanner, chunks: Iterable[bytes], sender: Connection) -> None:
    """The child: read and assemble, sending each chunk's lines and events in log order."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides what an interrupt does
    batch: list[tuple[int, str | None, str] | Event] = []

    def line(logline: LogLine) -> None:
        batch.append((logline.number, logline.source, logline.text))

    scanner._take_line = line
    scanner._take_event = batch.append
    try:
        for chunk in chunks:
            scanner.feed(chunk)
            sender.send(("batch", batch, scanner.lines, scanner.parsed_lines, scanner.size,
                         []))
            batch.clear()
        scanner._drain()
        # A small log's bytes go back too: finish() may read it again (newest first, wrapped).
        sender.send(("end", batch, scanner.lines, scanner.parsed_lines, scanner.size,
                     scanner._head))
    except ServewiseError as exc:  # the log refused (binary, unreadable): the parent says so
        sender.send(("error", type(exc), exc.message, exc.hint, exc.fields))
    except BaseException:  # a bug: say what it was rather than end silently
        sender.send(("crash", traceback.format_exc()))
    finally:
        sender.close()
