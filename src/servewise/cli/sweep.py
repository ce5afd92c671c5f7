"""``servewise sweep``: configurations x workloads, each launched, benchmarked and stopped.

stdout carries the results (Markdown tables, or ``--json``); stderr the progress. Exit
codes: 0 every cell ran, 1 a configuration or cell failed (the others ran), 2 bad usage,
130 interrupted (run the same command again to resume).
"""

from __future__ import annotations

import contextlib
import signal
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from servewise.cli._common import app, emit_json, open_store, say
from servewise.cli.options import GraceOption, JsonOption
from servewise.errors import ServewiseError, StoreError, UsageError

if TYPE_CHECKING:
    from servewise.bench.run import BenchResult
    from servewise.store import Store
    from servewise.sweep import SweepEvent

_STYLES = {"failed": "bold red", "cell_failed": "red", "ready": "green", "skip": "dim",
           "stopped": "dim", "cell": "cyan", "launch": "bold", "check": "dim"}


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM ends the sweep as Ctrl-C does (the engine stopped, the state kept)."""
    def handler(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _echo(name: str, line: str) -> None:
    sys.stderr.write(f"[{name}] {line}\n")


def _event(event: SweepEvent) -> None:
    where = event.configuration + (f" · {event.workload}" if event.workload else "")
    say(event.kind, _STYLES.get(event.kind, "dim"), f"{where}: {event.message}")


def _store_callbacks(store: Store | None) -> tuple[Any, Any]:
    from servewise.bench.run import save_run
    from servewise.launch.records import store_recorder

    record = store_recorder(store, lambda text: say("warning", "yellow", text))
    warned: list[str] = []

    def keep_run(result: BenchResult) -> None:
        if store is None:
            return
        try:
            save_run(store, result)
        except StoreError as error:
            if not warned:
                warned.append(error.message)
                say("warning", "yellow", f"{error.message}; runs are not stored")

    return keep_run, lambda document: record("launch", document, None)


@app.command()
def sweep(
    plan_file: Annotated[Path | None, typer.Argument(
        metavar="[PLAN.yaml]", show_default=False,
        help="The plan: configurations and workloads (see docs/sweep.md).")] = None,
    config: Annotated[list[str] | None, typer.Option(
        "--config", metavar="NAME=COMMAND", show_default=False,
        help="A configuration: a command line with {port}, or a recipe id (repeatable).")
    ] = None,
    isl: Annotated[int | None, typer.Option("--isl", min=1, help="Input tokens per request "
                                            "(with --config).")] = None,
    osl: Annotated[int | None, typer.Option("--osl", min=1, help="Output tokens per request "
                                            "(with --config).")] = None,
    concurrency: Annotated[str | None, typer.Option(
        "--concurrency", help="Load levels, e.g. 1,8,64 (with --config).")] = None,
    rate: Annotated[str | None, typer.Option("--rate", help="Request rates instead of "
                                             "concurrency (with --config).")] = None,
    num_prompts: Annotated[int | None, typer.Option(
        "--num-prompts", min=1, help="Measured requests per level (with --config).")] = None,
    sla: Annotated[str | None, typer.Option(
        "--sla", help="Search the largest load meeting these limits in each cell instead, "
        "e.g. \"ttft_p99<=500ms\" (with --config).")] = None,
    model: Annotated[str | None, typer.Option(
        "--model", help="The served model name (default: what /v1/models lists first).")
    ] = None,
    gpus: Annotated[int | None, typer.Option(
        "--gpus", min=1, help="GPUs per configuration (default: TP x PP x DP of the "
        "command).")] = None,
    timeout: Annotated[float, typer.Option(
        "--timeout", min=1.0, help="Seconds for each engine's start-up (with --config; a "
        "plan says timeout:).")] = 900.0,
    bench_timeout: Annotated[float | None, typer.Option(
        "--bench-timeout", min=1.0, help="One deadline for each cell's benchmark, in "
        "seconds (default: none).")] = None,
    grace: GraceOption = None,
    state: Annotated[Path | None, typer.Option(
        "--state", help="The state file (default: PLAN.sweep.json beside the plan, or one "
        "in the store's folder).")] = None,
    fresh: Annotated[bool, typer.Option("--fresh", help="Forget the finished cells and "
                                        "start over.")] = False,
    retry_failed: Annotated[bool, typer.Option(
        "--retry-failed", help="Run failed configurations and cells again on resume.")
    ] = False,
    no_check: Annotated[bool, typer.Option(
        "--no-check", help="Skip `servewise check` of configurations that name a GPU.")
    ] = False,
    verbose: Annotated[bool, typer.Option("--verbose", help="Echo every engine log line "
                                          "to stderr.")] = False,
    markdown_file: Annotated[Path | None, typer.Option(
        "--markdown", help="Also write the tables as Markdown to this file.")] = None,
    plot: Annotated[Path | None, typer.Option(
        "--plot", help="Draw tokens/s per GPU against tokens/s per user (.png, .svg, "
        ".pdf).")] = None,
    ray: Annotated[str | None, typer.Option(
        "--ray", metavar="ADDRESS", help="Run each configuration as a Ray task on this "
        "cluster (needs servewise[ray]).")] = None,
    ray_resource: Annotated[str, typer.Option(
        "--ray-resource", help="The Ray resource a configuration reserves one of per GPU: "
        "GPU, CPU (a CPU cluster standing in), or a custom resource name.")] = "GPU",
    k8s: Annotated[Path | None, typer.Option(
        "--k8s", metavar="FILE", help="Render the plan as Kubernetes Jobs (YAML, '-' for "
        "stdout) from the recipes' LeaderWorkerSet pieces instead of running it.")] = None,
    image: Annotated[str | None, typer.Option(
        "--image", help="With --k8s: the engine image (default: the recipe's).")] = None,
    bench_image: Annotated[str, typer.Option(
        "--bench-image", help="With --k8s: an image with servewise installed, for the "
        "benchmark container.")] = "servewise:latest",
    namespace: Annotated[str | None, typer.Option(
        "--namespace", help="With --k8s: the Jobs' namespace.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Launch, benchmark and stop each configuration for each workload; the recipe tables.

    Resumable: the same command again skips the finished cells (the state file). A
    configuration that fails is diagnosed and recorded; the sweep goes on.
    """
    from servewise.store import default_path
    from servewise.sweep import (
        LocalSink,
        SweepOptions,
        SweepState,
        default_state_path,
        load_plan,
        plan_from_flags,
        run_sweep,
    )
    from servewise.sweep.results import check_plot_path, markdown, sweep_document

    if plan_file is not None:
        given = [flag for flag, value in (("--config", config), ("--isl", isl),
                                          ("--osl", osl), ("--concurrency", concurrency),
                                          ("--rate", rate), ("--sla", sla),
                                          ("--num-prompts", num_prompts),
                                          ("--model", model), ("--gpus", gpus)) if value]
        if given:
            raise UsageError(f"give a plan file or {', '.join(given)}, not both",
                             hint="put the configurations and workloads in the plan "
                             "(model: and gpus: apply to every configuration)")
        plan = load_plan(plan_file)
    else:
        plan = plan_from_flags(config or [], isl, osl, concurrency, rate,
                               num_prompts=num_prompts, sla=sla, model=model, gpus=gpus,
                               timeout_s=timeout)
    if k8s is not None:
        _render_k8s(plan, k8s, image, bench_image, namespace, as_json)
    if plot is not None:
        check_plot_path(plot)
    if markdown_file is not None:
        from servewise.bench.plot import check_target

        check_target(markdown_file, "--markdown")
    store = open_store(False, "runs are not recorded")
    store_dir = (store.path if store is not None else default_path()).parent
    path = state or default_state_path(plan.source, plan.key, store_dir)
    sweep_state = SweepState.open(path, plan.to_dict(), fresh=fresh)
    keep_run, keep_launch = _store_callbacks(store)
    options = SweepOptions(log_dir=store_dir / "launches", check=not no_check,
                           retry_failed=retry_failed, bench_timeout_s=bench_timeout)
    if grace is not None:
        options = replace(options, grace_s=grace)
    from servewise.cli.bench import _Display

    say("sweep", "bold", f"{len(plan.configurations)} configuration(s) x "
        f"{len(plan.workloads)} workload(s); state {sweep_state.path}")
    status = "done"
    try:
        with _Display() as display, _sigterm_as_interrupt():
            sink = LocalSink(sweep_state, on_event=_event, on_line=_echo if verbose else None,
                             on_progress=display, store_run=keep_run, store_launch=keep_launch)
            try:
                if ray is not None:
                    from servewise.sweep.ray_exec import run_sweep_on_ray

                    run_sweep_on_ray(ray, plan, sweep_state, options, sink,
                                     resource=ray_resource)
                else:
                    run_sweep(plan, sweep_state, options, sink)
            except KeyboardInterrupt:
                status = "interrupted"
                say("interrupted", "bold red", "the finished cells are kept; run the same "
                    "command again to resume")
    finally:  # an error of the sweep is rendered by the CLI's boundary, the store closed
        if store is not None:
            store.close()
    document = sweep_document(plan, sweep_state, status)
    text = markdown(document)
    late = _write_files(document, text, markdown_file, plot)
    if as_json:
        emit_json(document)
    else:
        sys.stdout.write(text + "\n")
    failed = any(t["status"] not in ("done", "pending") or t["failed_cells"]
                 for t in document["configurations"])
    raise typer.Exit(130 if status == "interrupted" else 1 if failed or late else 0)


def _render_k8s(plan: Any, target: Path, image: str | None, bench_image: str,
                namespace: str | None, as_json: bool) -> None:
    """``--k8s FILE``: write the Jobs (nothing runs) and exit (1 when one was skipped)."""
    import yaml

    from servewise.sweep.k8s import render_jobs

    jobs, skipped = render_jobs(plan, image=image, bench_image=bench_image,
                                namespace=namespace)
    text = yaml.safe_dump_all(jobs, sort_keys=False, width=100) if jobs else ""
    if str(target) == "-":
        if not as_json:
            sys.stdout.write(text)
    else:
        try:
            target.write_text(text, "utf-8")
        except OSError as error:
            raise UsageError(f"cannot write {target}: {error}", path=str(target),
                             hint="give --k8s a writable file, or - for stdout") from None
    for item in skipped:
        say("skipped", "yellow", f"{item['configuration']}: {item['why']}")
    if as_json:
        emit_json({"jobs": jobs, "skipped": skipped})
    elif str(target) != "-":
        say("wrote", "dim", f"{len(jobs)} Job(s) to {target}")
    raise typer.Exit(1 if skipped else 0)


def _write_files(document: dict[str, Any], text: str, markdown_file: Path | None,
                 plot: Path | None) -> bool:
    failed = False
    if markdown_file is not None:
        try:
            markdown_file.write_text(text + "\n", "utf-8")
        except OSError as error:
            failed = True
            say("error", "red", f"cannot write {markdown_file}: {error}")
    if plot is not None:
        from servewise.sweep.results import write_pareto_plot

        try:
            write_pareto_plot(document, plot)
        except ServewiseError as error:
            failed = True
            say("error", "red", error.message)
    return failed
