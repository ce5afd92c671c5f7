"""The benchmark tables of SGLang's cookbook (``<org>/<model>-benchmarks.jsx``) in servewise's
bench shape.

Each entry is keyed by its cell's ``match``; ``speed`` rows carry a workload (dataset, isl,
osl, max_concurrency, num_prompts), ``ttft_ms``, ``tpot_ms`` and ``tokens_per_sec_per_gpu``.
The cookbook's ``tokens_per_sec_per_gpu`` counts output tokens in some files and input +
output in others (their headers say which, in prose), so each file's rows are checked
against their own arithmetic — concurrency x osl / (TTFT + osl x TPOT) / GPUs is the output
rate — and the number goes to the key it means, the other one derived and listed in
``derived``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from servewise.formats.jsliteral import JsModule
from servewise.recipes.validate import Checker, short

MATCH_FIELDS = ("hw", "variant", "quant", "strategy", "nodes")
"""The fields of a cell's ``match``, in the order of recipe ids."""


def cell_key(match: Mapping[str, Any]) -> tuple[str, ...]:
    """The key of a cell (and of its benchmark entry): its match fields in order."""
    return tuple(str(match.get(name)) for name in MATCH_FIELDS)


def is_number(value: Any) -> bool:
    """Whether ``value`` is a number ≥ 0 (not a bool)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and value >= 0


def accuracy_of(value: Any) -> dict[str, float]:
    """The numeric scores of an ``accuracy`` object (``null`` ones left out)."""
    if not isinstance(value, Mapping):
        return {}
    return {str(k): float(v) for k, v in value.items() if is_number(v)}


def entry_accuracy(entry: Mapping[str, Any]) -> dict[str, float]:
    """The accuracy of a benchmark entry: its ``accuracy`` object, else the ``*_pct`` scores
    written beside ``match`` (as some pages do: ``{match: …, gsm8k_pct: 95.75}``)."""
    return accuracy_of(entry.get("accuracy")) or accuracy_of(
        {key: value for key, value in entry.items() if key.endswith("_pct")})


@dataclass(frozen=True)
class Bench:
    """The checked benchmark entries of one file, by cell key, and how it counts tokens."""

    entries: dict[tuple[str, ...], Mapping[str, Any]]
    output_only: bool | None
    """Whether ``tokens_per_sec_per_gpu`` counts output tokens only (None: cannot tell)."""
    url: str


def check_benchmarks(module: JsModule, check: Checker) -> dict[tuple[str, ...],
                                                                Mapping[str, Any]]:
    """The entries of a benchmarks module by cell key; every problem recorded in ``check``
    (a value that is not a literal, a wrong type)."""
    for shape in module.unknown_under("benchmarks"):
        check.problem(shape.path, f"not a literal ({shape.kind})", found=shape.text)
    entries = module.export("benchmarks")
    if not isinstance(entries, list):
        check.problem("benchmarks", "must be an exported list of entries",
                      found=type(entries).__name__)
        return {}
    found: dict[tuple[str, ...], Mapping[str, Any]] = {}
    for index, entry in enumerate(entries):
        where = f"benchmarks[{index}]"
        data = check.mapping(entry, where)
        match = check.mapping(data.get("match"), f"{where}.match") if data else None
        if data is None or match is None:
            continue
        if data.get("speed") is not None and not isinstance(data["speed"], list):
            check.problem(f"{where}.speed", "must be a list of rows",
                          found=type(data["speed"]).__name__)
            continue
        for number, row in enumerate(data.get("speed") or ()):
            at = f"{where}.speed[{number}]"
            row_data = check.mapping(row, at)
            workload = check.mapping(row_data.get("workload"), f"{at}.workload") \
                if row_data else None
            if row_data is None or workload is None:
                continue
            for key in ("isl", "osl", "max_concurrency"):
                if key in workload and not is_number(workload[key]):
                    check.problem(f"{at}.workload.{key}", "must be a number ≥ 0",
                                  found=short(workload[key]))
            for key in ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms", "tokens_per_sec_per_gpu"):
                if row_data.get(key) is not None and not is_number(row_data[key]):
                    check.problem(f"{at}.{key}", "must be a number ≥ 0",
                                  found=short(row_data[key]))
        found[cell_key(match)] = data
    return found


def output_only(entries: Mapping[tuple[str, ...], Mapping[str, Any]],
                gpus: Mapping[tuple[str, ...], int]) -> bool | None:
    """Whether the file's tokens/s/GPU matches output-only arithmetic better than input +
    output: concurrency x osl / (TTFT + osl x TPOT) / GPUs, over all its rows."""
    as_output = as_total = 0.0
    for key, entry in entries.items():
        for row in entry.get("speed") or ():
            work = row.get("workload") or {}
            try:
                seconds = row["ttft_ms"] / 1000 + work["osl"] * row["tpot_ms"] / 1000
                output = work["max_concurrency"] * work["osl"] / seconds / gpus[key]
                total = output * (work["isl"] + work["osl"]) / work["osl"]
                given = float(row["tokens_per_sec_per_gpu"])
                as_output += abs(math.log(given / output))
                as_total += abs(math.log(given / total))
            except (KeyError, TypeError, ValueError, ZeroDivisionError):
                continue
    if as_output == as_total == 0.0:
        return None
    return as_output <= as_total


def bench_run(entry: Mapping[str, Any], bench: Bench, stat: str, gpus: int,
              default_accuracy: dict[str, float]) -> dict[str, Any] | None:
    """The servewise benchmark run of a cookbook entry (None: no speed rows)."""
    rows = [row for row in entry.get("speed") or () if isinstance(row, Mapping)]
    if not rows:
        return None
    results = []
    for row in rows:
        workload = {k: v for k, v in row["workload"].items()
                    if k in ("dataset", "isl", "osl", "max_concurrency", "request_rate",
                             "num_prompts") and v is not None}
        result: dict[str, Any] = {"workload": workload, "gpus": gpus}
        for key in ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"):
            if row.get(key) is not None:
                result[key] = {stat: row[key]}
        value = row.get("tokens_per_sec_per_gpu")
        isl, osl = workload.get("isl"), workload.get("osl")
        if value is not None and bench.output_only is not None and isl and osl:
            if bench.output_only:
                result["output_tokens_per_sec_per_gpu"] = value
                result["tokens_per_sec_per_gpu"] = round(value * (isl + osl) / osl, 1)
            else:
                result["tokens_per_sec_per_gpu"] = value
                result["output_tokens_per_sec_per_gpu"] = round(value * osl / (isl + osl), 1)
        elif value is not None:
            result["tokens_per_sec_per_gpu"] = value
        results.append(result)
    if bench.output_only is None:
        derived, how = [], ("Whether tokens_per_sec_per_gpu counts output tokens only could "
                            "not be told from the rows; kept as the cookbook gives it.")
    elif bench.output_only:
        derived, how = ["tokens_per_sec_per_gpu"], (
            "The cookbook's tokens_per_sec_per_gpu matches output-only arithmetic here; "
            "tokens_per_sec_per_gpu is derived as output * (isl + osl) / osl.")
    else:
        derived, how = ["output_tokens_per_sec_per_gpu"], (
            "The cookbook's tokens_per_sec_per_gpu matches input + output arithmetic here; "
            "output_tokens_per_sec_per_gpu is derived as total * osl / (isl + osl).")
    run: dict[str, Any] = {"source": bench.url, "derived": derived,
                           "notes": " ".join(filter(None, [
                               f"TTFT and TPOT as {stat}.", how,
                               str(entry.get("notes") or "")]))}
    if entry.get("sglang_version"):
        run["engine_version"] = str(entry["sglang_version"])
    accuracy = entry_accuracy(entry) or default_accuracy
    if accuracy:
        run["accuracy"] = accuracy
    run["results"] = results
    return run


__all__ = ["MATCH_FIELDS", "Bench", "accuracy_of", "bench_run", "cell_key", "check_benchmarks",
           "entry_accuracy", "is_number", "output_only"]
