"""The planner's accuracy on your own start-ups: stored launches and saved engine logs.

:func:`launch_samples` reads the launches in the store that kept a prediction and an observed
KV figure; :func:`log_samples` reads a folder of saved engine logs (``*.log``, ``*.txt``),
takes the command each states (servewise's ``$ argv`` line, vLLM's ``non-default args``) and
plans it for ``--gpu`` (or the CPU pool the log names). :func:`accuracy_report` groups the
relative errors by model family and engine version; :func:`corpus_record` writes a sample in
the shape of ``tests/data/plan_corpus.jsonl``, so your runs become calibration records the
planner's corpus test replays (``SERVEWISE_PLAN_CORPUS=FILE``).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from servewise.formats.startup import StartupFacts, logged_command, read_startup
from servewise.launch.evidence import evidence_for, prediction_from_command
from servewise.store import Store

__all__ = ["Sample", "accuracy_report", "corpus_record", "launch_samples", "log_samples"]

GIB = 2**30
_SETTINGS = ("engine_version", "max_model_len", "max_num_seqs", "max_num_batched_tokens",
             "gpu_memory_utilization", "mem_fraction_static", "kv_cache_memory_bytes",
             "kv_cache_dtype", "block_size", "enforce_eager")


@dataclass(frozen=True)
class Sample:
    """One start-up with both sides: what was predicted and what the engine logged."""

    ident: str
    source: str
    engine: str
    engine_version: str
    model: str
    family: str
    prediction: dict[str, Any]
    observed: dict[str, Any]
    comparison: list[dict[str, Any]] = field(default_factory=list)

    def error(self, figure: str = "kv_cache_tokens") -> float | None:
        """The relative error of one figure (predicted / observed - 1), or None."""
        for row in self.comparison:
            if row["figure"] == figure:
                value = row.get("relative_error")
                return None if value is None else float(value)
        return None


def _family(prediction: Mapping[str, Any]) -> str:
    """The model family: the config's ``model_type`` (llama, qwen3_moe ...) when the plan
    kept it, else the model's name."""
    model = (prediction.get("plan") or {}).get("model") or {}
    if isinstance(model, Mapping) and model.get("model_type"):
        return str(model["model_type"])
    return Path(str(prediction.get("model") or "unknown")).name


def _sample(ident: str, source: str, engine: str | None, prediction: Mapping[str, Any],
            facts: StartupFacts, time_to_ready_s: float | None = None) -> Sample | None:
    evidence = evidence_for(prediction, facts, time_to_ready_s)
    observed = evidence["observed"]
    if observed.get("kv_cache_tokens") is None and not observed.get("refused"):
        return None
    version = facts.engine_version or prediction.get("engine_version") or "unknown"
    return Sample(ident, source, engine or str(prediction.get("engine") or "vllm"),
                  str(version), str(prediction.get("model")), _family(prediction),
                  dict(prediction), observed, evidence["comparison"])


def launch_samples(store: Store, limit: int = 1000) -> tuple[list[Sample], list[str]]:
    """The stored launches (a search's attempts too) that kept a prediction and whose log
    states a KV figure; and why each other launch is left out."""
    samples, skipped = [], []
    for document in store.launches(limit):
        run_id = str(document.get("run_id"))
        prediction = document.get("prediction")
        if not prediction:
            skipped.append(f"{run_id}: no prediction ({document.get('prediction_note') or 'none'})")
            continue
        log = document.get("log_path")
        try:
            facts = read_startup(Path(log).read_text("utf-8", errors="replace")) if log \
                else StartupFacts()
        except OSError:
            facts = StartupFacts()
        found = _sample(run_id, f"measured: servewise launch {run_id}", document.get("engine"),
                        prediction, facts, document.get("time_to_ready_s"))
        if found is None:
            skipped.append(f"{run_id}: the log states no KV figure")
        else:
            samples.append(found)
    return samples, skipped


def log_samples(folder: Path, gpu: str | None) -> tuple[list[Sample], list[str]]:
    """The saved engine logs of ``folder`` planned for ``gpu`` (or the CPU pool they state)."""
    samples, skipped = [], []
    paths = sorted(p for p in folder.iterdir() if p.suffix in (".log", ".txt")) \
        if folder.is_dir() else []
    for path in paths:
        text = path.read_text("utf-8", errors="replace")
        facts = read_startup(text)
        argv = logged_command(text)
        if argv is None:
            skipped.append(f"{path.name}: states no command (no `$ argv` line, no vLLM "
                           "non-default args)")
            continue
        env = {}
        if gpu is None and facts.device == "cpu" and facts.kv_available_gib:
            env["VLLM_CPU_KVCACHE_SPACE"] = str(int(facts.kv_available_gib))
        prediction, why = prediction_from_command(argv, env, gpu)
        if prediction is None:
            skipped.append(f"{path.name}: {why}")
            continue
        if facts.engine_version:
            prediction["engine_version"] = facts.engine_version
        found = _sample(f"log:{path.name}", f"measured: engine log {path.name}",
                        facts.engine, prediction, facts)
        if found is None:
            skipped.append(f"{path.name}: the log states no KV figure")
        else:
            samples.append(found)
    return samples, skipped


def accuracy_report(samples: Iterable[Sample], skipped: Iterable[str] = ()) -> dict[str, Any]:
    """The KV-token error by model family, engine and engine version (and every sample)."""
    groups: dict[tuple[str, str, str], list[Sample]] = {}
    rows = []
    for sample in samples:
        groups.setdefault((sample.family, sample.engine, sample.engine_version),
                          []).append(sample)
        rows.append({"id": sample.ident, "model": sample.model, "family": sample.family,
                     "engine": sample.engine, "engine_version": sample.engine_version,
                     "kv_cache_tokens_error": sample.error(),
                     "kv_available_gib_error": sample.error("kv_available_gib"),
                     "estimated_max_model_len_error": sample.error("estimated_max_model_len"),
                     "weights_gib_error": sample.error("weights_gib")})
    table = []
    for (family, engine, version), members in sorted(groups.items()):
        errors = [e for e in (m.error() for m in members) if e is not None]
        table.append({
            "family": family, "engine": engine, "engine_version": version,
            "runs": len(members),
            "mean_abs_error": round(statistics.fmean(abs(e) for e in errors), 4)
            if errors else None,
            "worst_error": max(errors, key=abs) if errors else None,
            "within_5pct": sum(1 for e in errors if abs(e) <= 0.05),
        })
    left = list(skipped)
    return {"compared": len(rows), "skipped": len(left), "groups": table, "samples": rows,
            "not_compared": left}


def corpus_record(sample: Sample) -> dict[str, Any]:
    """One sample as a record of the planner's calibration corpus (its fields, its shape)."""
    prediction = sample.prediction
    check = prediction.get("check") or {}
    given = {**(check.get("settings") or {}), **(prediction.get("settings") or {})}
    settings: dict[str, Any] = {key: given[key] for key in _SETTINGS
                                if given.get(key) is not None}
    settings["engine_version"] = sample.engine_version if sample.engine_version != \
        "unknown" else None
    settings = {key: value for key, value in settings.items() if value is not None}
    settings["engine"] = sample.engine
    settings["layout"] = {"tp": int(given.get("tensor_parallel_size") or 1),
                          "pp": int(given.get("pipeline_parallel_size") or 1), "dp": 1,
                          "expert_parallel": False}
    gpu = prediction.get("gpu") or {}
    cpu = gpu.get("platform") == "cpu"
    observed = sample.observed
    logged = {key: observed[theirs] for key, theirs in (
        ("kv_cache_tokens", "kv_cache_tokens"), ("available_kv_gib", "kv_available_gib"),
        ("max_concurrency", "max_concurrency"), ("weights_gib", "weights_gib"),
        ("cuda_graph_gib", "cuda_graph_gib"), ("free_at_startup_gib", "free_gib_at_start"),
        ("total_gpu_gib", "total_gib")) if observed.get(theirs) is not None}
    if observed.get("refused"):
        logged["startup_failed"] = True
    catalog = "cpu" if cpu else gpu.get("gpu_id")
    incomplete = None if catalog else "the GPU is not in the catalog"
    return {
        "id": sample.ident, "source": sample.source, "from": "servewise plan accuracy --export",
        "engine": sample.engine, "engine_version": None if sample.engine_version == "unknown"
        else sample.engine_version,
        "model": sample.model, "gpu": gpu.get("name"), "gpu_count": gpu.get("count") or 1,
        "card": sample.model, "catalog_gpu": catalog, "settings": settings, "logged": logged,
        "failure_phrase": "estimated maximum model length" if observed.get("refused") else None,
        "incomplete": incomplete,
    }
