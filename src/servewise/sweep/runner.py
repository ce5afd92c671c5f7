"""Run a sweep: for each configuration check, launch, wait for ready, bench each workload, stop.

:func:`run_configuration` is one configuration from start to stop; it reports everything
through a :class:`Sink` (state, store, progress), so the same function runs here and inside
a Ray task on another node (:mod:`servewise.sweep.ray_exec`), whose sink sends the records
back. :func:`run_sweep` runs the configurations one after another.

A configuration that fails (check says no, the engine dies or hangs, a benchmark cannot
reach it) is recorded with its diagnosis and the sweep goes on. Ctrl-C stops the engine
(leaving :class:`~servewise.launch.run.EngineRun` stops its whole process group), keeps the
finished cells in the state file, and propagates as :class:`KeyboardInterrupt`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from servewise.bench.load import LevelProgress, LoadLevel
from servewise.bench.run import BenchConfig, BenchResult, run_bench
from servewise.bench.workload import WorkloadSpec
from servewise.errors import ServewiseError, UsageError
from servewise.launch.command import engine_args, engine_of, fill, with_port
from servewise.launch.process import GRACE_SECONDS, Terminated
from servewise.launch.readiness import free_port
from servewise.launch.run import EngineRun, LaunchResult, LaunchSpec, new_run_id
from servewise.sweep.plan import Configuration, SweepPlan, Workload, gpus_of
from servewise.sweep.state import SweepState

__all__ = [
    "ENTRY_KEYS", "LocalSink", "Sink", "SweepEvent", "SweepOptions", "cell_key",
    "run_configuration", "run_sweep",
]

#: The parts of a bench result entry a cell keeps (the whole run is in the store).
ENTRY_KEYS = ("workload", "completed", "failed", "errors", "duration_s", "ttft_ms", "tpot_ms",
              "itl_ms", "e2e_ms", "request_throughput_per_s", "output_tokens_per_s",
              "total_tokens_per_s", "gpus", "tokens_per_sec_per_gpu",
              "output_tokens_per_sec_per_gpu")


def cell_key(configuration: Configuration, workload: Workload) -> str:
    """``CONFIG_KEY/WORKLOAD_KEY``."""
    return f"{configuration.key}/{workload.key}"


@dataclass(frozen=True)
class SweepOptions:
    """How to run the configurations."""

    log_dir: Path
    host: str = "127.0.0.1"
    check: bool = True
    """Run ``servewise check`` for configurations that name a GPU."""
    retry_failed: bool = False
    grace_s: float = GRACE_SECONDS
    """Seconds between SIGTERM and SIGKILL when a configuration's engine is stopped."""
    read_timeout_s: float = 600.0
    bench_timeout_s: float | None = None
    """One deadline for each cell's benchmark (None: none)."""


@dataclass(frozen=True)
class SweepEvent:
    """A step of the sweep, for progress on stderr."""

    kind: str
    """``skip``, ``check``, ``launch``, ``ready``, ``failed``, ``cell``, ``cell_failed``,
    ``stopped``."""
    configuration: str
    message: str
    workload: str | None = None


class Sink(Protocol):
    """Where a configuration's records go."""

    def configuration(self, key: str, record: dict[str, Any]) -> None:
        """A configuration's status changed (merged into what is recorded)."""

    def cell(self, key: str, record: dict[str, Any]) -> None:
        """A cell finished (``done`` or ``failed``)."""

    def bench_run(self, result: BenchResult) -> None:
        """A benchmark run ended (keep it in the store)."""

    def launch(self, document: dict[str, Any]) -> None:
        """A launch document (as ``servewise launch`` records it)."""

    def event(self, event: SweepEvent) -> None:
        """Progress."""

    def line(self, configuration: str, line: str) -> None:
        """A line of an engine's log."""

    def progress(self, step: LevelProgress) -> None:
        """A benchmark's progress."""


@dataclass
class LocalSink:
    """Records into the state file; the rest to callbacks (the store, the terminal)."""

    state: SweepState
    on_event: Callable[[SweepEvent], None] | None = None
    on_line: Callable[[str, str], None] | None = None
    on_progress: Callable[[LevelProgress], None] | None = None
    store_run: Callable[[BenchResult], None] | None = None
    store_launch: Callable[[dict[str, Any]], None] | None = None
    runs: list[str] = field(default_factory=list)

    def configuration(self, key: str, record: dict[str, Any]) -> None:
        """See :class:`Sink`."""
        self.state.put_configuration(key, record)

    def cell(self, key: str, record: dict[str, Any]) -> None:
        """See :class:`Sink`."""
        self.state.put_cell(key, record)

    def bench_run(self, result: BenchResult) -> None:
        """See :class:`Sink`."""
        self.runs.append(result.run_id)
        if self.store_run is not None:
            self.store_run(result)

    def launch(self, document: dict[str, Any]) -> None:
        """See :class:`Sink`."""
        if self.store_launch is not None:
            self.store_launch(document)

    def event(self, event: SweepEvent) -> None:
        """See :class:`Sink`."""
        if self.on_event is not None:
            self.on_event(event)

    def line(self, configuration: str, line: str) -> None:
        """See :class:`Sink`."""
        if self.on_line is not None:
            self.on_line(configuration, line)

    def progress(self, step: LevelProgress) -> None:
        """See :class:`Sink`."""
        if self.on_progress is not None:
            self.on_progress(step)


def resolve_command(config: Configuration) -> tuple[list[str], dict[str, str]]:
    """The configuration's argv and environment (a recipe is rendered)."""
    if config.recipe is None:
        return list(config.argv), dict(config.env)
    from servewise.recipes import load_recipes, render

    recipe = load_recipes().get(config.recipe)
    if recipe is None:
        raise UsageError(f"no recipe {config.recipe!r}", found=config.recipe,
                         hint="`servewise recipe list` lists the ids")
    rendered = render(recipe, format=recipe.engine)
    if len(rendered.commands) > 1:
        raise UsageError(f"recipe {config.recipe} runs on {len(rendered.commands)} nodes; a "
                         "sweep configuration is one engine", found=config.recipe,
                         hint="sweep its single-node recipes, or give the command")
    return list(rendered.argv), {**dict(rendered.commands[0].env), **config.env}


def _check(config: Configuration, argv: Sequence[str], sink: Sink) -> bool:
    """``servewise check`` for a configuration that names a GPU; False: it will not start."""
    from servewise.check import CheckRequest, run_check
    from servewise.knowledge.gpus import parse_gpu_spec

    assert config.check_gpu is not None
    engine = engine_of(argv) or "vllm"
    model = config.check_model or _command_model(engine_args(argv, engine), engine)
    if model is None:
        sink.configuration(config.key, {"check": {"ran": False, "why": "no model in the "
                                                  "command; give check.model"}})
        return True
    flags = _check_flags(engine_args(argv, engine), engine)
    sink.event(SweepEvent("check", config.name, f"servewise check {model} --gpu "
                          f"{config.check_gpu} -- {' '.join(flags)}"))
    try:
        report = run_check(CheckRequest(model, parse_gpu_spec(config.check_gpu), engine=engine,
                                        flags=flags))
    except ServewiseError as error:
        sink.configuration(config.key, {"check": {"ran": False, "why": error.message}})
        return True
    document = report.to_dict()
    problems = [p.get("summary") or p.get("message") for p in document["problems"]]
    sink.configuration(config.key, {"check": {"ran": True, "will_start": report.will_start,
                                              "problems": problems}})
    return report.will_start


def _command_model(args: Sequence[str], engine: str) -> str | None:
    """The model a command serves: ``--model``/``--model-path``, or ``vllm serve MODEL``."""
    for index, token in enumerate(args):
        name, inline, value = token.partition("=")
        if name in ("--model", "--model-path"):
            return value if inline else (args[index + 1] if index + 1 < len(args) else None)
    if engine == "vllm" and args and not args[0].startswith("-"):
        return args[0]
    return None


def _check_flags(args: Sequence[str], engine: str) -> tuple[str, ...]:
    """The command's engine flags for ``check``: without the model, host and port (which
    ``check`` sets itself) and without placeholders."""
    out: list[str] = []
    skip = False
    for index, token in enumerate(args):
        if skip:
            skip = False
            continue
        name = token.partition("=")[0]
        if name in ("--model", "--model-path", "--host", "--port"):
            skip = "=" not in token
            continue
        if index == 0 and engine == "vllm" and not token.startswith("-"):
            continue  # ``vllm serve MODEL``
        if "{" in token:
            continue
        out.append(token)
    return tuple(out)


def _launch_record(result: LaunchResult, engine: str | None) -> dict[str, Any]:
    cause = result.root_cause()
    return {"run_id": result.run_id, "engine": engine, "outcome": result.outcome,
            "message": result.message,
            "time_to_ready_s": result.time_to_ready_s, "log_path": result.log_path,
            "pid": result.pid, "exit_code": result.exit_code, "stopped": result.stopped,
            "kv_numbers": result.numbers, "hint": result.hint,
            "root_cause": None if cause is None else cause.brief()}


def run_configuration(plan: SweepPlan, config: Configuration, workloads: Sequence[Workload],
                      options: SweepOptions, sink: Sink) -> None:
    """One configuration: check, launch, bench ``workloads``, stop (see the module)."""
    started = time.time()
    name = config.name
    try:
        argv, env = resolve_command(config)
    except ServewiseError as error:
        sink.configuration(config.key, {"name": name, "status": "start_error",
                                        "message": error.message, "hint": error.hint})
        sink.event(SweepEvent("failed", name, error.message))
        return
    if config.check_gpu is not None and options.check and not _check(config, argv, sink):
        sink.configuration(config.key, {"name": name, "status": "check_failed",
                                        "message": "servewise check says it will not start"})
        sink.event(SweepEvent("failed", name, "servewise check says it will not start; "
                              "skipped (see the state file's check.problems)"))
        return
    engine = engine_of(argv)
    try:
        port = free_port(options.host)
        if engine is None and "{port}" not in " ".join(argv) and "--port" not in argv:
            raise UsageError(f"{name}: servewise cannot tell which port this command listens "
                             "on", hint="put --port {port} in the command")
        argv = fill(argv, port=port)
        argv, port = with_port(argv, engine, port)
    except ServewiseError as error:
        sink.configuration(config.key, {"name": name, "status": "start_error",
                                        "message": error.message, "hint": error.hint})
        sink.event(SweepEvent("failed", name, error.message))
        return
    gpus = config.gpus or gpus_of(engine_args(argv, engine))
    run_id = new_run_id("launch")
    spec = LaunchSpec(argv=tuple(argv), engine=engine, port=port,
                      log_path=options.log_dir / f"{run_id}.log", host=options.host, env=env,
                      timeout_s=plan.timeout_s, grace_s=options.grace_s, run_id=run_id)
    base = {"argv": argv, "engine": engine, "port": port, "sweep_configuration": name}
    sink.launch({**base, "run_id": run_id, "outcome": "starting"})
    sink.configuration(config.key, {"name": name, "status": "running", "gpus": gpus,
                                    "started_at": started, "launch": {"run_id": run_id}})
    sink.event(SweepEvent("launch", name, f"{' '.join(argv)} (port {port}, log "
                          f"{spec.log_path})"))
    status, message = "done", ""
    interrupted: BaseException | None = None
    seen: list[int] = []

    def note_pid(stage: str) -> None:  # the engine's pid, as soon as it runs (a crash's trace)
        if not seen and run.process is not None:
            seen.append(run.process.pid)
            sink.configuration(config.key, {"engine_pid": run.process.pid})

    run = EngineRun(spec, on_line=lambda text: sink.line(name, text), on_stage=note_pid)
    try:
        with run:
            result = run.wait_ready()
            if result.outcome == "interrupted":
                raise KeyboardInterrupt
            if result.ready:
                sink.event(SweepEvent("ready", name, result.message))
                served = config.model or (result.models[0] if result.models else None)
                for workload in workloads:
                    alive = _bench_cell(plan, config, workload, options, sink,
                                        f"http://{options.host}:{port}", served, gpus, run)
                    if not alive:
                        status, message = "died", "the engine exited during the benchmarks"
                        break
            else:
                status, message = result.outcome, result.message
    except (KeyboardInterrupt, Terminated) as stop:
        if run.result is None:
            raise
        interrupted, status, message = stop, "interrupted", "interrupted; run the sweep again"
    final = run.result
    assert final is not None
    document = {**base, **final.to_dict(), "start_time": run.start_time}
    sink.launch(document)
    launched = _launch_record(final, engine)
    record = {"name": name, "status": status if final.ready or interrupted else final.outcome,
              "message": message or final.message, "ended_at": time.time(),
              "launch": launched}
    sink.configuration(config.key, record)
    if interrupted is not None:
        raise interrupted
    if final.ready and status == "done":
        sink.event(SweepEvent("stopped", name, f"engine {final.stopped}"))
    else:
        cause = launched["root_cause"]
        why = f"{cause['summary']} [{cause['category']}]" if cause else ""
        sink.event(SweepEvent("failed", name, f"{record['message']}" + (f"; root cause: {why}"
                                                                       if why else "")))


def _bench_cell(plan: SweepPlan, config: Configuration, workload: Workload,
                options: SweepOptions, sink: Sink, url: str, served: str | None, gpus: int,
                run: EngineRun) -> bool:
    """Run one cell; False when the engine is gone (the remaining cells cannot run)."""
    key = cell_key(config, workload)
    record: dict[str, Any] = {"configuration": config.name, "configuration_key": config.key,
                              "workload": workload.to_dict(), "started_at": time.time()}
    if served is None:
        sink.cell(key, {**record, "status": "failed", "message": "the server lists no model; "
                        "give the configuration's model"})
        return True
    bench = BenchConfig(url=url, model=served, workload=WorkloadSpec(workload.isl, workload.osl),
                        levels=tuple(LoadLevel(workload.kind, v) for v in workload.levels),
                        num_prompts=workload.num_prompts, warmup=workload.warmup, gpus=gpus,
                        seed=plan.seed, read_timeout_s=options.read_timeout_s,
                        timeout_s=options.bench_timeout_s)
    sink.event(SweepEvent("cell", config.name, "benchmark starts", workload.key))
    try:
        if workload.sla is not None:
            record.update(_sla_cell(bench, workload, sink))
        else:
            result = run_bench(bench, progress=sink.progress)
            sink.bench_run(result)
            record.update(run_ids=[result.run_id], results=[
                {k: entry.get(k) for k in ENTRY_KEYS} for entry in result.document["results"]],
                stopped=result.document.get("stopped"))
    except ServewiseError as error:
        gone = run.process is not None and run.process.poll() is not None
        diagnosis = run.pump.diagnosis() if gone and run.pump is not None else None
        cause = diagnosis.to_dict().get("root_cause") if diagnosis is not None and (
            diagnosis.failed) else None
        sink.cell(key, {**record, "status": "failed", "message": error.message,
                        "engine_exited": gone, "root_cause": cause, "ended_at": time.time()})
        sink.event(SweepEvent("cell_failed", config.name, error.message, workload.key))
        return not gone
    failed = sum(int(e.get("failed") or 0) for e in record.get("results", []))
    sink.cell(key, {**record, "status": "done", "failed_requests": failed,
                    "ended_at": time.time()})
    sink.event(SweepEvent("cell", config.name, "done" + (f", {failed} requests failed"
                                                         if failed else ""), workload.key))
    return run.process is None or run.process.poll() is None


def _sla_cell(bench: BenchConfig, workload: Workload, sink: Sink) -> dict[str, Any]:
    from servewise.bench.sla import SlaOptions, parse_sla, run_sla_search

    assert workload.sla is not None
    start = workload.levels[0]
    maximum = workload.sla_max or (4096.0 if workload.kind == "concurrency" else 1000.0)
    options = SlaOptions(workload.kind, start=start, maximum=max(maximum, start),
                         minimum=1.0 if workload.kind == "concurrency" else min(start, 0.01),
                         max_runs=workload.sla_runs)
    result = run_sla_search(bench, parse_sla(workload.sla), options, progress=sink.progress,
                            on_run=lambda run, _probe: sink.bench_run(run))
    if result.status == "interrupted":
        raise KeyboardInterrupt
    document = result.document()
    best = result.best
    chosen = [r for r in result.runs if best is not None and r.run_id == best.run_id]
    return {"run_ids": [r.run_id for r in result.runs], "sla": result.sla_block(),
            "results": [{k: e.get(k) for k in ENTRY_KEYS} for r in chosen
                        for e in r.document["results"]],
            "all_results": [{k: e.get(k) for k in ENTRY_KEYS} for e in document["results"]]}


def pending(plan: SweepPlan, state: SweepState, retry_failed: bool
            ) -> list[tuple[Configuration, list[Workload]]]:
    """The configurations with cells still to run, and those cells' workloads."""
    todo = []
    for config in plan.configurations:
        if state.launch_failed(config.key, retry_failed):
            continue
        workloads = [w for w in plan.workloads
                     if not state.finished(cell_key(config, w), retry_failed)]
        if workloads:
            todo.append((config, workloads))
    return todo


def run_sweep(plan: SweepPlan, state: SweepState, options: SweepOptions, sink: Sink) -> None:
    """Every configuration with cells left, one after another (see the module)."""
    todo = pending(plan, state, options.retry_failed)
    done = {c.key for c in plan.configurations} - {c.key for c, _ in todo}
    for config in plan.configurations:
        if config.key in done:
            recorded = state.configuration(config.key) or {}
            sink.event(SweepEvent("skip", config.name, "already run ("
                                  f"{recorded.get('status', 'cells finished')})"))
    for config, workloads in todo:
        try:
            run_configuration(plan, config, workloads, options, sink)
        except (KeyboardInterrupt, Terminated):
            sink.configuration(config.key, {"status": "interrupted", "ended_at": time.time()})
            raise
        except ServewiseError as error:  # servewise itself could not run it: the next one can
            sink.configuration(config.key, {"name": config.name, "status": "start_error",
                                            "message": error.message, "hint": error.hint,
                                            "ended_at": time.time()})
            sink.event(SweepEvent("failed", config.name, error.message))
