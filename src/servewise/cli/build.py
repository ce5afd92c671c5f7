"""Commands that read engine builds: ``inspect``, ``gate`` and ``gpus``."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated

import typer

from servewise.cli._common import app, emit_json, err, open_store, out, say
from servewise.cli.options import (
    GpuOption,
    IndexUrlOption,
    InsecureOption,
    JsonOption,
    NoCacheOption,
    PlatformOption,
    RefArgument,
    TimeoutOption,
    gpu_spec,
    source_options,
)
from servewise.errors import UsageError

if TYPE_CHECKING:
    from rich.text import Text

    from servewise.inspect.gate import GateResult
    from servewise.inspect.report import BuildReport
    from servewise.inspect.scan import ScanProgress
    from servewise.knowledge.gpus import Gpu
    from servewise.sources import SourceOptions
    from servewise.store import Store

#: Exit code after Ctrl-C, as shells report a process ended by SIGINT.
INTERRUPTED = 130


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


@contextmanager
def stored(no_cache: bool) -> Iterator[Store | None]:
    """The store for one command, closed after it; Ctrl-C ends the command with exit 130."""
    store = open_store(no_cache)
    try:
        yield store
    except KeyboardInterrupt:
        # The scan's workers are gone and what they finished is in the store.
        say("error", "bold red", "interrupted; no result was reported")
        raise typer.Exit(INTERRUPTED) from None
    finally:
        if store is not None:
            store.close()


def _scan(ref: str, no_cache: bool, as_json: bool, options: SourceOptions | None = None
          ) -> BuildReport:
    return scan_all([ref], no_cache, as_json, options)[0]


def scan_all(refs: list[str], no_cache: bool, as_json: bool,
             options: SourceOptions | None = None) -> list[BuildReport]:
    """Each build scanned in turn, with one store and one progress display for all."""
    from servewise.inspect.scan import scan_build

    with stored(no_cache) as store, _progress(not as_json) as progress:
        return [scan_build(ref, store=store, progress=progress, options=options)
                for ref in refs]


def engine_field(report: BuildReport) -> dict[str, object]:
    """``{"engine": …}``: the engine version found in the build, or null."""
    from servewise.inspect.engine_version import engine_version

    engine = engine_version(report)
    return {"engine": engine.to_dict() if engine else None}


def source_summary(report: BuildReport) -> dict[str, object]:
    """What the gate's JSON carries about the source besides its verdicts."""
    return {"source_kind": report.source_kind, "metadata": report.metadata,
            **engine_field(report), "units": report.units.to_dict(),
            "scanned_bytes": report.scanned_bytes, "notes": list(report.notes)}


def _warn_notes(report: BuildReport) -> None:
    from servewise.inspect.report import summarize_notes

    for note in report.note_lines():
        say("note", "dim", note)
    warnings = [f"{library.path}: {warning}" for library in report.libraries
                for warning in library.scan.warnings]
    for warning in summarize_notes(warnings):
        say("warning", "yellow", warning)


@app.command()
def inspect(
    ref: RefArgument,
    entries: Annotated[bool, typer.Option(
        "--entries", help="Also list every compiled image: kind, arch, compression, sizes, "
        "PTX ISA, offset.")] = False,
    platform: PlatformOption = None,
    insecure: InsecureOption = False,
    index_url: IndexUrlOption = None,
    timeout: TimeoutOption = None,
    as_json: JsonOption = False,
    no_cache: NoCacheOption = False,
) -> None:
    """List every CUDA-bearing library of a build: SASS, PTX and JIT-dispatch archs, provenance."""
    report = _scan(ref, no_cache, as_json,
                   source_options(platform, insecure, index_url, timeout))
    from servewise.inspect.engine_core import scan_coverage

    coverage = scan_coverage(report)
    if coverage.reason is not None:
        say("warning", "yellow", coverage.reason)
    if as_json:
        emit_json({**report.to_dict(entries=entries), **engine_field(report),
                   **coverage.to_dict()})
        return
    from servewise.render.tables import entries_table, inspect_table, source_line

    _warn_notes(report)
    line = source_line(report)
    if line is not None:
        out().print(line, highlight=False)
    out().print(inspect_table(report))
    if entries:
        for library in report.libraries:
            if library.scan.entries:
                out().print(entries_table(library))


@app.command()
def gate(
    ref: RefArgument,
    gpu: GpuOption,
    require: Annotated[list[str] | None, typer.Option(
        "--require", help="A library that must support the GPU (known id such as deep_gemm, "
        "or a file name). Repeatable.")] = None,
    model: Annotated[str | None, typer.Option(
        "--model", help="A model whose required libraries must support the GPU "
        "(e.g. deepseek-v4).")] = None,
    strict: Annotated[bool, typer.Option("--strict", help="Any library without code for "
                                         "the GPU is an error.")] = False,
    platform: PlatformOption = None,
    insecure: InsecureOption = False,
    index_url: IndexUrlOption = None,
    timeout: TimeoutOption = None,
    as_json: JsonOption = False,
    no_cache: NoCacheOption = False,
) -> None:
    """Does each library of a build have code for this GPU? Exit 1 when a required one lacks it."""
    from servewise.inspect.gate import gate as run_gate

    device = _catalog_gpu(gpu)
    report = _scan(ref, no_cache, as_json,
                   source_options(platform, insecure, index_url, timeout))
    result = run_gate(report, device, require=tuple(require or ()), model=model,
                      strict=strict)
    if as_json:
        emit_json({**result.to_dict(), **source_summary(report)})
    else:
        from servewise.render.tables import gate_table, source_line

        _warn_notes(report)
        line = source_line(report)
        if line is not None:
            out().print(line, highlight=False)
        if result.verdicts:
            out().print(gate_table(result))
        out().print(_gate_summary(result), highlight=False)
    raise typer.Exit(result.exit_code)


def _catalog_gpu(text: str) -> Gpu:
    """The catalog GPU ``--gpu NAME[:COUNT]`` names (a kernel verdict needs its archs)."""
    spec = gpu_spec(text)
    if spec.gpu is None:  # only "cpu" gets here without a catalog entry
        raise UsageError(f"--gpu {text!r} names no GPU: the kernel gate needs a catalog GPU",
                         hint="`servewise gpus` lists the names --gpu accepts", found=text)
    spec.gpu.arch  # a GPU without CUDA (AMD) is refused before the build is read  # noqa: B018
    return spec.gpu


def _gate_summary(result: GateResult) -> Text:
    """The last line of ``gate``: PASS, or FAIL with the gaps or why there is no verdict."""
    from rich.text import Text

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

    catalog = load_gpu_catalog()
    if as_json:
        emit_json([gpu.to_dict() for gpu in catalog.all()])
        return
    from servewise.render.tables import gpus_table

    out().print(gpus_table(catalog.all()))
