"""``servewise search``: the largest ``--max-model-len`` (or fraction, or batch) that starts.

Each attempt is a real launch (:class:`~servewise.launch.run.EngineRun`) of the command with
``{value}`` and ``{port}`` filled in, stopped once it is ready; its outcome, diagnosis, time
to ready and the KV numbers it logged are kept in the store as it ends. The values come from
:mod:`servewise.launch.strategy`: the planner's prediction first (:func:`planner_prior`),
then the engine's own figures, then doubling and bisection.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from servewise.errors import ServewiseError, UsageError
from servewise.knowledge import argv as argv_tools
from servewise.launch.command import engine_args, engine_of, fill
from servewise.launch.process import GRACE_SECONDS, Terminated, check_stop
from servewise.launch.readiness import free_port
from servewise.launch.run import EngineRun, LaunchResult, LaunchSpec, new_run_id
from servewise.launch.strategy import PARAMS, Bounds, Param, next_value, snap, verdict

__all__ = ["Attempt", "SearchOptions", "SearchResult", "planner_prior", "run_search"]


@dataclass(frozen=True)
class Attempt:
    """One launch of the search."""

    value: float
    verdict: str
    """``ok``, ``too_high``, ``too_low`` or ``other``."""
    result: LaunchResult
    engine_hint: float | None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data (an element of ``attempts``)."""
        cause = self.result.root_cause()
        return {
            "value": _plain(self.value), "verdict": self.verdict,
            "outcome": self.result.outcome, "run_id": self.result.run_id,
            "message": self.result.message,
            "time_to_ready_s": self.result.time_to_ready_s,
            "elapsed_s": round(self.result.elapsed_s, 3),
            "engine_hint": _plain(self.engine_hint) if self.engine_hint is not None else None,
            "root_cause": None if cause is None else cause.brief(),
            "kv_numbers": self.result.numbers, "log_path": self.result.log_path,
        }


def _plain(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value


@dataclass(frozen=True)
class SearchOptions:
    """What to search and how."""

    param: Param
    argv: tuple[str, ...]
    log_dir: Path
    minimum: float
    maximum: float
    resolution: float
    start: float | None = None
    prior: float | None = None
    prior_source: str | None = None
    host: str = "127.0.0.1"
    env: Mapping[str, str] = field(default_factory=dict)
    timeout_s: float = 900.0
    grace_s: float = GRACE_SECONDS
    """Seconds between SIGTERM and SIGKILL when an attempt's engine is stopped."""
    max_attempts: int = 40
    use_hints: bool = True
    """Jump to the engine's own figures (off: plain doubling and bisection, the baseline)."""
    gpu: str | None = None
    """``--gpu NAME[:COUNT]``: with a planner prior, each attempt keeps the plan at its value
    beside what the engine logged (``prediction``, ``evidence``; see launch.evidence)."""
    search_id: str = field(default_factory=lambda: new_run_id("search"))

    def __post_init__(self) -> None:
        self.param.check(self.minimum, self.maximum, self.resolution, self.start)


@dataclass
class SearchResult:
    """The answer and every attempt."""

    options: SearchOptions
    attempts: list[Attempt] = field(default_factory=list)
    status: str = "running"
    """``running``, ``done``, ``stopped`` (an attempt failed for another reason),
    ``interrupted``, ``exhausted`` (the attempt limit)."""
    message: str = ""
    started: float = field(default_factory=time.time)
    bounds: Bounds | None = None

    @property
    def best(self) -> float | None:
        """The largest value that started."""
        return self.bounds.best() if self.bounds is not None else None

    @property
    def exit_status(self) -> int:
        """0 when a value started and the search ended, 130 interrupted, 1 otherwise."""
        if self.status == "interrupted":
            return 130
        return 0 if self.status == "done" and self.best is not None else 1

    def to_dict(self) -> dict[str, Any]:
        """The ``search --json`` document: ``best``, ``attempts`` and how it went."""
        o = self.options
        return {
            "search_id": o.search_id, "param": o.param.name, "status": self.status,
            "message": self.message,
            "best": _plain(self.best) if self.best is not None else None,
            "launches": len(self.attempts),
            "prior": _plain(o.prior) if o.prior is not None else None,
            "prior_source": o.prior_source,
            "minimum": _plain(o.minimum), "maximum": _plain(o.maximum),
            "resolution": _plain(o.resolution), "argv": list(o.argv),
            "elapsed_s": round(time.time() - self.started, 3),
            "bounds": self.bounds.to_dict() if self.bounds is not None else None,
            "attempts": [attempt.to_dict() for attempt in self.attempts],
        }


def value_text(param: Param, value: float) -> str:
    """The value as the command line gets it (``65408``, ``0.9``)."""
    return str(int(value)) if param.integer else f"{value:g}"


def engine_hint(param: Param, result: LaunchResult) -> float | None:
    """The engine's own figure for the answer, read from a failed attempt."""
    numbers = result.numbers
    if param.setting == "max_model_len":
        cause = result.root_cause()
        fit = cause.extracted_int("max_model_len_fit", "estimated_max_len") if cause else None
        if fit is not None:
            return float(fit)
        for key in ("estimated_max_model_len", "kv_capacity_tokens"):
            if numbers.get(key) is not None:
                return float(numbers[key])
    if param.setting == "mem_fraction_static" and numbers.get("avail_mem_gb") is not None:
        used, free = numbers.get("weights_mem_gb"), numbers.get("avail_mem_gb")
        if used is not None and free is not None and used + free > 0:
            return round(float(used) / (float(used) + float(free)) + param.resolution, 2)
    return None


Recorder = Callable[[str, dict[str, Any], str | None], None]
"""Called as ``record(kind, document, search_id)`` with ``launch`` or ``search`` documents."""


def run_search(options: SearchOptions, *, record: Recorder | None = None,
               on_attempt: Callable[[Attempt], None] | None = None,
               on_line: Callable[[str], None] | None = None) -> SearchResult:
    """Run the search; every attempt is stopped (its whole group) before the next starts."""
    if "{value}" not in " ".join(options.argv):
        raise UsageError("the command has no {value} for the searched setting",
                         hint=f"write --{options.param.name} {{value}} in the command")
    engine = engine_of(options.argv)
    bounds = Bounds(options.param, options.minimum, options.maximum, options.resolution,
                    prior=options.prior)
    result = SearchResult(options, bounds=bounds)

    def save() -> None:
        if record is not None:
            record("search", result.to_dict(), None)

    save()
    first = options.prior if options.prior is not None else (
        options.start if options.start is not None else options.param.start)
    try:
        while True:
            check_stop()
            if len(result.attempts) >= options.max_attempts:
                result.status, result.message = "exhausted", (
                    f"stopped after {options.max_attempts} launches")
                break
            if not result.attempts:
                value: float | None = snap(bounds, first)
            else:
                value = next_value(bounds)
            if value is None:
                result.status = "done"
                result.message = _done_text(options.param, bounds)
                break
            attempt = _attempt(options, engine, value, record, on_line)
            result.attempts.append(attempt)
            bounds.record(value, attempt.verdict, attempt.engine_hint)
            if on_attempt is not None:
                on_attempt(attempt)
            save()
            if attempt.result.outcome == "interrupted":
                result.status, result.message = "interrupted", "interrupted during an attempt"
                break
            if attempt.verdict == "other":
                result.status = "stopped"
                result.message = (f"the launch at {value_text(options.param, value)} failed "
                                  f"for a reason the value does not change: "
                                  f"{attempt.result.message}")
                break
    except (KeyboardInterrupt, Terminated):
        result.status, result.message = "interrupted", "interrupted between attempts"
    except BaseException as error:
        result.status, result.message = "error", f"{type(error).__name__}: {error}"
        save()  # the store says how it ended, even on a bug
        raise
    save()
    return result


def _done_text(param: Param, bounds: Bounds) -> str:
    if bounds.ok is None:
        return f"no value of --{param.name} started between {bounds.minimum:g} and the failures"
    above = f"; {bounds.too_high:g} does not" if bounds.too_high is not None else (
        " (the --max bound)")
    return f"--{param.name} {bounds.ok:g} starts{above}"


def _attempt(options: SearchOptions, engine: str | None, value: float,
             record: Recorder | None, on_line: Callable[[str], None] | None) -> Attempt:
    port = free_port(options.host)
    argv = fill(options.argv, value=value_text(options.param, value), port=port)
    run_id = new_run_id("launch")
    spec = LaunchSpec(argv=tuple(argv), engine=engine, port=port,
                      log_path=options.log_dir / f"{run_id}.log", host=options.host,
                      env=dict(options.env), timeout_s=options.timeout_s,
                      grace_s=options.grace_s, run_id=run_id,
                      settings={options.param.setting: value})
    if record is not None:
        record("launch", {"run_id": run_id, "outcome": "starting", "argv": argv,
                          "search_id": options.search_id, "value": _plain(value)},
               options.search_id)
    with EngineRun(spec, on_line=on_line) as run:
        launched = run.wait_ready()
    launched = run.result or launched
    cause = launched.root_cause()
    judged = verdict(options.param, launched.outcome, cause.category if cause else None,
                     launched.exit_code)
    hint = engine_hint(options.param, launched) if (
        judged != "ok" and options.use_hints) else None
    attempt = Attempt(value, judged, launched, hint)
    if record is not None:
        record("launch", {**launched.to_dict(), "argv": argv, "search_id": options.search_id,
                          "value": _plain(value), "verdict": judged,
                          **_evidence(options, argv, launched)}, options.search_id)
    return attempt


def _evidence(options: SearchOptions, argv: Sequence[str], launched: LaunchResult
              ) -> dict[str, Any]:
    """The plan at this attempt's value beside the engine's log, when the planner reads the
    command (the search had a planner prior); nothing otherwise."""
    if options.prior is None or options.prior_source is None:
        return {}
    import os

    from servewise.launch.evidence import evidence_for, observed_facts, prediction_from_command

    prediction, note = prediction_from_command(argv, {**os.environ, **options.env},
                                               options.gpu)
    return {"prediction": prediction, "prediction_note": note, "gpu": options.gpu,
            "evidence": evidence_for(prediction, observed_facts(launched.log_path),
                                     launched.time_to_ready_s)}


def planner_prior(param: Param, argv: Sequence[str], env: Mapping[str, str],
                  gpu: str | None) -> tuple[float | None, str]:
    """The planner's prediction for ``param`` from the command, or None and why not.

    The model and settings are read from the command (``{value}`` left unset); the device is
    ``gpu`` (``NAME[:COUNT]``), or the CPU backend when the command or environment fixes
    the KV pool (``VLLM_CPU_KVCACHE_SPACE`` GiB, ``--kv-cache-memory-bytes``).
    """
    engine = engine_of(argv) or "vllm"
    if param.setting not in ("max_model_len", "gpu_memory_utilization", "mem_fraction_static"):
        return None, f"the planner does not predict --{param.name}"
    try:
        from dataclasses import replace

        from servewise.knowledge.accounting import load_engine_constants
        from servewise.knowledge.flags import from_argv
        from servewise.knowledge.gpus import parse_gpu_spec
        from servewise.plan.planner import make_plan
        from servewise.plan.resolve import load_model
        from servewise.plan.startup import Settings
        from servewise.plan.weights import Parallel

        args = [token for token in engine_args(argv, engine)]
        args = _without_placeholders(args)
        read = from_argv(engine, args)
        if read.model is None:
            return None, "the command names no model"
        pool = read.kv_cache_memory_bytes
        space = env.get("VLLM_CPU_KVCACHE_SPACE")
        if space and space.strip().isdigit():
            pool = int(space) * 2**30
        if gpu is None and pool is None:
            return None, "no --gpu and no fixed KV pool: nothing to plan against"
        device = parse_gpu_spec(gpu or "cpu", memory=None if gpu else f"{pool}B")
        settings = Settings(
            engine=engine, layout=Parallel(read.tensor_parallel_size or 1,
                                           read.pipeline_parallel_size or 1, 1),
            kv_cache_dtype=read.kv_cache_dtype or "auto", block_size=read.block_size,
            max_num_seqs=read.max_num_seqs, max_num_batched_tokens=read.max_num_batched_tokens,
            gpu_memory_utilization=read.gpu_memory_utilization,
            mem_fraction_static=read.mem_fraction_static, kv_cache_memory_bytes=pool,
            enforce_eager=bool(read.enforce_eager))
        if param.setting != "max_model_len":
            settings = replace(settings, max_model_len=read.max_model_len)
        model = load_model(read.model)
        plan = make_plan(model, device, settings, load_engine_constants(),
                         gpus_per_node=device.count, explicit_layout=True)
    except ServewiseError as error:
        return None, f"the planner could not read the command: {error.message}"
    recommendation = plan.recommendation
    if param.setting == "max_model_len":
        value: float | None = recommendation.largest_context_tokens
    else:
        value = recommendation.fraction(param.setting)
    if value is None:
        return None, "the planner has no figure for it"
    return float(value), f"servewise plan ({model.ref})"


def _without_placeholders(args: list[str]) -> list[str]:
    """``args`` without ``--flag {value}`` / ``--flag={port}`` (left to the engine)."""
    out = list(args)
    for name, value, _ in argv_tools.flags(args):
        if value is not None and ("{value}" in value or "{port}" in value):
            out = argv_tools.without(out, name)
    return [word for word in out if "{value}" not in word and "{port}" not in word]


def searchable(name: str) -> Param:
    """The :class:`Param` called ``name`` (``max-model-len``...)."""
    try:
        return PARAMS[name]
    except KeyError:
        raise UsageError(f"--param {name!r} cannot be searched",
                         hint="give one of " + ", ".join(PARAMS), found=name) from None

