"""Tables for ``servewise search`` and the launch rows of ``servewise runs`` (rich)."""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

__all__ = ["run_view", "runs_table", "search_table"]


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def search_table(document: dict[str, Any]) -> Table:
    """One row per attempt: value, verdict, time to ready, the engine's figure, the cause."""
    table = Table(title=f"search --param {document['param']}: best "
                  f"{_cell(document.get('best'))} in {document.get('launches')} launches",
                  title_justify="left")
    for column in ("#", "value", "verdict", "outcome", "ready s", "engine hint", "KV tokens",
                   "cause"):
        table.add_column(column)
    for index, attempt in enumerate(document.get("attempts", []), start=1):
        cause = attempt.get("root_cause") or {}
        numbers = attempt.get("kv_numbers") or {}
        table.add_row(str(index), _cell(attempt.get("value")), attempt.get("verdict", ""),
                      attempt.get("outcome", ""), _cell(attempt.get("time_to_ready_s")),
                      _cell(attempt.get("engine_hint")),
                      _cell(numbers.get("kv_cache_tokens")),
                      Text(str(cause.get("category") or "-")))
    return table


def runs_table(rows: list[dict[str, Any]]) -> Table:
    """Launches and searches, newest first."""
    table = Table(title="launches and searches in the store", title_justify="left")
    for column in ("run id", "kind", "outcome", "result", "command"):
        table.add_column(column)
    for row in rows:
        if row["kind"] == "search":
            result = f"best {row.get('param')}={_cell(row.get('best'))} " \
                     f"({row.get('launches')} launches)"
        else:
            ready = row.get("time_to_ready_s")
            result = f"ready in {ready:.1f} s" if ready is not None else "-"
            if row.get("stopped"):
                result += f", {row['stopped']}"
        table.add_row(Text(str(row["run_id"])), row["kind"], _cell(row.get("outcome")),
                      Text(result), Text(row.get("command", "")[:120]))
    return table


def run_view(document: dict[str, Any]) -> Group | Table:
    """One launch (its fields) or one search (its attempts)."""
    if "attempts" in document and "param" in document:
        return search_table(document)
    table = Table(title=f"launch {document.get('run_id')}", title_justify="left",
                  show_header=False)
    table.add_column("field")
    table.add_column("value")
    cause = document.get("root_cause") or {}
    for key in ("outcome", "message", "stage", "time_to_ready_s", "exit_code", "stopped",
                "log_path"):
        table.add_row(key, Text(_cell(document.get(key))))
    if cause:
        table.add_row("root cause", Text(f"{cause.get('summary')} [{cause.get('category')}]"))
        table.add_row("library", Text(_cell(cause.get("library"))))
    for key, value in (document.get("kv_numbers") or {}).items():
        table.add_row(key, _cell(value))
    table.add_row("command", Text(" ".join(document.get("argv") or [])))
    return table
