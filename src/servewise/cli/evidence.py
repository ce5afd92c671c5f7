"""The evidence trail on the command line: ``plan accuracy``, ``report``, ``recipe save``.

``servewise plan accuracy`` shares its first word with ``servewise plan MODEL``: the plan
command is given a class that hands ``plan accuracy ...`` to the command defined here, so the
planner's own command stays as it is. ``recipe save`` is registered in ``cli/recipe.py`` and
calls :func:`save_recipe` here. Exit codes: 0 fine, 1 nothing to compare, 2 bad input.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
import typer.core
import typer.main

from servewise.cli._common import app, emit_json, out, say
from servewise.cli.options import JsonOption, OptionalGpuOption
from servewise.errors import UsageError

__all__ = ["accuracy", "report", "save_recipe"]

accuracy_app = typer.Typer(add_completion=False, rich_markup_mode=None)


@accuracy_app.command()
def accuracy(
    logs: Annotated[Path | None, typer.Option(
        "--logs", metavar="DIR", show_default=False,
        help="Also read the saved engine logs (*.log, *.txt) of this folder.")] = None,
    gpu: OptionalGpuOption = None,
    export: Annotated[Path | None, typer.Option(
        "--export", metavar="FILE", show_default=False,
        help="Write every compared start-up as a calibration record (JSON lines) that the "
        "planner's corpus test reads (SERVEWISE_PLAN_CORPUS=FILE).")] = None,
    limit: Annotated[int, typer.Option("--limit", min=1,
                                       help="Stored launches to read, newest first.")] = 1000,
    as_json: JsonOption = False,
) -> None:
    """The planner's error on your own start-ups, by model family and engine version.

    Reads the launches in the store that kept a prediction (launch --gpu, --from-check, or a
    fixed CPU KV pool) and, with --logs, saved engine logs planned for --gpu. Exit 1 when
    nothing could be compared.
    """
    from servewise.launch.accuracy import (
        accuracy_report,
        corpus_record,
        launch_samples,
        log_samples,
    )
    from servewise.store import Store

    with Store() as store:
        samples, skipped = launch_samples(store, limit)
    if logs is not None:
        if not logs.is_dir():
            raise UsageError(f"--logs {logs}: not a folder", found=str(logs),
                             hint="give the folder that holds the saved engine logs")
        more, left = log_samples(logs, gpu)
        samples, skipped = samples + more, skipped + left
    document = accuracy_report(samples, skipped)
    if export is not None:
        lines = [json.dumps(corpus_record(sample), sort_keys=True) for sample in samples]
        try:
            export.write_text("".join(line + "\n" for line in lines), "utf-8")
        except OSError as error:
            raise UsageError(f"cannot write {export}: {error.strerror or error}",
                             found=str(export)) from None
        document["exported"] = {"file": str(export), "records": len(lines)}
    if as_json:
        emit_json(document)
    else:
        from servewise.render.evidence import accuracy_table

        out().print(accuracy_table(document))
        for line in document["not_compared"][:20]:
            say("not compared", "dim", line)
        if export is not None:
            say("exported", "dim", f"{len(samples)} records to {export}")
    raise typer.Exit(0 if samples else 1)


_ACCURACY = typer.main.get_command(accuracy_app)


class _PlanWithAccuracy(typer.core.TyperCommand):
    """``servewise plan``, which hands ``plan accuracy ...`` to :func:`accuracy`."""

    def make_context(self, info_name: str | None, args: list[str],
                     parent: Any = None, **extra: Any) -> Any:
        if args[:1] == ["accuracy"]:
            return _ACCURACY.make_context("plan accuracy", list(args[1:]), parent=parent,
                                          **extra)
        return super().make_context(info_name, args, parent=parent, **extra)


from servewise.cli import plan as _plan_command  # noqa: E402,F401 - registers `plan` first

for _info in app.registered_commands:
    if _info.name is None and _info.callback is not None and \
            _info.callback.__name__ == "plan":
        _info.cls = _PlanWithAccuracy
        _info.epilog = _info.epilog or ("servewise plan accuracy [--logs DIR] [--export FILE]: "
                                        "the planner's error on your own start-ups.")


@app.command()
def report(
    run_id: Annotated[str, typer.Argument(help="A launch or search id (`servewise runs` "
                                          "lists them).", show_default=False)],
    format: Annotated[str, typer.Option(
        "--format", help="markdown or html.")] = "markdown",
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", metavar="FILE", show_default=False,
        help="Write the page to FILE instead of stdout.")] = None,
    bench: Annotated[list[str] | None, typer.Option(
        "--bench", metavar="RUN_ID", show_default=False,
        help="A benchmark run against this launch (repeatable; default: the stored runs "
        "sent to the launch's port after it started).")] = None,
    as_json: JsonOption = False,
) -> None:
    """The whole trail of one launch in one page: check's answer, predicted against
    observed, the search attempts, the benchmarks with their plots (embedded), and the
    recipe saved from it.
    """
    from servewise.render.report import gather, render_report
    from servewise.store import Store

    if format not in ("markdown", "html"):
        raise UsageError(f"--format {format!r}: expected markdown or html", found=format,
                         hint="give --format markdown or --format html")
    with Store() as store:
        trail = gather(store, run_id, bench or None)
    page = render_report(trail, format)
    if output is not None:
        try:
            output.write_text(page, "utf-8")
        except OSError as error:
            raise UsageError(f"cannot write {output}: {error.strerror or error}",
                             found=str(output), hint="give --output a writable path"
                             ) from None
    if as_json:
        emit_json({"run_id": run_id, "format": format,
                   "output": str(output) if output else None,
                   "plots": sorted(trail["plots"]),
                   "trail": {k: v for k, v in trail.items() if k != "plots"},
                   **({} if output else {"page": page})})
    elif output is None:
        sys.stdout.write(page)
    else:
        say("report", "dim", f"{output} ({len(trail['plots'])} plot(s) embedded)")


def _nvml() -> dict[str, str]:
    """The driver and GPU name from ``nvidia-smi`` (NVML's tool), or nothing."""
    import shutil
    import subprocess

    tool = shutil.which("nvidia-smi")
    if tool is None:
        return {}
    try:
        done = subprocess.run([tool, "--query-gpu=name,driver_version",
                               "--format=csv,noheader"], capture_output=True, text=True,
                              timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return {}
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    if done.returncode != 0 or not lines:
        return {}
    name, _, driver = lines[0].partition(",")
    return {"gpu_name": name.strip(), "driver": driver.strip(), "gpus_seen": str(len(lines))}


def save_recipe(run_id: str, benches: list[str], gpu: str | None, model: str | None,
                as_json: bool) -> None:
    """``servewise recipe save``: see :func:`servewise.recipes.save.recipe_from_run`."""
    import getpass

    from servewise.knowledge.flags import from_argv
    from servewise.knowledge.gpus import split_gpu_count
    from servewise.launch.command import engine_args
    from servewise.recipes.save import recipe_from_run, write_recipe
    from servewise.store import Store

    with Store() as store:
        launch = store.launch(run_id)
        if launch is None:
            raise UsageError(f"no launch {run_id!r} in the store", found=run_id,
                             hint="`servewise runs` lists launches and their ids")
        documents = []
        for ident in benches:
            found = store.bench_run(ident)
            if found is None:
                raise UsageError(f"no benchmark run {ident!r} in the store", found=ident,
                                 hint="`servewise runs` lists the benchmark runs")
            documents.append(found)
    engine = launch.get("engine")
    args = engine_args(launch.get("argv") or [], engine)
    device = _nvml()
    count = None
    name = gpu
    if name is None and device.get("gpu_name"):
        name = device["gpu_name"]
    if name is None:
        name = launch.get("gpu") or ((launch.get("prediction") or {}).get("gpu") or {}).get(
            "gpu_id")
    if name is not None and ":" in name:
        name, count = split_gpu_count(name)
    if count is None:
        read = from_argv(engine or "vllm", args)
        count = (read.tensor_parallel_size or 1) * (read.pipeline_parallel_size or 1)
    saved = recipe_from_run(launch, engine_args=args, benches=documents, gpu=name,
                            gpu_count=count, model=model, who=getpass.getuser(),
                            device=device)
    write_recipe(saved)
    if as_json:
        emit_json(saved.to_dict())
        return
    say("saved", "bold green", f"recipe {saved.recipe.id} ({saved.recipe.status})")
    say("file", "dim", str(saved.path))
    say("check", "dim", f"`servewise check {saved.recipe.match.model} --gpu "
        f"{saved.recipe.match.hw}:{saved.recipe.match.gpus}` now starts from it")
