"""``servewise launch``, ``stop`` and ``search``; the launch rows of ``servewise runs``.

stdout carries data (``--json``); the engine's log goes to stderr (and to its file in the
store) unless ``--json``. Exit codes: 0 ready (search: an answer), 1 failed or not ready in
time, 2 bad usage, 130 interrupted before the engine was ready.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from servewise.cli._common import app, emit_json, err, open_store, out, say
from servewise.cli.options import GraceOption, JsonOption, OptionalGpuOption
from servewise.errors import UsageError

if TYPE_CHECKING:
    from servewise.launch.run import LaunchResult
    from servewise.store import Store

CommandArgument = Annotated[list[str] | None, typer.Argument(
    metavar="-- COMMAND...", show_default=False,
    help="The engine's command line, after `--` (vllm serve MODEL ..., python -m "
    "sglang.launch_server ...).")]
PortOption = Annotated[int | None, typer.Option(
    "--port", min=1, max=65535, show_default=False,
    help="The port to probe; added to the command as --port when it has none.")]
TimeoutOption = Annotated[float, typer.Option(
    "--timeout", min=1.0, help="Seconds for the whole start-up (one deadline).")]
EnvOption = Annotated[list[str] | None, typer.Option(
    "--env", metavar="KEY=VALUE", show_default=False,
    help="Set an environment variable for the engine (repeatable).")]


def recipe_command(recipe_id: str) -> tuple[list[str], dict[str, str]]:
    """The launch command and environment of recipe ``recipe_id`` (the recipe database)."""
    from servewise.recipes import load_recipes, render

    recipe = load_recipes().get(recipe_id)
    if recipe is None:
        raise UsageError(f"no recipe {recipe_id!r}", found=recipe_id,
                         hint="`servewise recipe list` lists the ids; `servewise recipe match "
                         "MODEL --gpu NAME:COUNT` finds one")
    rendered = render(recipe, format=recipe.engine)
    if len(rendered.commands) > 1:
        raise UsageError(f"recipe {recipe_id} runs on {len(rendered.commands)} nodes; launch "
                         "starts one local engine", found=recipe_id,
                         hint=f"`servewise recipe render {recipe_id}` prints each node's "
                         "command; launch each on its node with `servewise launch -- ...`")
    return list(rendered.argv), dict(rendered.commands[0].env)


def _env(items: list[str] | None) -> dict[str, str]:
    env = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"--env {item!r}: expected KEY=VALUE", found=item,
                             hint="write --env VLLM_CPU_KVCACHE_SPACE=4")
        env[key] = value
    return env


def _log_dir(store: Store | None) -> Path:
    from servewise.store import default_path

    return (store.path if store is not None else default_path()).parent / "launches"


def _echo_line(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def _command_from(command: list[str] | None, recipe: str | None, from_check: Path | None
                  ) -> tuple[list[str], dict[str, str]]:
    from servewise.launch.command import read_check_file

    sources = [name for name, given in (("COMMAND", bool(command)), ("--recipe", recipe),
                                        ("--from-check", from_check)) if given]
    if len(sources) != 1:
        raise UsageError(
            "give the command once: after `--`, or with --recipe ID, or --from-check FILE"
            + (f" (got {' and '.join(sources)})" if sources else ""),
            hint="servewise launch -- vllm serve MODEL --max-model-len 8192")
    if recipe is not None:
        return recipe_command(recipe)
    if from_check is not None:
        return read_check_file(from_check)
    assert command
    return list(command), {}


def _prediction(argv: list[str], env: dict[str, str], gpu: str | None,
                from_check: Path | None) -> tuple[dict[str, Any] | None, str]:
    """Check's prediction (``--from-check``) or the planner's; None and why when neither."""
    from servewise.launch.evidence import prediction_from_check, prediction_from_command

    if from_check is not None:
        import json

        document = json.loads(from_check.read_text("utf-8"))  # read_check_file checked it
        found = prediction_from_check(document, str(from_check))
        if found is not None:
            return found, "check"
    return prediction_from_command(argv, env, gpu)


def _evidence(prediction: dict[str, Any] | None, result: LaunchResult) -> dict[str, Any]:
    from servewise.launch.evidence import evidence_for, observed_facts

    return evidence_for(prediction, observed_facts(result.log_path), result.time_to_ready_s)


def _render_evidence(document: dict[str, Any]) -> None:
    from servewise.render.evidence import evidence_view

    if (document.get("evidence") or {}).get("observed"):
        err().print(evidence_view(document))


def _grace(given: float | None) -> float:
    """``--grace``, else launch's own period between SIGTERM and SIGKILL."""
    from servewise.launch.process import GRACE_SECONDS

    return GRACE_SECONDS if given is None else given


def _render_result(result: LaunchResult) -> None:
    style = "bold green" if result.ready else "bold red"
    say("ready" if result.ready else result.outcome, style, result.message)
    cause = result.root_cause()
    if cause is not None:
        say("root cause", "bold", f"{cause.summary} [{cause.category}]")
        say("library", "dim", f"{cause.library} ({cause.layer})")
        for step in cause.fix_steps[:3]:
            say("fix", "cyan", step)
    if result.numbers:
        say("kv", "dim", ", ".join(f"{k}={v}" for k, v in result.numbers.items()))
    if result.hint:
        say("hint", "dim", result.hint)
    say("log", "dim", result.log_path)


@app.command(context_settings={"allow_interspersed_args": False})
def launch(
    command: CommandArgument = None,
    port: PortOption = None,
    timeout: TimeoutOption = 900.0,
    grace: GraceOption = None,
    detach: Annotated[bool, typer.Option(
        "--detach", help="Return once ready and leave the engine running "
        "(`servewise stop RUN_ID` ends it).")] = False,
    docker: Annotated[str | None, typer.Option(
        "--docker", metavar="IMAGE", show_default=False,
        help="Run the engine in this image with `docker run` instead of locally.")] = None,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Print the command that would run (with --docker: the docker run "
        "argv) and exit.")] = False,
    recipe: Annotated[str | None, typer.Option(
        "--recipe", metavar="ID", show_default=False,
        help="Launch a recipe's command.")] = None,
    from_check: Annotated[Path | None, typer.Option(
        "--from-check", metavar="FILE", show_default=False,
        help="Launch the command of a saved `servewise check --json` result.")] = None,
    gpu: OptionalGpuOption = None,
    env: EnvOption = None,
    as_json: JsonOption = False,
) -> None:
    """Start an engine in its own process group and wait until it is ready or says why not.

    Ready = the process is alive, the port answers, /health, /v1/models (SGLang also
    /health_generate), within --timeout. A process exit or a log line the diagnose rules
    call a cause ends the wait at once with the root cause, library and fix. Without
    --detach the engine keeps serving in the foreground until Ctrl-C. The prediction (check's
    with --from-check, else the planner's for --gpu or a fixed KV pool) is kept with the run
    beside what the engine logged: `servewise runs RUN_ID` shows both.
    """
    from servewise.launch.command import docker_argv, engine_of, fill, with_port
    from servewise.launch.process import terminate_as_interrupt
    from servewise.launch.run import EngineRun, LaunchSpec, new_run_id

    argv, given_env = _command_from(command, recipe, from_check)
    environment = {**given_env, **_env(env)}
    engine = engine_of(argv)
    if port is None and "{port}" in " ".join(argv):
        from servewise.launch.readiness import free_port

        port = free_port()
    argv = fill(argv, port=port)
    argv, chosen = with_port(argv, engine, port)
    prediction, why = _prediction(argv, {**os.environ, **environment}, gpu, from_check)
    run_id = new_run_id()
    if docker is not None:
        argv = docker_argv(docker, argv, engine, chosen, name=f"servewise-{run_id}",
                           env=environment)
    if dry_run:
        planned = {"argv": argv, "engine": engine, "port": chosen}
        if as_json:
            emit_json(planned)
        else:
            from servewise.formats.redact import redact_argv
            from servewise.recipes.launches import shell_join

            sys.stdout.write(shell_join(redact_argv(argv)) + "\n")
        return
    store = open_store(False, "runs are not recorded")
    from servewise.launch.records import store_recorder

    record = store_recorder(store, lambda text: say("warning", "yellow", text))
    spec = LaunchSpec(argv=tuple(argv), engine=engine, port=chosen,
                      log_path=_log_dir(store) / f"{run_id}.log",
                      env=environment, timeout_s=timeout, detach=detach, run_id=run_id,
                      grace_s=_grace(grace))
    base = {"argv": argv, "engine": engine, "port": chosen, "detached": detach, "env": environment,
            "gpu": gpu, "docker_image": docker, "prediction": prediction,
            "prediction_note": why}
    record("launch", {**base, "run_id": run_id, "outcome": "starting"}, None)

    def started(pid: int, start_time: int | None) -> None:
        # Recorded the moment the engine exists: a launch killed before it is ready still
        # leaves a row `servewise stop` can act on.
        record("launch", {**base, "run_id": run_id, "outcome": "starting", "pid": pid,
                          "start_time": start_time}, None)

    served = None
    with terminate_as_interrupt(), EngineRun(
            spec, on_line=None if as_json else _echo_line,
            on_stage=None if as_json else lambda s: say("stage", "dim", s),
            on_started=started) as run:
        result = run.wait_ready()
        document: dict[str, Any] = {**base, **result.to_dict(), "start_time": run.start_time,
                                    "evidence": _evidence(prediction, result)}
        record("launch", document, None)
        if result.ready:
            if as_json:
                emit_json(document)
            else:
                _render_result(result)
                _render_evidence(document)
            if detach:
                if not as_json:
                    say("detached", "dim", f"run {run_id}: `servewise stop {run_id}` ends it")
                raise typer.Exit(0)
            if not as_json:
                say("serving", "dim", "Ctrl-C stops the engine")
            served = run.serve()
    final = run.result or result
    document = {**base, **final.to_dict(), "start_time": run.start_time,
                "evidence": _evidence(prediction, final)}
    if served is not None:
        document["ended"] = served
    record("launch", document, None)
    if store is not None:
        store.close()
    if served is not None:
        if not as_json:
            say("stopped", "dim", f"{served}; engine {final.stopped}")
        raise typer.Exit(0)
    if as_json:
        emit_json(document)
    else:
        _render_result(final)
        _render_evidence(document)
    raise typer.Exit(final.exit_status)


@app.command()
def stop(
    run_id: Annotated[str, typer.Argument(help="The run id `launch --detach` printed.",
                                          show_default=False)],
    grace: Annotated[float, typer.Option(
        "--grace", min=0.0, help="Seconds between SIGTERM and SIGKILL.")] = 15.0,
    as_json: JsonOption = False,
) -> None:
    """Stop a detached launch: SIGTERM to its process group, then SIGKILL after --grace."""
    from servewise.launch.records import stop_run
    from servewise.store import Store

    with Store() as store:
        document = stop_run(store, run_id, grace)
    if as_json:
        emit_json(document)
    else:
        say("stopped", "dim", f"{run_id}: {document.get('stop_message')}")


@app.command(context_settings={"allow_interspersed_args": False})
def search(
    command: CommandArgument = None,
    param: Annotated[str, typer.Option(
        "--param", help="max-model-len, gpu-memory-utilization, mem-fraction-static or "
        "max-num-seqs; the command holds {value} where it goes.")] = "max-model-len",
    minimum: Annotated[float | None, typer.Option("--min", show_default=False,
                                                  help="Smallest value to try.")] = None,
    maximum: Annotated[float | None, typer.Option("--max", show_default=False,
                                                  help="Largest value to try.")] = None,
    resolution: Annotated[float | None, typer.Option(
        "--resolution", show_default=False, help="Stop when the answer is known this "
        "closely (default 256 tokens, 1 sequence, 0.01).")] = None,
    start: Annotated[float | None, typer.Option(
        "--start", show_default=False, help="First value when the planner cannot "
        "predict one.")] = None,
    gpu: OptionalGpuOption = None,
    no_hints: Annotated[bool, typer.Option(
        "--no-hints", help="Ignore the planner and the engine's figures: plain doubling "
        "and bisection.")] = False,
    timeout: TimeoutOption = 900.0,
    grace: GraceOption = None,
    env: EnvOption = None,
    as_json: JsonOption = False,
) -> None:
    """Find the largest value of a setting with which the engine starts.

    Each attempt launches COMMAND with {value} and {port} filled in, waits for readiness
    (or the failure and its diagnosis) and stops it. The first value is the planner's
    prediction when the command names a model it can read, else --start; a failure's own
    figures (vLLM's largest length that fits) are tried next; else doubling, then bisection.
    """
    import os

    from servewise.launch.records import store_recorder
    from servewise.launch.search import SearchOptions, planner_prior, run_search, searchable

    if not command:
        raise UsageError("no command to search with",
                         hint="servewise search --param max-model-len -- vllm serve MODEL "
                         "--max-model-len {value} --port {port}")
    chosen = searchable(param)
    environment = _env(env)
    prior, why = (None, "--no-hints") if no_hints else planner_prior(
        chosen, command, {**os.environ, **environment}, gpu)
    if prior is None and not as_json:
        say("note", "dim", f"no planner prior ({why}); starting at "
            f"{start if start is not None else chosen.start:g}")
    low = minimum if minimum is not None else chosen.minimum
    high = maximum if maximum is not None else chosen.maximum
    if low > high:
        raise UsageError(f"--min {low:g} is above --max {high:g}", found=low)
    if prior is not None:
        prior = min(max(prior, low), high)
    store = open_store(False, "runs are not recorded")
    record = store_recorder(store, lambda text: say("warning", "yellow", text))
    options = SearchOptions(
        param=chosen, argv=tuple(command), log_dir=_log_dir(store), minimum=low, maximum=high,
        resolution=resolution if resolution is not None else chosen.resolution, start=start,
        prior=prior, prior_source=None if prior is None else why, env=environment,
        timeout_s=timeout, use_hints=not no_hints, gpu=gpu, grace_s=_grace(grace))

    def progress(attempt: Any) -> None:
        if not as_json:
            say("attempt", "dim", f"{param}={attempt.value:g}: {attempt.verdict} "
                f"({attempt.result.message})")

    from servewise.launch.process import terminate_as_interrupt

    with terminate_as_interrupt():
        result = run_search(options, record=record, on_attempt=progress)
    if store is not None:
        store.close()
    document = result.to_dict()
    if as_json:
        emit_json(document)
    else:
        from servewise.render.launch import search_table

        out().print(search_table(document))
        say("best" if result.best is not None else result.status,
            "bold green" if result.best is not None else "bold red", result.message)
    raise typer.Exit(result.exit_status)


# -- servewise runs: the launch rows (hooked into cli/bench.py's command) -----------------

def runs_listing(store: Store, limit: int) -> list[dict[str, Any]]:
    """Launches and searches for ``servewise runs --json`` (each with ``kind``)."""
    from servewise.launch.records import launch_rows

    return launch_rows(store, limit)


def print_runs(store: Store, limit: int) -> None:
    """The launches-and-searches table of ``servewise runs``."""
    rows = runs_listing(store, limit)
    if rows:
        from servewise.render.launch import runs_table

        out().print(runs_table(rows))


def show_run(store: Store, run_id: str, as_json: bool) -> bool:
    """Show launch or search ``run_id`` (``servewise runs ID``); False when it is neither."""
    document = store.launch(run_id)
    if document is None:
        document = store.search(run_id)
        if document is not None:
            document = {**document, "attempts": store.launches(search_id=run_id) or
                        document.get("attempts", [])}
    if document is None:
        return False
    if as_json:
        emit_json(document)
    else:
        from servewise.render.launch import run_view

        out().print(run_view(document))
        if document.get("evidence"):
            from servewise.render.evidence import evidence_view

            out().print(evidence_view(document))
    return True
