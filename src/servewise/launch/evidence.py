"""Predicted beside observed: what check or the planner said, what the engine logged.

A launch keeps the prediction it started with (:func:`prediction_from_check` for ``launch
--from-check``, :func:`prediction_from_command` when the command names a model the planner
reads and the device is known) and, once the engine is up or has refused, the facts its own
log states (:func:`~servewise.formats.startup.read_startup`). :func:`compare` puts them side by
side with the relative error of each figure; a KV-token figure more than
:data:`KV_TOLERANCE` off is a finding that names the part of the plan that was wrong
(weights, activation, CUDA graphs, GPU memory, or the KV layout itself).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from servewise.errors import ServewiseError
from servewise.formats.startup import FACT_UNITS, StartupFacts, read_startup

__all__ = ["KV_TOLERANCE", "compare", "evidence_for", "observed_facts",
           "predicted_figures", "prediction_from_check", "prediction_from_command"]

GIB = 2**30
KV_TOLERANCE = 0.05
"""A KV-token prediction further off than this (relative) is a finding."""

#: The figures compared, in table order.
COMPARED = ("weights_gib", "total_gib", "activation_gib", "cuda_graph_gib",
            "kv_available_gib", "kv_cache_tokens", "max_concurrency",
            "estimated_max_model_len")
_LABELS = {
    "weights_gib": "weights per GPU", "total_gib": "GPU memory",
    "activation_gib": "peak activation", "cuda_graph_gib": "CUDA graphs",
    "kv_available_gib": "KV cache memory", "kv_cache_tokens": "KV cache tokens",
    "max_concurrency": "max concurrency", "estimated_max_model_len": "largest max-model-len",
}


def _gib(value: Any) -> float | None:
    return round(float(value) / GIB, 4) if isinstance(value, int | float) else None


def predicted_figures(plan: Mapping[str, Any]) -> dict[str, float | int]:
    """The planner's figures under the log's names, from a plan's ``startup`` and
    ``startup_detail`` (``servewise plan --json``, or ``plan`` of ``check --json``)."""
    startup = plan.get("startup") or {}
    detail = plan.get("startup_detail") or {}
    engine = plan.get("engine") or detail.get("engine")
    figures: dict[str, float | int | None] = {
        "weights_gib": _gib(startup.get("weights_bytes_per_gpu")),
        "activation_gib": _gib(detail.get("activation_peak_bytes")),
        "cuda_graph_gib": _gib(detail.get("cudagraph_bytes")),
        "kv_cache_tokens": startup.get("kv_cache_tokens"),
        "max_concurrency": startup.get("max_concurrency"),
    }
    if detail.get("device_memory_source") not in (None, "user"):  # not a CPU pool, not a guess
        figures["total_gib"] = _gib(detail.get("device_memory_bytes"))
    available = detail.get("available_kv_bytes")
    if engine == "sglang" or "kv_budget_bytes" in detail or available is None:
        available = startup.get("kv_cache_bytes")
    figures["kv_available_gib"] = _gib(available)
    if startup.get("fits") is False and detail.get("largest_max_model_len"):
        figures["estimated_max_model_len"] = int(detail["largest_max_model_len"])
    return {key: value for key, value in figures.items() if value is not None}


def _plan_part(plan: Mapping[str, Any]) -> dict[str, Any]:
    keep = ("engine", "engine_version", "layout", "startup", "startup_detail",
            "recommendation", "model", "gpu")
    return {key: plan[key] for key in keep if key in plan}


def prediction_from_check(document: Mapping[str, Any], path: str) -> dict[str, Any] | None:
    """The prediction a saved ``servewise check --json`` made (None: it holds no plan)."""
    plan = document.get("plan")
    if not isinstance(plan, Mapping) or not isinstance(plan.get("startup"), Mapping):
        return None
    plan = {**plan, "engine": document.get("engine")}
    recipe = document.get("recipe") or {}
    return {
        "source": "check", "from": path, "model": document.get("model"),
        "gpu": document.get("gpu"), "engine": document.get("engine"),
        "engine_version": document.get("engine_version") or plan.get("engine_version"),
        "plan": _plan_part(plan), "figures": predicted_figures(plan),
        "check": {key: document.get(key) for key in (
            "will_start", "findings", "problems", "gate", "settings", "other_recipes")}
        | {"recipe": recipe.get("id") if isinstance(recipe, Mapping) else None,
           "recipe_status": recipe.get("status") if isinstance(recipe, Mapping) else None},
    }


def prediction_from_command(argv: Sequence[str], env: Mapping[str, str], gpu: str | None
                            ) -> tuple[dict[str, Any] | None, str]:
    """The planner's prediction for an engine command, or None and why not.

    The device is ``gpu`` (``NAME[:COUNT]``), or the CPU backend when the command or its
    environment fixes the KV pool (``VLLM_CPU_KVCACHE_SPACE`` GiB, ``--kv-cache-memory-bytes``).
    """
    from servewise.knowledge.accounting import load_engine_constants
    from servewise.knowledge.flags import from_argv
    from servewise.knowledge.gpus import parse_gpu_spec
    from servewise.launch.command import engine_args, engine_of
    from servewise.plan.planner import make_plan
    from servewise.plan.resolve import load_model
    from servewise.plan.startup import Settings
    from servewise.plan.weights import Parallel

    engine = engine_of(argv) or "vllm"
    try:
        read = from_argv(engine, list(engine_args(argv, engine)))
        if read.model is None:
            return None, "the command names no model"
        pool = read.kv_cache_memory_bytes
        space = env.get("VLLM_CPU_KVCACHE_SPACE")
        if space and space.strip().isdigit():
            pool = int(space) * GIB
        if gpu is None and pool is None:
            return None, "no --gpu and no fixed KV pool: nothing to plan against"
        device = parse_gpu_spec(gpu or "cpu", memory=None if gpu else f"{pool}B")
        settings = Settings(
            engine=engine, layout=Parallel(read.tensor_parallel_size or 1,
                                           read.pipeline_parallel_size or 1, 1),
            kv_cache_dtype=read.kv_cache_dtype or "auto", block_size=read.block_size,
            max_model_len=read.max_model_len, max_num_seqs=read.max_num_seqs,
            max_num_batched_tokens=read.max_num_batched_tokens,
            gpu_memory_utilization=read.gpu_memory_utilization,
            mem_fraction_static=read.mem_fraction_static, kv_cache_memory_bytes=pool,
            enforce_eager=bool(read.enforce_eager))
        model = load_model(read.model)
        plan = make_plan(model, device, settings, load_engine_constants(),
                         gpus_per_node=device.count, explicit_layout=True)
    except ServewiseError as error:
        return None, f"the planner could not read the command: {error.message}"
    data = plan.to_dict()
    return {
        "source": "plan", "from": f"servewise plan ({model.ref})", "model": model.ref,
        "gpu": data.get("gpu"), "engine": engine, "engine_version": data.get("engine_version"),
        "settings": {key: value for key, value in {
            "max_model_len": read.max_model_len, "kv_cache_memory_bytes": pool,
            "gpu_memory_utilization": read.gpu_memory_utilization,
            "mem_fraction_static": read.mem_fraction_static,
            "tensor_parallel_size": read.tensor_parallel_size,
            "pipeline_parallel_size": read.pipeline_parallel_size,
            "kv_cache_dtype": read.kv_cache_dtype, "block_size": read.block_size,
            "max_num_seqs": read.max_num_seqs,
            "max_num_batched_tokens": read.max_num_batched_tokens,
            "enforce_eager": read.enforce_eager or None}.items() if value is not None},
        "plan": _plan_part(data), "figures": predicted_figures(data),
    }, "planned"


def observed_facts(log_path: Path | str) -> StartupFacts:
    """The start-up facts of a launch's log (nothing when it cannot be read)."""
    try:
        text = Path(log_path).read_text("utf-8", errors="replace")
    except OSError:
        return StartupFacts()
    return read_startup(text)


def _relative(predicted: float, observed: float) -> float | None:
    if observed == 0:
        return None if predicted != 0 else 0.0
    return round(predicted / observed - 1, 4)


def compare(predicted: Mapping[str, float | int], observed: Mapping[str, float | int]
            ) -> list[dict[str, Any]]:
    """One row per figure either side states: predicted, observed, relative error
    (predicted / observed - 1; None where one side is missing)."""
    rows = []
    for key in (*COMPARED, *(k for k in FACT_UNITS if k not in COMPARED)):
        mine, theirs = predicted.get(key), observed.get(key)
        if mine is None and theirs is None:
            continue
        rows.append({"figure": key, "label": _LABELS.get(key, key.replace("_", " ")),
                     "unit": FACT_UNITS.get(key, ""), "predicted": mine, "observed": theirs,
                     "relative_error": _relative(float(mine), float(theirs))
                     if mine is not None and theirs is not None else None})
    return rows


def _culprits(predicted: Mapping[str, float | int], observed: Mapping[str, float | int],
              ) -> list[tuple[str, float, str]]:
    """(part, GiB it took from the KV cache beyond the plan, why) for each stated part."""
    found = []
    for key, part in (("weights_gib", "weights"), ("activation_gib", "activation"),
                      ("cuda_graph_gib", "graphs")):
        if key in predicted and key in observed:
            extra = float(observed[key]) - float(predicted[key])
            found.append((part, extra, f"{_LABELS[key]}: predicted {predicted[key]:g} GiB, "
                          f"logged {observed[key]:g} GiB"))
    if "total_gib" in predicted and "total_gib" in observed:
        extra = float(predicted["total_gib"]) - float(observed["total_gib"])
        found.append(("gpu memory", extra, f"GPU memory: planned with "
                      f"{predicted['total_gib']:g} GiB, the engine saw {observed['total_gib']:g}"))
    if "free_gib_at_start" in observed and "total_gib" in observed:
        taken = float(observed["total_gib"]) - float(observed["free_gib_at_start"])
        if taken > 0.5:
            found.append(("gpu memory", taken, f"GPU memory: {taken:.2f} GiB was already in "
                          "use when the engine started (another process)"))
    return found


def findings(predicted: Mapping[str, float | int], observed: Mapping[str, float | int]
             ) -> list[dict[str, Any]]:
    """The KV-token finding (more than :data:`KV_TOLERANCE` off), naming the part to blame."""
    mine, theirs = predicted.get("kv_cache_tokens"), observed.get("kv_cache_tokens")
    if mine is None or not theirs:
        return []
    error = float(mine) / float(theirs) - 1
    if abs(error) <= KV_TOLERANCE:
        return []
    head = (f"KV cache tokens predicted {int(mine):,}, the engine logged {int(theirs):,} "
            f"({error:+.1%})")
    kv_mine, kv_theirs = predicted.get("kv_available_gib"), observed.get("kv_available_gib")
    if kv_mine is not None and kv_theirs and abs(float(kv_mine) / float(kv_theirs) - 1) \
            <= KV_TOLERANCE:
        return [{"level": "warning", "part": "kv layout", "figure": "kv_cache_tokens",
                 "relative_error": round(error, 4),
                 "message": f"{head}, with the KV memory right ({kv_mine:g} against "
                 f"{kv_theirs:g} GiB): the bytes per token or the block size were wrong"}]
    missing = float(kv_mine) - float(kv_theirs) if kv_mine is not None and kv_theirs \
        is not None else None
    sign = 1.0 if (missing if missing is not None else error) > 0 else -1.0
    parts = [c for c in _culprits(predicted, observed) if c[1] * sign > 0.01]
    if not parts:
        why = "the log states none of the parts that would explain it (weights, " \
            "activation, graphs, GPU memory)"
        return [{"level": "warning", "part": "unexplained", "figure": "kv_cache_tokens",
                 "relative_error": round(error, 4), "message": f"{head}: {why}"}]
    part, extra, why = max(parts, key=lambda c: abs(c[1]))
    share = f"; the KV memory was {missing:+.2f} GiB off" if missing is not None else ""
    return [{"level": "warning", "part": part, "figure": "kv_cache_tokens",
             "relative_error": round(error, 4), "gib": round(extra, 3),
             "message": f"{head}: the plan's {part} was wrong — {why}{share}"}]


def evidence_for(prediction: Mapping[str, Any] | None, facts: StartupFacts,
                 time_to_ready_s: float | None = None) -> dict[str, Any]:
    """The ``evidence`` of a launch's document: both sides, the table and the findings."""
    observed: dict[str, Any] = facts.to_dict()
    if time_to_ready_s is not None:
        observed["log_time_to_ready_s"] = observed.get("time_to_ready_s")
        observed["time_to_ready_s"] = time_to_ready_s
    figures = {key: value for key, value in observed.items()
               if key in FACT_UNITS and isinstance(value, int | float)}
    predicted = dict((prediction or {}).get("figures") or {})
    return {"observed": observed,
            "comparison": compare(predicted, figures) if prediction else [],
            "findings": findings(predicted, figures) if prediction else []}
