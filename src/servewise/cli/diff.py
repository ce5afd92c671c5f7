"""The ``diff`` command: what changed between two engine builds, library by library."""

from __future__ import annotations

from typing import Annotated

import typer

from servewise.cli._common import app, emit_json, out
from servewise.cli.build import _catalog_gpu, _warn_notes, scan_all
from servewise.cli.options import (
    IndexUrlOption,
    InsecureOption,
    JsonOption,
    NoCacheOption,
    OptionalGpuOption,
    PlatformOption,
    TimeoutOption,
    source_options,
)

BuildArgument = Annotated[str, typer.Argument(
    help="An engine build: anything `servewise inspect` reads (a .so/.cubin file, a folder or "
    "virtual environment, a .whl file or URL, pypi:NAME==VERSION, an image, a docker save "
    "tarball, an OCI layout folder).", show_default=False)]


@app.command("diff")
def diff(
    a: BuildArgument,
    b: BuildArgument,
    gpu: OptionalGpuOption = None,
    everything: Annotated[bool, typer.Option(
        "--all", help="Also list the libraries that did not change.")] = False,
    platform: PlatformOption = None,
    insecure: InsecureOption = False,
    index_url: IndexUrlOption = None,
    timeout: TimeoutOption = None,
    as_json: JsonOption = False,
    no_cache: NoCacheOption = False,
) -> None:
    """What changed between builds A and B. Exit 0 when their GPU coverage is the same, else 1.

    With --gpu, exit 1 only when the gate's verdict for that GPU changed.
    """
    from servewise.inspect.diff import diff_builds

    device = _catalog_gpu(gpu) if gpu is not None else None
    report_a, report_b = scan_all([a, b], no_cache, as_json,
                                  source_options(platform, insecure, index_url, timeout))
    result = diff_builds(report_a, report_b, gpu=device)
    if as_json:
        emit_json(result.to_dict())
    else:
        from servewise.render.builds import diff_header, diff_summary, diff_table

        _warn_notes(report_a)
        _warn_notes(report_b)
        out().print(diff_header(result), highlight=False)
        table = diff_table(result, everything=everything)
        if table is not None:
            out().print(table)
        out().print(diff_summary(result), highlight=False)
    raise typer.Exit(result.exit_code)
