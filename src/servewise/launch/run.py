"""One launch: start the engine, stream its log, wait for readiness under one deadline, stop.

:class:`EngineRun` is used as a context manager; whatever happens inside (the engine fails,
the deadline passes, Ctrl-C, SIGTERM to servewise, an exception), leaving it stops the
engine's whole process group unless the run was detached and became ready::

    spec = LaunchSpec(argv=[...], engine="vllm", port=8000, log_path=path)
    with EngineRun(spec, on_line=print) as run:
        result = run.wait_ready()      # a LaunchResult: outcome, diagnosis, numbers, timings
        if result.ready:
            run.serve()                # until the engine exits or the user stops it

The log is read as it is written: each line goes to the diagnose scanner (a line the rules
call a cause ends the wait at once, even while the engine keeps running), to
:class:`~servewise.launch.hints.EngineNumbers`, and to ``on_line`` (the terminal).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

from servewise.diagnose import Diagnosis, new_scanner
from servewise.errors import LogInputError, ServewiseError
from servewise.formats.redact import redact_argv, redact_text, terminal_safe
from servewise.launch.cause import RootCause
from servewise.launch.hints import EngineNumbers
from servewise.launch.process import (
    GRACE_SECONDS,
    Terminated,
    become_subreaper,
    check_stop,
    children,
    process_start_time,
    spawn,
    start_watchdog,
    stop_adopted,
    stop_group,
    watch_group,
)
from servewise.launch.readiness import ReadinessProbe, port_free

__all__ = ["EngineRun", "LaunchResult", "LaunchSpec", "new_run_id"]

#: Seconds of quiet after a fatal line before the diagnosis is taken (the traceback ends).
SETTLE_SECONDS = 1.0
SETTLE_MAX_SECONDS = 5.0
POLL_SECONDS = 0.25
_READ_SIZE = 65536
#: The longest line the log pump holds: a longer one is taken in pieces of this size, so a
#: 100 MB line costs linear time and bounded memory (and never blocks the engine's writes).
MAX_LINE_BYTES = 2**20
#: The most of one line echoed to the terminal and read for numbers (the log keeps it whole).
MAX_SHOWN_BYTES = 16 * 2**10

LineCallback = Callable[[str], None]


def new_run_id(kind: str = "launch") -> str:
    """A new run id: ``launch-20261204-073012-a1b2c3``."""
    return time.strftime(f"{kind}-%Y%m%d-%H%M%S-") + secrets.token_hex(3)


@dataclass(frozen=True)
class LaunchSpec:
    """What to run and how to judge it."""

    argv: tuple[str, ...]
    engine: str | None
    port: int
    log_path: Path
    host: str = "127.0.0.1"
    env: Mapping[str, str] = field(default_factory=dict)
    """Variables set on top of this process's environment."""
    timeout_s: float = 900.0
    """One deadline for the whole start-up."""
    detach: bool = False
    grace_s: float = GRACE_SECONDS
    run_id: str = field(default_factory=new_run_id)
    settings: Mapping[str, Any] = field(default_factory=dict)
    """The engine settings read from the command (recorded with the run)."""


@dataclass(frozen=True)
class LaunchResult:
    """How a launch ended, and the evidence."""

    run_id: str
    outcome: str
    """``ready``, ``failed`` (exited or a fatal log line), ``timeout``, ``interrupted``,
    ``port_in_use``, ``start_error`` (the program could not start), ``log_error`` (the
    log could not be written: a full disk)."""
    message: str
    stage: str
    """The readiness stage reached (:data:`~servewise.launch.readiness.STAGES`)."""
    log_path: str
    pid: int | None = None
    exit_code: int | None = None
    time_to_ready_s: float | None = None
    elapsed_s: float = 0.0
    diagnosis: dict[str, Any] | None = None
    numbers: dict[str, Any] = field(default_factory=dict)
    models: tuple[str, ...] = ()
    stopped: str | None = None
    """How the engine was stopped: ``terminated``, ``killed``, ``gone`` (had exited), or
    None (still running: a detached launch)."""
    hint: str | None = None

    @property
    def ready(self) -> bool:
        """Whether the engine answered every readiness check."""
        return self.outcome == "ready"

    @property
    def exit_status(self) -> int:
        """0 ready, 1 failed or not ready, 130 interrupted before it was ready."""
        if self.ready:
            return 0
        return 130 if self.outcome == "interrupted" else 1

    def root_cause(self) -> RootCause | None:
        """The diagnosis's root cause, when there is one."""
        finding = (self.diagnosis or {}).get("root_cause")
        return RootCause.from_finding(finding) if isinstance(finding, dict) else None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data (the ``launch --json`` document)."""
        return {
            "run_id": self.run_id, "outcome": self.outcome, "ready": self.ready,
            "message": self.message, "stage": self.stage, "log_path": self.log_path,
            "pid": self.pid, "exit_code": self.exit_code,
            "time_to_ready_s": self.time_to_ready_s, "elapsed_s": round(self.elapsed_s, 3),
            "root_cause": (self.diagnosis or {}).get("root_cause"),
            "diagnosis": self.diagnosis,
            "kv_numbers": self.numbers, "models": list(self.models), "stopped": self.stopped,
            "hint": self.hint,
        }


def _exit_text(code: int) -> str:
    if code < 0:
        name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else str(
            -code)
        text = f"the engine was killed by {name}"
        if code == -signal.SIGKILL:
            text += (" (the kernel's OOM killer sends it when memory runs out: see `dmesg`, "
                     "or something else killed it)")
        return text
    return f"the engine exited with code {code}"


class _LogPump:
    """Reads the engine's output (a pipe, or the log file it writes) on a thread."""

    def __init__(self, source: IO[bytes] | None, log_path: Path, sink: IO[bytes] | None,
                 on_line: LineCallback | None) -> None:
        self.source, self.log_path, self.sink, self.on_line = source, log_path, sink, on_line
        self.scanner = new_scanner()
        self.numbers = EngineNumbers()
        self.lock = threading.Lock()
        self.last_data = time.monotonic()
        self.bytes = 0
        self.write_error: OSError | None = None
        self.scan_error: ServewiseError | None = None
        self._stop = threading.Event()
        self._pending: list[bytes] = []
        self._pending_size = 0
        self._thread = threading.Thread(target=self._run, name="servewise-log", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop following (a file) or wait for the pipe's end; then flush the last line."""
        self._stop.set()
        if self._thread.ident is not None:  # interrupted before it started: nothing to join
            self._thread.join(timeout)

    def _run(self) -> None:
        if self.source is not None:
            fd = self.source.fileno()
            while True:
                try:
                    chunk = os.read(fd, _READ_SIZE)
                except OSError:
                    chunk = b""
                if not chunk:
                    break
                self._take(chunk)
        else:
            self._follow()
        if self._pending:
            self._lines(b"".join(self._pending) + b"\n")
            self._pending, self._pending_size = [], 0
        for handle in (self.sink, self.source):
            if handle is not None:
                with contextlib.suppress(OSError):
                    handle.close()

    def _follow(self) -> None:
        handle = None
        while handle is None and not self._stop.is_set():
            try:
                handle = self.log_path.open("rb")
            except FileNotFoundError:
                time.sleep(POLL_SECONDS)
        if handle is None:
            return
        with handle:
            while True:
                chunk = handle.read(_READ_SIZE)
                if chunk:
                    self._take(chunk)
                    continue
                if self._stop.is_set():
                    return
                time.sleep(0.1)

    def _take(self, chunk: bytes) -> None:
        """Whole lines go on at once; the rest waits in pieces, joined once its line ends
        (or once it reaches :data:`MAX_LINE_BYTES`): linear in the bytes, however cut."""
        self.last_data = time.monotonic()
        self.bytes += len(chunk)
        cut = chunk.rfind(b"\n") + 1
        if not cut:
            self._pending.append(chunk)
            self._pending_size += len(chunk)
            if self._pending_size >= MAX_LINE_BYTES:
                held = b"".join(self._pending)
                self._pending, self._pending_size = [], 0
                self._lines(held + b"\n")
            return
        data = b"".join((*self._pending, chunk[:cut])) if self._pending else chunk[:cut]
        self._pending = [chunk[cut:]] if cut < len(chunk) else []
        self._pending_size = len(chunk) - cut
        self._lines(data)

    def _write(self, data: bytes) -> None:
        if self.sink is not None and self.write_error is None:
            try:
                self.sink.write(data)
                self.sink.flush()
            except OSError as error:
                self.write_error = error

    def _lines(self, data: bytes) -> None:
        # Secrets the engine prints (its own argv, an API key) go no further: not to the
        # log, the scanner (whose findings are stored) nor the terminal.
        data = redact_text(data.decode("utf-8", "surrogateescape")).encode(
            "utf-8", "surrogateescape")
        self._write(data)
        with self.lock:
            if self.scan_error is None:
                try:
                    self.scanner.feed(data)
                except ServewiseError as error:  # binary output: nothing to diagnose
                    self.scan_error = error
        for raw in data.splitlines():
            if len(raw) > MAX_SHOWN_BYTES:  # the terminal and the number readers get its start
                raw = raw[:MAX_SHOWN_BYTES] + b" ... (%d bytes)" % len(raw)
            line = raw.decode("utf-8", "replace")
            self.numbers.feed(line)
            if self.on_line is not None:
                self.on_line(terminal_safe(line))

    def close_quiet_event(self) -> None:
        """After :data:`SETTLE_SECONDS` of quiet, judge an error message left open.

        The scanner keeps an exception open while more of it may follow; an engine whose
        worker died may print nothing more, so the open event is closed and classified.
        """
        if time.monotonic() - self.last_data < SETTLE_SECONDS:
            return
        with self.lock:
            if self.scan_error is None:
                self.scanner.close_open_event()

    def fatal(self) -> bool:
        """Whether the rules have seen a cause (not just an unclassified error)."""
        self.close_quiet_event()
        if not self.scanner.failure_seen:
            return False
        with self.lock:
            cause = self.scanner.snapshot().root_cause
        return cause is not None and cause.kind == "cause"

    def diagnosis(self) -> Diagnosis | None:
        """The diagnosis of the log so far; None for an empty or binary log."""
        with self.lock:
            if self.scan_error is not None:
                return None
            try:
                return self.scanner.snapshot() if self._thread.is_alive() else (
                    self.scanner.finish())
            except LogInputError:
                return None


class EngineRun:
    """One engine process from start to stop; see the module's docstring."""

    def __init__(self, spec: LaunchSpec, *, on_line: LineCallback | None = None,
                 on_stage: Callable[[str], None] | None = None,
                 on_started: Callable[[int, int | None], None] | None = None) -> None:
        self.spec = spec
        self.on_line = on_line
        self.on_stage = on_stage
        self.on_started = on_started
        self._before: set[int] = set()
        """This process's children before the engine started (not stopped with it)."""
        """Called with the engine's pid and start time the moment it exists (to record
        them before anything else can fail)."""
        self.process: subprocess.Popen[bytes] | None = None
        self.watchdog: subprocess.Popen[bytes] | None = None
        self.pump: _LogPump | None = None
        self.result: LaunchResult | None = None
        self.started = time.monotonic()
        self.start_time: int | None = None

    # -- context manager ---------------------------------------------------------------

    def __enter__(self) -> EngineRun:
        return self

    def __exit__(self, *exc: object) -> None:
        keep = self.spec.detach and self.result is not None and self.result.ready
        if not keep:
            stopped = self.stop()
            if self.result is not None and self.result.stopped is None:
                self.result = replace(self.result, stopped=stopped)
        else:
            if self.pump is not None:
                self.pump.stop(timeout=1.0)
            if self.process is not None:
                # Detached on purpose: the engine outlives this object (and servewise).
                # Popen would warn that it is "still running" when collected.
                self.process.returncode = 0

    # -- start and wait ---------------------------------------------------------------

    def _end(self, outcome: str, message: str, stage: str, *, hint: str | None = None,
             exit_code: int | None = None, ready_s: float | None = None,
             models: tuple[str, ...] = ()) -> LaunchResult:
        pump = self.pump
        diagnosis = pump.diagnosis() if pump is not None else None
        self.result = LaunchResult(
            run_id=self.spec.run_id, outcome=outcome, message=message, stage=stage,
            log_path=str(self.spec.log_path), pid=self.process.pid if self.process else None,
            exit_code=exit_code, time_to_ready_s=ready_s,
            elapsed_s=time.monotonic() - self.started,
            diagnosis=diagnosis.to_dict() if diagnosis is not None and diagnosis.failed else None,
            numbers=pump.numbers.to_dict() if pump is not None else {}, models=models,
            hint=hint)
        return self.result

    def start(self) -> LaunchResult | None:
        """Start the engine; a result when it could not start (port taken, no program)."""
        spec = self.spec
        if not port_free(spec.host, spec.port):
            return self._end("port_in_use", f"port {spec.port} on {spec.host} is already in use",
                             "process", hint="stop what listens there (`ss -ltnp | grep "
                             f":{spec.port}`), or pass another --port")
        log = None
        try:
            spec.log_path.parent.mkdir(parents=True, exist_ok=True)
            log = spec.log_path.open("ab", buffering=0)
            log.write(("$ " + " ".join(redact_argv(spec.argv)) + "\n").encode())
        except OSError as error:
            if log is not None:
                log.close()
            return self._end("log_error", f"cannot write the log {spec.log_path}: "
                             f"{error.strerror or error}", "process",
                             hint="free disk space, or set SERVEWISE_CACHE_DIR elsewhere")
        env = {**os.environ, "PYTHONUNBUFFERED": "1", **spec.env}
        # The scanner loads the diagnose rules (slow): before the engine starts, so that the
        # watchdog learns the engine's group the moment it exists.
        pump = _LogPump(None, spec.log_path, None if spec.detach else log, self.on_line)
        if not spec.detach:
            self.watchdog = start_watchdog(spec.grace_s)
            become_subreaper()
        self._before = children()
        try:
            self.process = spawn(spec.argv, env=env, cwd=None,
                                 stdout=log if spec.detach else subprocess.PIPE,
                                 tie_to_parent=not spec.detach)
        except ServewiseError as error:
            log.close()
            self._release_watchdog()
            return self._end("start_error", error.message, "process", hint=error.hint)
        finally:
            if self.watchdog is not None:
                watch_group(self.watchdog, self.process.pid if self.process else None)
        self.start_time = process_start_time(self.process.pid)
        if self.on_started is not None:
            self.on_started(self.process.pid, self.start_time)
        if spec.detach:
            log.close()
        else:
            pump.source = self.process.stdout
        self.pump = pump
        self.pump.start()
        return None

    def wait_ready(self) -> LaunchResult:
        """Start (if not yet) and wait: ready, failed, timed out or interrupted."""
        stage = "process"
        probe: ReadinessProbe | None = None
        try:
            if self.process is None and self.result is None:
                early = self.start()
                if early is not None:
                    return early
            if self.result is not None and self.process is None:
                return self.result
            assert self.process is not None and self.pump is not None
            spec, process, pump = self.spec, self.process, self.pump
            probe = ReadinessProbe(spec.host, spec.port, spec.engine)
            deadline = self.started + spec.timeout_s
            while True:
                check_stop()
                code = process.poll()
                if code is not None:
                    pump.stop()
                    return self._end("failed", _exit_text(code) + " before it was ready",
                                     stage, exit_code=code)
                if pump.write_error is not None:
                    return self._end("log_error", "cannot write the engine's log "
                                     f"{spec.log_path}: {pump.write_error.strerror}", stage,
                                     hint="free disk space (or set SERVEWISE_CACHE_DIR to a "
                                     "folder on another disk) and launch again")
                if pump.fatal():
                    self._settle()
                    return self._end("failed", "the log shows a fatal error (the engine was "
                                     "still running)", stage,
                                     exit_code=process.poll())
                if time.monotonic() >= deadline:
                    where = probe.last_status or "nothing answered"
                    return self._end("timeout", f"not ready after {spec.timeout_s:g} s: stuck "
                                     f"at the {probe.stage} check ({where})", probe.stage,
                                     hint=probe.timeout_hint(spec.log_path))
                if probe.step():
                    ready_s = round(time.monotonic() - self.started, 3)
                    self._stage("ready")
                    return self._end("ready", f"ready on port {spec.port} after {ready_s:.1f} s",
                                     "ready", ready_s=ready_s, models=tuple(probe.models))
                if probe.stage != stage:
                    stage = probe.stage
                    self._stage(stage)
                time.sleep(POLL_SECONDS)
        except (KeyboardInterrupt, Terminated) as interrupt:
            what = "Ctrl-C" if isinstance(interrupt, KeyboardInterrupt) else (
                str(interrupt) or "SIGTERM")
            return self._end("interrupted", f"interrupted by {what} before the engine was ready",
                             stage)
        finally:
            if probe is not None:
                probe.close()

    def _stage(self, stage: str) -> None:
        if self.on_stage is not None:
            self.on_stage(stage)

    def _settle(self) -> None:
        """Let the failing engine finish its traceback (quiet, or exit, or a few seconds)."""
        assert self.pump is not None and self.process is not None
        limit = time.monotonic() + SETTLE_MAX_SECONDS
        while time.monotonic() < limit and self.process.poll() is None:
            if time.monotonic() - self.pump.last_data >= SETTLE_SECONDS:
                break
            time.sleep(0.1)

    def serve(self) -> str:
        """After readiness: wait until the engine exits (its message) or the user stops it."""
        assert self.process is not None
        try:
            while True:
                check_stop()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    code = self.process.wait(timeout=POLL_SECONDS)
                    break
        except (KeyboardInterrupt, Terminated):
            return "stopped by the user"
        return _exit_text(code)

    # -- stop ---------------------------------------------------------------------------

    def stop(self) -> str | None:
        """Stop the engine's whole group; how it ended (None when nothing was started)."""
        if self.process is None:
            self._release_watchdog()
            return None
        how = stop_group(self.process.pid, self.process, grace=self.spec.grace_s)
        stop_adopted(self._before | ({self.watchdog.pid} if self.watchdog else set()),
                     grace=self.spec.grace_s)
        if self.pump is not None:
            self.pump.stop()
        self._release_watchdog()
        return how

    def _release_watchdog(self) -> None:
        if self.watchdog is not None:
            with contextlib.suppress(ProcessLookupError):
                self.watchdog.kill()
            self.watchdog.wait()
            if self.watchdog.stdin is not None:
                with contextlib.suppress(OSError):
                    self.watchdog.stdin.close()
            self.watchdog = None
