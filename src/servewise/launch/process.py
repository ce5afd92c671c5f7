"""Engine processes: started in their own session, stopped as a whole group, never orphaned.

:func:`spawn` starts a command as the leader of a new session (so its process group holds
every worker it forks) with ``PR_SET_PDEATHSIG`` set in the child (Linux: the engine gets
SIGTERM when servewise dies), and, unless detached, a watchdog process that stops the group
when servewise is gone for any reason (SIGKILL, a crash in C code), which the death signal
alone cannot do for grandchildren. :func:`stop_group` sends SIGTERM to the group, waits,
then SIGKILL. :func:`group_members` lists what is left, from ``/proc``.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from servewise.errors import UsageError

__all__ = [
    "GRACE_SECONDS", "Terminated", "become_subreaper", "check_stop", "children",
    "group_alive", "group_members", "process_start_time", "spawn", "start_watchdog",
    "stop_adopted", "stop_group", "stop_requested", "terminate_as_interrupt", "watch_group",
]

GRACE_SECONDS = 15.0
"""Seconds between SIGTERM and SIGKILL when stopping an engine."""
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36


class Terminated(BaseException):
    """servewise was asked to stop (SIGTERM, or Ctrl-C under :func:`terminate_as_interrupt`)."""


_STOP_REQUESTED: list[str] = []


def stop_requested() -> str | None:
    """``SIGTERM`` or ``Ctrl-C`` once one arrived inside :func:`terminate_as_interrupt`."""
    return _STOP_REQUESTED[0] if _STOP_REQUESTED else None


def check_stop() -> None:
    """Raise :class:`Terminated` when a stop was requested (called by the wait loops)."""
    if _STOP_REQUESTED:
        raise Terminated(_STOP_REQUESTED[0])


@contextlib.contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM and SIGINT only *request* a stop (main thread only).

    The handlers record the signal; the wait loops call :func:`check_stop` between their
    steps. An exception raised straight from a handler can be lost (Python swallows one
    raised inside a callback such as an import lock's), and the engine would then never be
    stopped.
    """
    names = {signal.SIGTERM: "SIGTERM", signal.SIGINT: "Ctrl-C"}

    def handler(signum: int, frame: Any) -> None:
        if not _STOP_REQUESTED:
            _STOP_REQUESTED.append(names.get(signal.Signals(signum), str(signum)))

    previous: dict[signal.Signals, Any] = {}
    try:
        for signum in names:
            previous[signum] = signal.signal(signum, handler)
    except ValueError:  # not the main thread: leave signals alone
        for signum, old in previous.items():
            signal.signal(signum, old)
        yield
        return
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)
        _STOP_REQUESTED.clear()


def _death_signal() -> None:  # pragma: no cover - runs in the child between fork and exec
    """In the child: get SIGTERM when the parent dies (Linux ``prctl``)."""
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def spawn(argv: Sequence[str], *, env: Mapping[str, str], cwd: Path | None,
          stdout: int | IO[bytes], tie_to_parent: bool) -> subprocess.Popen[bytes]:
    """Start ``argv`` as a new session leader, output to ``stdout`` (stderr with it).

    ``tie_to_parent`` sets the death signal (not for ``--detach``, whose engine outlives
    servewise). A program that cannot be started is a :class:`UsageError`.
    """
    try:
        return subprocess.Popen(
            list(argv), stdin=subprocess.DEVNULL, stdout=stdout, stderr=subprocess.STDOUT,
            env=dict(env), cwd=cwd, start_new_session=True,
            preexec_fn=_death_signal if tie_to_parent else None,
        )
    except FileNotFoundError:
        raise UsageError(f"no such program: {argv[0]}",
                         hint="check the command after `--` (is the engine's environment "
                         "active? `which " + argv[0] + "`)", found=argv[0]) from None
    except PermissionError:
        raise UsageError(f"{argv[0]} cannot be run (permission denied)",
                         hint="check that it is an executable file", found=argv[0]) from None
    except OSError as error:
        raise UsageError(f"cannot start {argv[0]}: {error}", found=argv[0],
                         hint="check the command after `--`") from None


def start_watchdog(grace: float = GRACE_SECONDS) -> subprocess.Popen[bytes]:
    """A process that stops a group once this process is gone, or exits with the group.

    It runs :mod:`servewise.launch.watchdog` in a session of its own (so neither Ctrl-C nor
    the death of servewise reaches it) and is started *before* the engine: it reads the
    engine's group id from its standard input (:func:`watch_group`), so there is no moment
    at which an engine runs unwatched.
    """
    return subprocess.Popen(
        [sys.executable, "-m", "servewise.launch.watchdog", str(os.getpid()), str(grace)],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True, close_fds=True,
    )


def watch_group(watchdog: subprocess.Popen[bytes], pgid: int | None) -> None:
    """Tell ``watchdog`` the group to watch (None: nothing was started; it exits)."""
    assert watchdog.stdin is not None
    with contextlib.suppress(OSError):
        if pgid is not None:
            watchdog.stdin.write(f"{pgid}\n".encode())
        watchdog.stdin.close()


def group_members(pgid: int) -> list[int]:
    """The live (not zombie) processes in group ``pgid``, from ``/proc``."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) > 2 and fields[0] != "Z" and int(fields[2]) == pgid:
            members.append(int(entry.name))
    return sorted(members)


def become_subreaper() -> bool:
    """Make this process a child subreaper (Linux ``PR_SET_CHILD_SUBREAPER``): a process
    under it that daemonizes (forks, ``setsid``, lets its parent exit) is adopted by this
    process rather than by init, so :func:`stop_adopted` still finds and stops it. False
    where the kernel does not offer it."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return int(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _stat_fields(pid: int) -> list[str] | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rfind(")") + 2:].split()


def children(parent: int | None = None) -> set[int]:
    """The live (not zombie) children of ``parent`` (default: this process), from ``/proc``."""
    parent = os.getpid() if parent is None else parent
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = _stat_fields(int(entry.name))
            if fields and len(fields) > 1 and fields[0] != "Z" and int(fields[1]) == parent:
                found.add(int(entry.name))
    return found


def _reap(pids: set[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, os.WNOHANG)


def stop_adopted(keep: set[int], grace: float = GRACE_SECONDS, poll: float = 0.1) -> list[int]:
    """Stop this process's children other than ``keep``: the daemonized processes a
    subreaper adopted (each with its group), SIGTERM then SIGKILL after ``grace``; they are
    reaped. Returns the pids it signalled."""
    signalled: list[int] = []
    deadline = time.monotonic() + grace
    kill_by = deadline + 5.0
    while time.monotonic() < kill_by:
        left = children() - keep
        _reap(set(signalled) - left)
        if not left:
            break
        signum = signal.SIGTERM if time.monotonic() < deadline else signal.SIGKILL
        for pid in left:
            if pid not in signalled or signum == signal.SIGKILL:
                _signal_group(pid, signum)
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signum)
            if pid not in signalled:
                signalled.append(pid)
        time.sleep(poll)
    _reap(set(signalled))
    return signalled


def group_alive(pgid: int) -> bool:
    """Whether any live process is left in group ``pgid``."""
    return bool(group_members(pgid))


def process_start_time(pid: int) -> int | None:
    """The start time of ``pid`` in clock ticks since boot (to tell a reused pid), or None."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat[stat.rfind(")") + 2:].split()[19])


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


def stop_group(pgid: int, process: subprocess.Popen[bytes] | None = None,
               grace: float = GRACE_SECONDS, poll: float = 0.1) -> str:
    """Stop every process of group ``pgid``: SIGTERM, up to ``grace`` s, then SIGKILL.

    Returns how it ended: ``gone`` (nothing was running), ``terminated`` or ``killed``.
    ``process`` (the leader, when this process started it) is reaped.
    """
    if not group_alive(pgid):
        if process is not None:
            process.poll()
        return "gone"
    _signal_group(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    how = "terminated"
    while True:
        if process is not None:
            process.poll()
        if not group_alive(pgid):
            break
        if time.monotonic() >= deadline:
            how = "killed"
            _signal_group(pgid, signal.SIGKILL)
            kill_deadline = time.monotonic() + 5.0
            while group_alive(pgid) and time.monotonic() < kill_deadline:
                if process is not None:
                    process.poll()
                time.sleep(poll)
            break
        time.sleep(poll)
    if process is not None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=5.0)
    return how
