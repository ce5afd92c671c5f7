"""Commands that read engine builds: ``inspect``, ``gate`` and ``gpus``."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from servewise.cli._common import JsonOption, app, emit_json, err, fail, out, say
from servewise.errors import ServewiseError, StoreError

if TYPE_CHECKING:
    from servewise.inspect.gate import GateResult
    from servewise.inspect.report import BuildReport
    from servewise.inspect.scan import ScanProgress

NoCacheOption = Annotated[
    bool, typer.Option("--no-cache", help="Scan everything afresh; do not use the store.")
]
#: Exit code after Ctrl-C, as shells report a process ended by SIGINT.
INTERRUPTED = 130

RefArgument = Annotated[
    str,
    typer.Argument(
        help="An engine build: a .so/.cubin file, a folder (site-packages or a virtual "
        "environment) or a .whl file.",
        show_default=False,
    ),
]


@contextmanager
def _progress(enabled: bool) -> Iterator[Callable[[ScanProgress], None] | None]:
    """A progress bar on stderr for long scans, only when stderr is a terminal."""
    if not enabled or not sys.stderr.isatty():
        yield None
        return
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn

    # auto_refresh=False: no background thread, so worker processes fork cleanly.
    with Progress(TextColumn("scanning"), BarColumn(), DownloadColumn(),
                  TextColumn("{task.description}"), console=err(), auto_refresh=False,
                  transient=True) as bar:
        task = bar.add_task("", total=None)

        def update(step: ScanProgress) -> None:
            bar.update(task, completed=step.done_bytes, total=step.total_bytes,
                       description=step.path)
            bar.refresh()

        yield update


def _scan(ref: str, no_cache: bool, as_json: bool) -> BuildReport:
    from servewise.inspect.scan import scan_build
    from servewise.store import Store

    store = None
    if not no_cache:
        try:
            store = Store()
        except StoreError as error:
            say("warning", "yellow", f"{error.message}; scanning without it")
    try:
        with _progress(not as_json) as progress:
            return scan_build(ref, store=store, progress=progress)
    except KeyboardInterrupt:
        # The scan's workers are gone and what they finished is in the store.
        say("error", "bold red", "interrupted; no result was reported")
        raise typer.Exit(INTERRUPTED) from None
    finally:
        if store is not None:
            store.close()


def _warn_notes(report: BuildReport) -> None:
    for note in report.notes:
        say("note", "dim", note)
    for library in report.libraries:
        for warning in library.scan.warnings:
            say("warning", "yellow", f"{library.path}: {warning}")


@app.command()
def inspect(
    ref: RefArgument,
    entries: Annotated[bool, typer.Option(
        "--entries", help="Also list every compiled image: kind, arch, compression, sizes, "
        "PTX ISA, offset.")] = False,
    as_json: JsonOption = False,
    no_cache: NoCacheOption = False,
) -> None:
    """List every CUDA-bearing library of a build: SASS, PTX and JIT-dispatch archs, provenance."""
    try:
        report = _scan(ref, no_cache, as_json)
    except ServewiseError as error:
        fail(error, as_json)
    from servewise.inspect.engine_core import build_evidence

    evidence = build_evidence(report)
    if evidence.reason is not None:
        say("warning", "yellow", evidence.reason)
    if as_json:
        emit_json({**report.to_dict(entries=entries), **evidence.to_dict()})
        return
    from servewise.render.tables import entries_table, inspect_table

    _warn_notes(report)
    out().print(inspect_table(report))
    if entries:
        for library in report.libraries:
            if library.scan.entries:
                out().print(entries_table(library))


@app.command()
def gate(
    ref: RefArgument,
    gpu: Annotated[str, typer.Option("--gpu", help="GPU name, e.g. h200, rtx-pro-6000, b200 "
                                     "(see `servewise gpus`).", show_default=False)],
    require: Annotated[list[str] | None, typer.Option(
        "--require", help="A library that must support the GPU (known id such as deep_gemm, "
        "or a file name). Repeatable.")] = None,
    model: Annotated[str | None, typer.Option(
        "--model", help="A model whose required libraries must support the GPU "
        "(e.g. deepseek-v4).")] = None,
    strict: Annotated[bool, typer.Option("--strict", help="Any library without code for "
                                         "the GPU is an error.")] = False,
    as_json: JsonOption = False,
    no_cache: NoCacheOption = False,
) -> None:
    """Does each library of a build have code for this GPU? Exit 1 when a required one lacks it."""
    from servewise.inspect.gate import gate as run_gate
    from servewise.knowledge.gpus import load_gpu_catalog

    try:
        device = load_gpu_catalog().find(gpu)
        report = _scan(ref, no_cache, as_json)
        result = run_gate(report, device, require=tuple(require or ()), model=model,
                          strict=strict)
    except ServewiseError as error:
        fail(error, as_json)
    if as_json:
        emit_json(result.to_dict())
    else:
        from servewise.render.tables import gate_table

        _warn_notes(report)
        if result.verdicts:
            out().print(gate_table(result))
        out().print(_gate_summary(result), highlight=False)
    raise typer.Exit(result.exit_code)


def _gate_summary(result: GateResult) -> Text:
    """The last line of ``gate``: PASS, or FAIL with the gaps or why there is no verdict."""
    if result.passed:
        return Text.assemble(("PASS", "green"), f": every required library supports "
                             f"{result.gpu.name} ({result.basis})")
    if result.no_verdict_reason is not None:
        return Text.assemble(("FAIL", "bold red"), f": {result.no_verdict_reason}")
    gaps = sum(v.status == "error" for v in result.verdicts) + len(result.absent)
    return Text.assemble(("FAIL", "bold red"), f": {gaps} required library gap(s)")


@app.command()
def gpus(as_json: JsonOption = False) -> None:
    """The GPU catalog: names you can pass to --gpu, compute capability, memory."""
    from servewise.knowledge.gpus import load_gpu_catalog

    try:
        catalog = load_gpu_catalog()
    except ServewiseError as error:
        fail(error, as_json)
    if as_json:
        emit_json([gpu.to_dict() for gpu in catalog.all()])
        return
    from servewise.render.tables import gpus_table

    out().print(gpus_table(catalog.all()))
