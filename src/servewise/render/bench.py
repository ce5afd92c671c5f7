"""Human tables for ``servewise bench`` and ``servewise runs`` (rich). Only the CLI imports this."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text

from servewise.bench.load import short_label


def _ms(distribution: dict[str, float] | None, key: str) -> str:
    return "-" if not distribution else f"{distribution[key]:.1f}"


def _pair(distribution: dict[str, float] | None) -> str:
    return f"{_ms(distribution, 'p50')} / {_ms(distribution, 'p99')}"


def _number(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def bench_table(document: dict[str, Any]) -> Table:
    """One row per load level: counts, throughput, latency p50 / p99, goodput."""
    first = document["results"][0]["workload"] if document["results"] else {}
    shape = (f"isl {first.get('isl')} / osl {first.get('osl')}" if first.get("isl")
             else str(first.get("dataset", "")))
    table = Table(title=f"{document['model']} at {document['url']} — {shape} "
                        f"({document['run_id']})", title_justify="left")
    server = document.get("server") or {}
    if server:
        extras = [f"usage {server.get('usage') or 'none'}",
                  f"/tokenize {'yes' if server.get('tokenize') else 'no'}"]
        if server.get("reasoning"):
            extras.append("reasoning counted as output")
        table.caption = (f"server: {server.get('dialect')} ({', '.join(extras)}); "
                         f"{document.get('stopped') or ''}").rstrip("; ")
        table.caption_justify = "left"
    for column in ("load", "ok/failed", "req/s", "out tok/s", "in+out tok/s/GPU",
                   "TTFT ms p50/p99",
                   "TPOT ms p50/p99", "ITL ms p50/p99", "E2E ms p50/p99", "goodput"):
        table.add_column(column, justify="left" if column == "load" else "right")
    for entry in document["results"]:
        goodput = entry.get("goodput")
        failed = Text(str(entry["failed"]), style="bold red" if entry["failed"] else "")
        table.add_row(
            short_label(entry["workload"]),
            Text.assemble(str(entry["completed"]), "/", failed),
            _number(entry["request_throughput_per_s"], 2),
            _number(entry["output_tokens_per_s"]),
            _number(entry["tokens_per_sec_per_gpu"]),
            _pair(entry["ttft_ms"]),
            _pair(entry["tpot_ms"]),
            _pair(entry["itl_ms"]),
            _pair(entry["e2e_ms"]),
            "-" if not goodput else f"{_number(goodput['request_goodput_per_s'], 2)}/s "
            f"({100 * (goodput['slo_attainment'] or 0):.0f}%)",
        )
    return table


def runs_table(documents: list[dict[str, Any]]) -> Table:
    """One row per stored run."""
    table = Table(title="benchmark runs in the store", title_justify="left")
    for column in ("run id", "created", "model", "url", "workload", "levels", "best out tok/s"):
        table.add_column(column)
    for document in documents:
        results = document.get("results", [])
        first = results[0]["workload"] if results else {}
        workload = (f"{first.get('dataset')} {first.get('isl')}/{first.get('osl')}"
                    if first else "-")
        best = max((e["output_tokens_per_s"] or 0 for e in results), default=0)
        table.add_row(Text(document["run_id"]), document.get("created_at", ""),
                      Text(document.get("model", "")), Text(document.get("url", "")),
                      Text(workload), ", ".join(short_label(e["workload"]) for e in results),
                      f"{best:,.1f}")
    return table
