"""``servewise bench ... --sla LIMITS``: the SLA search's part of the bench command.

Each run of the search is stored as a bench run as soon as it ends (so an interrupted search
keeps its runs); stdout gets one table with a row per run, or with ``--json`` the document of
:meth:`servewise.bench.sla.SlaResult.document` (``sla.best``, ``sla.runs``).
"""

from __future__ import annotations

import json
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import typer

from servewise.cli._common import emit_json, out, say
from servewise.errors import StoreError, UsageError

if TYPE_CHECKING:
    from collections.abc import Callable

    from servewise.bench.load import LevelProgress
    from servewise.bench.run import BenchConfig, BenchResult
    from servewise.bench.sla import LoadProbe, SlaResult

__all__ = ["run_sla", "sla_options"]


def sla_options(concurrency: str | None, rate: str | None, sla_max: float | None,
                sla_step: float | None, sla_runs: int) -> Any:
    """The search's :class:`~servewise.bench.sla.SlaOptions` from the bench options."""
    from servewise.bench.sla import SlaOptions

    if concurrency is not None and rate is not None:
        raise UsageError("give --concurrency or --rate, not both",
                         hint="with --sla, --concurrency N (or --rate R) is where the search "
                         "starts")
    text = rate if rate is not None else (concurrency or "1")
    if "," in text:
        raise UsageError(f"with --sla, --{'rate' if rate else 'concurrency'} is the start of "
                         f"the search: one number, found {text!r}",
                         hint="e.g. --sla \"ttft_p99<=500ms\" --concurrency 1 --sla-max 256")
    try:
        start = float(text)
    except ValueError:
        start = 0.0
    if not start > 0 or (rate is not None and start == float("inf")):
        raise UsageError(f"the SLA search starts at a positive finite number, found {text!r}",
                         hint="e.g. --concurrency 1 or --rate 0.5")
    if rate is None:
        return SlaOptions("concurrency", start=float(int(start)), maximum=sla_max or 4096.0,
                          step=sla_step, max_runs=sla_runs)
    return SlaOptions("rate", start=start, maximum=sla_max or 1000.0,
                      minimum=min(start, 0.01), step=sla_step, max_runs=sla_runs)


def run_sla(config: BenchConfig, text: str, concurrency: str | None, rate: str | None,
            burstiness: float, sla_max: float | None, sla_step: float | None, sla_runs: int,
            *, as_json: bool, store: bool, output: Path | None, plot: Path | None,
            display: Callable[[], AbstractContextManager[Callable[[LevelProgress], None]]]
            ) -> NoReturn:
    """Run the search, store each run, print the answer, exit (0 found, 1 not, 130 Ctrl-C)."""
    from servewise.bench.sla import parse_sla, run_sla_search

    limits = parse_sla(text)
    options = sla_options(concurrency, rate, sla_max, sla_step, sla_runs)
    keep = _keeper() if store else None

    def on_run(run: BenchResult, probe: LoadProbe) -> None:
        if keep is not None:
            keep(run)
        verdict = "meets" if probe.meets else "misses: " + "; ".join(probe.violations)
        say("sla", "dim", f"{options.kind} {probe.value:g}: {verdict} ({run.run_id})")

    with display() as progress:
        result = run_sla_search(config, limits, options, burstiness=burstiness,
                                progress=progress, on_run=on_run)
    document = result.document()
    late = _write(result, document, output, plot)
    if as_json:
        emit_json(document)
    else:
        from servewise.render.bench import bench_table

        if document.get("results"):
            out().print(bench_table(document))
        best = result.best
        say("best" if best is not None else result.status,
            "bold green" if best is not None else "bold red",
            (f"{options.kind} {best.value:g} ({best.run_id}); " if best else "")
            + result.message + f" — {len(result.probes)} runs")
    raise typer.Exit(result.exit_status or (1 if late else 0))


def _keeper() -> Callable[[BenchResult], None]:
    from servewise.bench.run import save_run
    from servewise.store import Store

    warned = False

    def keep(run: BenchResult) -> None:
        nonlocal warned
        try:
            with Store() as store:
                save_run(store, run)
        except StoreError as error:
            if not warned:
                warned = True
                say("warning", "yellow", f"{error.message}; runs are not stored")

    return keep


def _write(result: SlaResult, document: dict[str, Any], output: Path | None,
           plot: Path | None) -> bool:
    """``--output`` and ``--plot`` of the whole search; True when one failed."""
    from servewise.errors import ServewiseError

    failed = False
    if output is not None:
        try:
            from servewise.formats.redact import redact_data

            output.write_text(json.dumps(redact_data(document), indent=2) + "\n")
        except OSError as error:
            failed = True
            say("error", "red", f"cannot write {output}: {error}")
    if plot is not None and document.get("results"):
        from servewise.bench.plot import write_plot

        order = sorted(range(len(result.runs)), key=lambda i: result.probes[i].value)
        records = [{"level": rank, **record.to_dict(level.origin)}
                   for rank, index in enumerate(order)
                   for level in result.runs[index].levels for record in level.records]
        try:
            write_plot(document, records, plot)
        except ServewiseError as error:
            failed = True
            say("error", "red", error.message)
    return failed
