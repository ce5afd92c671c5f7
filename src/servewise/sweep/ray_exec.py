"""A sweep on a Ray cluster: each configuration a Ray task that reserves its GPUs on one node.

``servewise sweep PLAN --ray ADDRESS`` connects to the cluster and submits one task per
configuration with cells left, each reserving the configuration's GPUs (TP x PP x DP, or its
``gpus``) as ``num_gpus`` -- or, with ``--ray-resource CPU``, as CPUs (a CPU cluster standing
in, as the tests do), or any custom resource. Ray places a task on one node that has them all
and runs several at once when the cluster has room. The task runs
:func:`~servewise.sweep.runner.run_configuration` on that node: the engine is launched there,
and the benchmark runs from the same node against 127.0.0.1.

Everything the task reports -- the configuration's and cells' records, the launch
documents, every bench run with its raw records, the engine's log lines -- goes through a
small mailbox actor back to the driver, which writes the state file and the local store
and appends the log lines to ``<store>/launches/<sweep id>-<configuration>.log``.

Ctrl-C cancels the tasks with ``force=True``: the worker process dies, and with it the
engine's process group (the launch's parent-death signal and watchdog). A task that fails
(its node died) is recorded as that configuration's failure; the others go on. Ray is an
optional dependency (``pip install 'servewise[ray]'``); nothing else imports it.
"""

from __future__ import annotations

import contextlib
import signal
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from servewise.bench.load import LevelProgress
from servewise.bench.run import BenchResult
from servewise.errors import ServewiseError, UsageError
from servewise.launch.command import engine_args, engine_of
from servewise.sweep.plan import Configuration, SweepPlan, Workload, gpus_of
from servewise.sweep.runner import (
    Sink,
    SweepEvent,
    SweepOptions,
    pending,
    resolve_command,
    run_configuration,
)
from servewise.sweep.state import SweepState

__all__ = ["MailboxSink", "resources_for", "run_sweep_on_ray"]

POLL_SECONDS = 0.2


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise UsageError("--ray needs Ray, which is not installed",
                         hint="pip install 'servewise[ray]'") from None
    return ray


class Mailbox:
    """A Ray actor holding what tasks report until the driver takes it."""

    def __init__(self) -> None:
        self.items: list[tuple[Any, ...]] = []

    def put(self, item: tuple[Any, ...]) -> None:
        """Keep one report."""
        self.items.append(item)

    def take(self) -> list[tuple[Any, ...]]:
        """Everything kept so far, oldest first."""
        items, self.items = self.items, []
        return items


class MailboxSink:
    """The task's sink: each report becomes a message to the mailbox (in order)."""

    def __init__(self, mailbox: Any, key: str) -> None:
        self.mailbox = mailbox
        self.key = key

    def _send(self, *item: Any) -> None:
        self.mailbox.put.remote(item)

    def configuration(self, key: str, record: dict[str, Any]) -> None:
        """See :class:`~servewise.sweep.runner.Sink`."""
        self._send("configuration", key, record)

    def cell(self, key: str, record: dict[str, Any]) -> None:
        """See :class:`~servewise.sweep.runner.Sink`."""
        self._send("cell", key, record)

    def bench_run(self, result: BenchResult) -> None:
        """See :class:`~servewise.sweep.runner.Sink`."""
        self._send("bench_run", result)

    def launch(self, document: dict[str, Any]) -> None:
        """See :class:`~servewise.sweep.runner.Sink`."""
        self._send("launch", document)

    def event(self, event: SweepEvent) -> None:
        """See :class:`~servewise.sweep.runner.Sink`."""
        self._send("event", event)

    def line(self, configuration: str, line: str) -> None:
        """See :class:`~servewise.sweep.runner.Sink`."""
        self._send("line", self.key, configuration, line)

    def progress(self, step: LevelProgress) -> None:
        """Only finished phases travel (a live bar per remote level would flood the actor)."""
        if step.total is not None and step.done >= step.total > 0:
            self._send("progress", step)


def _task(plan: SweepPlan, config: Configuration, workloads: list[Workload],
          options: SweepOptions, mailbox: Any) -> str:
    """What runs on the node (a Ray task)."""
    import os
    import socket

    sink = MailboxSink(mailbox, config.key)
    sink.configuration(config.key, {"node": socket.gethostname(), "worker_pid": os.getpid()})
    run_configuration(plan, config, workloads, options, sink)
    return config.key


def resources_for(resource: str, gpus: int) -> dict[str, Any]:
    """The task options that reserve ``gpus`` of ``resource`` (``GPU``, ``CPU``, custom)."""
    if resource == "GPU":
        return {"num_gpus": gpus}
    if resource == "CPU":
        return {"num_cpus": gpus}
    return {"resources": {resource: gpus}, "num_cpus": 0}


def _largest_node(ray: Any, resource: str) -> float:
    return max((float(node.get("Resources", {}).get(resource, 0.0))
                for node in ray.nodes() if node.get("Alive")), default=0.0)


def _apply(item: tuple[Any, ...], sink: Sink, logs: dict[str, Path]) -> None:
    kind = item[0]
    if kind == "configuration":
        sink.configuration(item[1], item[2])
    elif kind == "cell":
        sink.cell(item[1], item[2])
    elif kind == "bench_run":
        sink.bench_run(item[1])
    elif kind == "launch":
        sink.launch(item[1])
    elif kind == "event":
        sink.event(item[1])
    elif kind == "progress":
        sink.progress(item[1])
    elif kind == "line":
        _, key, name, line = item
        path = logs.get(key)
        if path is not None:
            with contextlib.suppress(OSError), path.open("a", encoding="utf-8") as handle:
                handle.write(line + "\n")
        sink.line(name, line)


def run_sweep_on_ray(address: str, plan: SweepPlan, state: SweepState, options: SweepOptions,
                     sink: Sink, *, resource: str = "GPU",
                     init: Callable[..., Any] | None = None) -> None:
    """Run the configurations with cells left as Ray tasks (see the module's docstring)."""
    ray = _ray()
    try:
        (init or ray.init)(address=address, ignore_reinit_error=True, log_to_driver=False,
                           logging_level="WARNING")
    except Exception as error:  # Ray raises ConnectionError, RuntimeError, ValueError...
        raise UsageError(f"cannot connect to the Ray cluster at {address!r}: {error}",
                         hint="give the head's address (ray start --head prints it), or "
                         "'auto' on a node of the cluster", found=address) from None
    previous = _sigterm_as_interrupt()  # ray.init put its own handler, which just exits
    try:
        _run(ray, plan, state, options, sink, resource)
    finally:
        if previous is not None:
            with contextlib.suppress(ValueError):
                signal.signal(signal.SIGTERM, previous)
        ray.shutdown()


def _sigterm_as_interrupt() -> Any:
    """SIGTERM raises KeyboardInterrupt (the tasks are then cancelled and recorded); the
    handler it replaces, or None off the main thread."""
    def handler(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    try:
        return signal.signal(signal.SIGTERM, handler)
    except ValueError:
        return None


def _run(ray: Any, plan: SweepPlan, state: SweepState, options: SweepOptions, sink: Sink,
         resource: str) -> None:
    mailbox = ray.remote(num_cpus=0)(Mailbox).remote()
    task = ray.remote(max_retries=0)(_task)
    largest = _largest_node(ray, resource)
    logs: dict[str, Path] = {}
    running: dict[Any, Configuration] = {}
    for config, workloads in pending(plan, state, options.retry_failed):
        try:
            argv, _ = resolve_command(config)
        except ServewiseError as error:
            sink.configuration(config.key, {"name": config.name, "status": "start_error",
                                            "message": error.message})
            sink.event(SweepEvent("failed", config.name, error.message))
            continue
        gpus = config.gpus or gpus_of(engine_args(argv, engine_of(argv)))
        if gpus > largest:
            message = (f"no node of the cluster has {gpus} {resource} (the largest has "
                       f"{largest:g})")
            sink.configuration(config.key, {"name": config.name, "status": "start_error",
                                            "message": message, "gpus": gpus})
            sink.event(SweepEvent("failed", config.name, message))
            continue
        logs[config.key] = options.log_dir / f"{state.sweep_id}-{config.key}.log"
        logs[config.key].parent.mkdir(parents=True, exist_ok=True)
        sink.configuration(config.key, {"name": config.name, "status": "queued",
                                        "gpus": gpus, "ray": {"resource": resource,
                                                              "local_log": str(logs[config.key])}})
        sink.event(SweepEvent("launch", config.name, f"Ray task reserving {gpus} {resource}"))
        ref = task.options(**resources_for(resource, gpus)).remote(
            plan, replace(config, gpus=gpus), workloads, options, mailbox)
        running[ref] = config
    try:
        while running:
            done, _ = ray.wait(list(running), num_returns=1, timeout=POLL_SECONDS)
            for item in ray.get(mailbox.take.remote()):
                _apply(item, sink, logs)
            for ref in done:
                config = running.pop(ref)
                try:
                    ray.get(ref)
                except Exception as error:  # the task's own failure, or its node's
                    message = f"the Ray task failed: {type(error).__name__}: {error}"
                    for item in ray.get(mailbox.take.remote()):
                        _apply(item, sink, logs)
                    sink.configuration(config.key, {"status": "failed", "message":
                                                    message[:2000], "ended_at": time.time()})
                    sink.event(SweepEvent("failed", config.name, message[:300]))
        for item in ray.get(mailbox.take.remote()):
            _apply(item, sink, logs)
    except KeyboardInterrupt:
        for ref, config in running.items():
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=True)
            sink.configuration(config.key, {"status": "interrupted", "ended_at": time.time()})
        raise
