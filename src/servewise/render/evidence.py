"""Predicted beside observed for ``servewise runs ID`` and ``plan accuracy`` (rich)."""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

__all__ = ["accuracy_table", "evidence_view", "figure_text", "percent"]


def figure_text(value: Any, unit: str = "") -> str:
    """A figure as the table shows it (thousands separated; ``-`` for none)."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        text = f"{value:,.4g}" if abs(value) < 1e4 else f"{value:,.0f}"
        return text + ("x" if unit == "x" else "")
    return str(value)


def percent(value: Any) -> str:
    """A relative error as ``+1.2 %``; ``-`` for none."""
    return "-" if value is None else f"{float(value) * 100:+.1f} %"


def evidence_view(document: dict[str, Any]) -> Group:
    """The table of each figure predicted, observed and the relative error, and the findings."""
    evidence = document.get("evidence") or {}
    prediction = document.get("prediction") or {}
    source = prediction.get("from") or "no prediction (give --gpu, or --from-check FILE)"
    table = Table(title=f"predicted ({source}) against observed (the engine's log)",
                  title_justify="left")
    for column, justify in (("figure", "left"), ("unit", "left"), ("predicted", "right"),
                            ("observed", "right"), ("error", "right")):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for row in evidence.get("comparison") or []:
        error = row.get("relative_error")
        style = "red" if error is not None and abs(error) > 0.05 else ""
        table.add_row(row["label"], row.get("unit", ""), figure_text(row.get("predicted")),
                      figure_text(row.get("observed")), Text(percent(error), style=style))
    parts: list[Any] = [table]
    if not evidence.get("comparison"):
        observed = evidence.get("observed") or {}
        parts.append(Text("observed: " + ", ".join(
            f"{k}={figure_text(v)}" for k, v in observed.items())))
    for finding in evidence.get("findings") or []:
        parts.append(Text.assemble(("finding: ", "bold yellow"), finding["message"]))
    return Group(*parts)


def accuracy_table(report: dict[str, Any]) -> Table:
    """``plan accuracy``: the planner's error by model family and engine version."""
    table = Table(title=f"planner accuracy over {report.get('compared', 0)} start-ups "
                  f"({report.get('skipped', 0)} not replayable)", title_justify="left")
    for column in ("family", "engine", "version", "runs", "KV tokens mean |err|",
                   "worst", "within 5 %"):
        table.add_column(column)
    for group in report.get("groups") or []:
        table.add_row(str(group["family"]), str(group["engine"]),
                      str(group["engine_version"]), str(group["runs"]),
                      percent(group.get("mean_abs_error")).lstrip("+"),
                      percent(group.get("worst_error")), str(group.get("within_5pct")))
    return table
