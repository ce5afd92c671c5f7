"""A sweep's results as the recipe books show them: a table per configuration.

:func:`cookbook` gives one entry per configuration in the SGLang cookbook's benchmark shape
(``{match, latencyPercentile, speed: [{workload, ttft_ms, tpot_ms,
tokens_per_sec_per_gpu}]}``, see research/bench_recipes.md §2.1), with the run ids that
back each row and, for a configuration that failed, its outcome and root cause.
:func:`markdown` renders them; :func:`pareto` and :func:`write_pareto_plot` give the
frontier of tokens/s per GPU against tokens/s per user.

Formulas: ``ttft_ms`` and ``tpot_ms`` are the P50 of the run (the cookbook's convention);
``tokens_per_sec_per_gpu`` is (input + output) tokens/s / GPUs; ``tokens_per_sec_per_user``
is 1000 / mean TPOT (ms): how fast one stream's output comes once it started.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from servewise.errors import UsageError
from servewise.knowledge.engines import serving_engines
from servewise.sweep.plan import SweepPlan
from servewise.sweep.runner import cell_key
from servewise.sweep.state import SweepState

__all__ = ["cookbook", "markdown", "pareto", "sweep_document", "write_pareto_plot"]

PERCENTILE = "p50"


def _figure(entry: dict[str, Any], key: str, stat: str = PERCENTILE) -> float | None:
    block = entry.get(key)
    value = block.get(stat) if isinstance(block, dict) else None
    return round(float(value), 2) if isinstance(value, int | float) else None


def speed_row(entry: dict[str, Any], run_id: str | None) -> dict[str, Any]:
    """One row of a configuration's ``speed`` list, from a bench result entry."""
    tpot_mean = _figure(entry, "tpot_ms", "mean")
    per_gpu = entry.get("tokens_per_sec_per_gpu")
    return {
        "workload": entry.get("workload"),
        "ttft_ms": _figure(entry, "ttft_ms"),
        "tpot_ms": _figure(entry, "tpot_ms"),
        "tokens_per_sec_per_gpu": round(per_gpu, 2) if isinstance(per_gpu, int | float)
        else None,
        "output_tokens_per_sec": round(float(entry.get("output_tokens_per_s") or 0.0), 2),
        "tokens_per_sec_per_user": round(1000.0 / tpot_mean, 2) if tpot_mean else None,
        "completed": entry.get("completed"), "failed": entry.get("failed"),
        "run_id": run_id,
    }


def cookbook(plan: SweepPlan, state: SweepState) -> list[dict[str, Any]]:
    """One entry per configuration (see the module's docstring)."""
    tables = []
    for config in plan.configurations:
        recorded = state.configuration(config.key) or {}
        speed: list[dict[str, Any]] = []
        failures: list[dict[str, Any]] = []
        for workload in plan.workloads:
            cell = state.cell(cell_key(config, workload))
            if cell is None:
                continue
            if cell.get("status") != "done":
                failures.append({"workload": workload.key, "message": cell.get("message"),
                                 "root_cause": cell.get("root_cause")})
                continue
            runs = list(cell.get("run_ids") or [])
            for index, entry in enumerate(cell.get("results") or []):
                run_id = runs[index] if len(runs) == len(cell.get("results") or []) else (
                    (cell.get("sla") or {}).get("best_run_id") or (runs[0] if runs else None))
                row = speed_row(entry, run_id)
                if cell.get("sla") is not None:
                    row["sla"] = {key: cell["sla"].get(key) for key in (
                        "limits", "best", "status", "smallest_failing")}
                speed.append(row)
        launch = recorded.get("launch") or {}
        save = None
        if recorded.get("status") == "done" and launch.get("engine") in serving_engines():
            cited = dict.fromkeys(r["run_id"] for r in speed if r["run_id"])
            save = " ".join(["servewise recipe save", str(launch.get("run_id")),
                             *(f"--bench {run}" for run in cited),
                             f"--gpu {config.check_gpu}" if config.check_gpu else "--gpu GPU"])
        tables.append({
            "match": {"configuration": config.name},
            "configuration_key": config.key,
            "command": config.to_dict()["command"] or f"recipe {config.recipe}",
            "gpus": recorded.get("gpus") or config.gpus,
            "status": recorded.get("status", "pending"),
            "message": recorded.get("message"),
            "launch": {key: launch.get(key) for key in ("run_id", "outcome",
                                                        "time_to_ready_s", "root_cause",
                                                        "log_path")} if launch else None,
            "check": recorded.get("check"),
            "recipe_save": save,
            "started_at": recorded.get("started_at"), "ended_at": recorded.get("ended_at"),
            "latencyPercentile": PERCENTILE.upper(),
            "speed": speed,
            "failed_cells": failures,
        })
    return tables


def sweep_document(plan: SweepPlan, state: SweepState, status: str) -> dict[str, Any]:
    """The ``sweep --json`` document."""
    tables = cookbook(plan, state)
    cells = state.data["cells"].values()
    return {
        "sweep_id": state.sweep_id, "status": status, "state_path": str(state.path),
        "plan": plan.to_dict(),
        "cells": {"total": len(plan.configurations) * len(plan.workloads),
                  "done": sum(1 for c in cells if c.get("status") == "done"),
                  "failed": sum(1 for c in cells if c.get("status") == "failed")},
        "configurations": tables,
        "pareto": pareto(tables),
        "formulas": {
            "ttft_ms": "P50 time to first token of the run (ms)",
            "tpot_ms": "P50 time per output token after the first (ms)",
            "tokens_per_sec_per_gpu": "(input + output tokens) / duration / GPUs",
            "tokens_per_sec_per_user": "1000 / mean TPOT (ms): one stream's output rate",
        },
    }


def pareto(tables: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows no other row beats on both tokens/s per GPU and tokens/s per user."""
    points = [(row["tokens_per_sec_per_user"], row["tokens_per_sec_per_gpu"], table, row)
              for table in tables for row in table["speed"]
              if row["tokens_per_sec_per_user"] and row["tokens_per_sec_per_gpu"]]
    frontier = []
    for user, gpu, table, row in points:
        beaten = any(u >= user and g >= gpu and (u, g) != (user, gpu)
                     for u, g, _, _ in points)
        if not beaten:
            frontier.append({"configuration": table["match"]["configuration"],
                             "workload": row["workload"], "tokens_per_sec_per_user": user,
                             "tokens_per_sec_per_gpu": gpu, "run_id": row["run_id"]})
    return sorted(frontier, key=lambda p: p["tokens_per_sec_per_user"])


def _load(workload: dict[str, Any] | None) -> str:
    if not workload:
        return "?"
    if "max_concurrency" in workload:
        return str(workload["max_concurrency"])
    return f"{workload.get('request_rate')}/s"


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:,.1f}" if isinstance(value, float) else str(value)


def markdown(document: dict[str, Any]) -> str:
    """The tables as Markdown: a section per configuration, then the Pareto frontier."""
    lines = [f"## Sweep {document['plan']['name']} ({document['sweep_id']})", ""]
    for table in document["configurations"]:
        name = table["match"]["configuration"]
        lines += [f"### {name}", "", f"`{table['command']}` — {table['gpus'] or '?'} GPU(s), "
                  f"status **{table['status']}**", ""]
        launch = table.get("launch") or {}
        if table["status"] not in ("done", "pending"):
            cause = launch.get("root_cause")
            lines.append(f"Failed: {table.get('message') or launch.get('outcome')}"
                         + (f" — root cause: {cause.get('summary')} [{cause.get('category')}]"
                            if cause else "") + (f" (log `{launch['log_path']}`)"
                                                  if launch.get("log_path") else ""))
            lines.append("")
        if table["speed"]:
            lines += ["| ISL | OSL | concurrency | TTFT P50 (ms) | TPOT P50 (ms) | "
                      "tokens/s/GPU | tokens/s/user | failed | run |",
                      "|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
            for row in table["speed"]:
                workload = row["workload"] or {}
                load = _load(workload)
                if row.get("sla"):
                    load += f" (SLA {', '.join(row['sla']['limits'])})"
                lines.append(
                    f"| {workload.get('isl')} | {workload.get('osl')} | {load} | "
                    f"{_cell(row['ttft_ms'])} | {_cell(row['tpot_ms'])} | "
                    f"{_cell(row['tokens_per_sec_per_gpu'])} | "
                    f"{_cell(row['tokens_per_sec_per_user'])} | {row['failed']} | "
                    f"`{row['run_id']}` |")
            lines.append("")
        if table.get("recipe_save"):
            lines += [f"Save as a recipe: `{table['recipe_save']}`", ""]
        for failure in table["failed_cells"]:
            lines += [f"Cell {failure['workload']} failed: {failure['message']}", ""]
    if document["pareto"]:
        lines += ["### Pareto frontier (tokens/s per GPU against tokens/s per user)", "",
                  "| configuration | concurrency | tokens/s/user | tokens/s/GPU |",
                  "|---|---:|---:|---:|"]
        lines += [f"| {p['configuration']} | {_load(p['workload'])} | "
                  f"{_cell(p['tokens_per_sec_per_user'])} | {_cell(p['tokens_per_sec_per_gpu'])}"
                  " |" for p in document["pareto"]]
        lines.append("")
    return "\n".join(lines)


def check_plot_path(path: Path) -> None:
    """Raise before the sweep when the plot cannot be written (suffix, folder, matplotlib)."""
    from servewise.bench.plot import check_plot

    check_plot(path)


def write_pareto_plot(document: dict[str, Any], path: Path) -> None:
    """Tokens/s per GPU against tokens/s per user, a series per configuration, the frontier
    drawn through the best points."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        from matplotlib import pyplot
    except ImportError:
        raise UsageError("--plot needs matplotlib, which is not installed",
                         hint="pip install 'servewise[plot]'") from None
    figure, axis = pyplot.subplots(figsize=(8, 5.5))
    for table in document["configurations"]:
        rows = [r for r in table["speed"] if r["tokens_per_sec_per_user"]
                and r["tokens_per_sec_per_gpu"]]
        if not rows:
            continue
        rows.sort(key=lambda r: r["tokens_per_sec_per_user"])
        axis.plot([r["tokens_per_sec_per_user"] for r in rows],
                  [r["tokens_per_sec_per_gpu"] for r in rows], marker="o",
                  label=table["match"]["configuration"])
        for row in rows:
            axis.annotate(_load(row["workload"]), (row["tokens_per_sec_per_user"],
                                                   row["tokens_per_sec_per_gpu"]),
                          textcoords="offset points", xytext=(4, 4), fontsize=8)
    frontier = document["pareto"]
    if frontier:
        axis.plot([p["tokens_per_sec_per_user"] for p in frontier],
                  [p["tokens_per_sec_per_gpu"] for p in frontier], linestyle="--",
                  color="black", linewidth=1, label="Pareto frontier")
    axis.set_xlabel("tokens/s per user (1000 / mean TPOT)")
    axis.set_ylabel("tokens/s per GPU (input + output)")
    axis.set_title(f"{document['plan']['name']} ({document['sweep_id']})")
    axis.grid(True, alpha=0.3)
    if axis.get_legend_handles_labels()[0]:
        axis.legend()
    else:
        axis.text(0.5, 0.5, "no finished cell to draw", ha="center", va="center",
                  transform=axis.transAxes)
    figure.tight_layout()
    try:
        figure.savefig(path)
    except OSError as error:
        raise UsageError(f"cannot write {path}: {error}", path=str(path),
                         hint="give --plot a writable path") from None
    finally:
        pyplot.close(figure)
