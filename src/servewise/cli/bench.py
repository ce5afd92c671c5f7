"""Commands that measure a server: ``bench`` (run a benchmark) and ``runs`` (stored runs)."""

from __future__ import annotations

import json
import math
import sys
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

from servewise.cli._common import app, emit_json, err, out, say
from servewise.cli.options import JsonOption
from servewise.errors import ServewiseError, StoreError, UsageError

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

    from servewise.bench.load import LevelProgress, LoadLevel
    from servewise.bench.run import BenchResult


def parse_levels(concurrency: str | None, rate: str | None,
                 burstiness: float) -> tuple[LoadLevel, ...]:
    """``--concurrency 1,8,64`` or ``--rate 2,4.5,inf`` as load levels."""
    from servewise.bench.load import LoadLevel

    if (concurrency is None) == (rate is None):
        raise UsageError("give exactly one of --concurrency and --rate",
                         hint="e.g. --concurrency 1,8,64 or --rate 2,8")
    if burstiness <= 0:
        raise UsageError(f"--burstiness must be above 0, found {burstiness:g}",
                         hint="1 is a Poisson process; below 1 burstier, above 1 smoother")
    text = concurrency if concurrency is not None else rate
    assert text is not None
    kind: Literal["concurrency", "rate"] = "concurrency" if concurrency is not None else "rate"
    levels = []
    for item in text.split(","):
        try:
            value = float(item) if kind == "rate" else float(int(item))
        except ValueError:
            value = math.nan
        if not value > 0:
            example = "1,8,64" if kind == "concurrency" else "2,4.5,inf"
            raise UsageError(f"--{kind} takes positive numbers separated by commas, found "
                             f"{item.strip()!r}", hint=f"e.g. --{kind} {example}")
        levels.append(LoadLevel(kind, value, burstiness))
    return tuple(levels)


def parse_slos(items: list[str]) -> dict[str, float]:
    """``--slo ttft:500 --slo tpot:50`` as ``{"ttft": 500.0, "tpot": 50.0}`` (ms)."""
    from servewise.bench.metrics import SLO_KEYS

    slos: dict[str, float] = {}
    for item in items:
        key, _, value = item.partition(":")
        try:
            limit = float(value)
        except ValueError:
            limit = -1.0
        if key not in SLO_KEYS or not limit > 0:
            raise UsageError(f"--slo takes KEY:MILLISECONDS with KEY one of "
                             f"{', '.join(SLO_KEYS)}, found {item!r}",
                             hint="e.g. --slo ttft:500 --slo tpot:50")
        slos[key] = limit
    return slos


def _extra_body(text: str | None) -> dict[str, Any]:
    if text is None:
        return {}
    try:
        found = json.loads(text)
    except ValueError as error:
        raise UsageError(f"--extra-body is not JSON: {error}",
                         hint='e.g. --extra-body \'{"top_k": 1}\'') from None
    if not isinstance(found, dict):
        raise UsageError("--extra-body must be a JSON object",
                         hint='e.g. --extra-body \'{"top_k": 1}\'')
    return found


class _Display(AbstractContextManager["_Display"]):
    """A live progress bar on stderr (a terminal), else one line per finished phase."""

    def __init__(self) -> None:
        self._live = sys.stderr.isatty()
        self._bar: Progress | None = None
        self._tasks: dict[tuple[str, str], TaskID] = {}
        self._printed: set[tuple[str, str]] = set()

    def __enter__(self) -> _Display:
        if self._live:
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

            self._bar = Progress(TextColumn("{task.description}"), BarColumn(),
                                 TextColumn("{task.completed}/{task.fields[planned]}"),
                                 TextColumn("{task.fields[detail]}"), TimeElapsedColumn(),
                                 console=err(), transient=False)
            self._bar.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)

    def __call__(self, step: LevelProgress) -> None:
        key = (step.label, step.phase)
        finished = step.total is not None and step.done >= step.total > 0
        if self._bar is None:
            if step.label == "server" and key not in self._printed:
                self._printed.add(key)  # a wait that may be long: say what is waited for
                say("wait", "dim", step.phase)
            if finished and key not in self._printed:
                self._printed.add(key)
                say("done", "dim", f"{step.label} {step.phase}: {step.done} requests, "
                    f"{step.failed} failed, {step.elapsed_s:.1f} s")
            return
        rate = step.output_tokens / step.elapsed_s if step.elapsed_s > 0 else 0.0
        detail = (f"in flight {step.in_flight}  failed {step.failed}  {rate:,.0f} tok/s"
                  if step.phase in ("warmup", "measure") else "")
        planned = "?" if step.total is None else str(step.total)
        if step.duration_s is not None:
            planned = f"{step.duration_s:g} s"
        task = self._tasks.get(key)
        if task is None:
            task = self._bar.add_task(f"{step.label} · {step.phase}", total=step.total,
                                      planned=planned, detail=detail)
            self._tasks[key] = task
        self._bar.update(task, completed=step.done, detail=detail, planned=planned)


@app.command()
def bench(
    url: Annotated[str, typer.Argument(help="The server: http://HOST:PORT (or its /v1, or a "
                                            "full /v1/completions URL).", show_default=False)],
    model: Annotated[str, typer.Option("--model", help="The served model name.",
                                       show_default=False)],
    isl: Annotated[int | None, typer.Option("--isl", help="Input tokens per request "
                                            "(random prompts).", min=1)] = None,
    osl: Annotated[int | None, typer.Option("--osl", help="Output tokens per request (with a "
                                            "--dataset: for lines without max_tokens).",
                                            min=1)] = None,
    dataset: Annotated[Path | None, typer.Option("--dataset", help="A JSON Lines prompt file: "
                                                 '{"prompt": ...} or {"messages": [...]}, '
                                                 "optional max_tokens.")] = None,
    concurrency: Annotated[str | None, typer.Option("--concurrency", help="Requests in "
                                                    "flight, one level or a sweep: 1,8,64.")
                           ] = None,
    rate: Annotated[str | None, typer.Option("--rate", help="Requests per second, one or a "
                                             "sweep: 2,4.5,inf.")] = None,
    num_prompts: Annotated[int | None, typer.Option("--num-prompts", help="Measured requests "
                                                    "per level (default 5 per concurrency "
                                                    "slot, or 30 s of arrivals; at least 10).",
                                                    min=1)] = None,
    duration: Annotated[float | None, typer.Option("--duration", help="Seconds per level to "
                                                   "start requests in (instead of "
                                                   "--num-prompts).", min=0.001)] = None,
    gpus: Annotated[int | None, typer.Option("--gpus", help="GPUs serving the model, for "
                                             "tokens/s per GPU.", min=1)] = None,
    tokenizer: Annotated[Path | None, typer.Option("--tokenizer", help="A local tokenizer.json "
                                                   "(or a folder with one); default: the "
                                                   "server's /tokenize.")] = None,
    as_json: JsonOption = False,
    output: Annotated[Path | None, typer.Option("--output", help="Also write the JSON to this "
                                                "file.")] = None,
    plot: Annotated[Path | None, typer.Option("--plot", help="Draw latency/throughput and "
                                              "TTFT/ITL distributions (.png, .svg, .pdf).")
                    ] = None,
    endpoint: Annotated[str | None, typer.Option("--endpoint", help="completions or chat "
                                                 "(default: from the URL, else completions).")
                        ] = None,
    range_ratio: Annotated[float, typer.Option("--range-ratio", help="Draw lengths uniformly "
                                               "from [L(1-r), L(1+r)] (vLLM's convention).",
                                               min=0.0, max=1.0)] = 0.0,
    prefix_len: Annotated[int, typer.Option("--prefix-len", help="Tokens of shared prefix at "
                                            "the start of every prompt (part of --isl).",
                                            min=0)] = 0,
    num_prefixes: Annotated[int, typer.Option("--num-prefixes", help="Distinct shared "
                                              "prefixes, used in turn.", min=1)] = 1,
    burstiness: Annotated[float, typer.Option("--burstiness", help="Gamma shape of the gaps "
                                              "between arrivals with --rate (1: Poisson).")
                          ] = 1.0,
    warmup: Annotated[int | None, typer.Option("--warmup", help="Warm-up requests per level, "
                                               "not measured (default one per concurrency "
                                               "slot, or one second of arrivals).", min=0)
                      ] = None,
    slo: Annotated[list[str] | None, typer.Option("--slo", help="A latency goal for goodput, "
                                                  "KEY:MS with KEY ttft, tpot or e2e. "
                                                  "Repeatable.")] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Seed for prompts and arrivals "
                                             "(default: random, recorded in the JSON).")
                    ] = None,
    ignore_eos: Annotated[bool, typer.Option("--ignore-eos/--no-ignore-eos", help="Ask the "
                                             "server to ignore end-of-sequence tokens.")
                          ] = True,
    min_tokens: Annotated[bool, typer.Option("--min-tokens/--no-min-tokens", help="Send "
                                             "min_tokens equal to max_tokens.")] = True,
    continuous_usage: Annotated[bool, typer.Option(
        "--continuous-usage/--no-continuous-usage", help="Ask for usage in every chunk "
        "(stream_options.continuous_usage_stats) to count tokens per chunk.")] = True,
    token_ids: Annotated[bool, typer.Option("--token-ids", help="Ask for token ids in every "
                                            "chunk (vLLM's return_token_ids).")] = False,
    temperature: Annotated[float | None, typer.Option("--temperature", help="Sampling "
                                                      "temperature (default: the server's).")
                           ] = None,
    extra_body: Annotated[str | None, typer.Option("--extra-body", help="JSON object merged "
                                                   "into every request body.")] = None,
    connect_timeout: Annotated[float, typer.Option("--connect-timeout", help="Seconds to make "
                                                   "a connection.", min=0.001)] = 10.0,
    read_timeout: Annotated[float, typer.Option("--read-timeout", help="Longest silence "
                                                "allowed while waiting for headers or the "
                                                "next chunk, in seconds.", min=0.001)] = 600.0,
    server_metrics: Annotated[bool, typer.Option("--server-metrics", help="Scrape the "
                                                 "engine's Prometheus /metrics (vLLM, SGLang) "
                                                 "around each level and report its own TTFT, "
                                                 "ITL, E2E and token counts beside the "
                                                 "client's.")] = False,
    timeout: Annotated[float | None, typer.Option("--timeout", help="One deadline for the "
                                                  "whole command, in seconds: levels still "
                                                  "running then are stopped, finished ones "
                                                  "kept (default: none).", min=0.001)] = None,
    api_key: Annotated[str | None, typer.Option("--api-key", envvar="OPENAI_API_KEY",
                                                help="Bearer token for the server.",
                                                show_default=False)] = None,
    no_store: Annotated[bool, typer.Option("--no-store", help="Do not keep the run in the "
                                           "store.")] = False,
    sla: Annotated[str | None, typer.Option("--sla", help="Find the largest concurrency (or "
                                            "--rate) meeting these limits, e.g. "
                                            "\"ttft_p99<=500ms,tpot_p99<=40ms\"; "
                                            "--concurrency/--rate give the start.")] = None,
    sla_max: Annotated[float | None, typer.Option("--sla-max", help="The largest load the "
                                                  "SLA search tries (default 4096 requests, "
                                                  "1000/s).", min=0.001)] = None,
    sla_step: Annotated[float | None, typer.Option("--sla-step", help="The SLA answer's "
                                                   "resolution (default 1 request, 5 % of a "
                                                   "rate).", min=0.001)] = None,
    sla_runs: Annotated[int, typer.Option("--sla-runs", help="The most benchmark runs of an "
                                          "SLA search.", min=2, max=64)] = 8,
) -> None:
    """Stream load at an OpenAI-compatible server: TTFT, TPOT, ITL, latency, throughput, goodput."""
    from servewise.bench.plot import check_plot, check_target
    from servewise.bench.run import BenchConfig, run_bench
    from servewise.bench.workload import WorkloadSpec

    # Checked before the first request: a bad path must not cost a finished run.
    if output is not None:
        check_target(output, "--output")
    if plot is not None:
        check_plot(plot)
    if (dataset is None) == (isl is None) or (isl is not None and osl is None):
        raise UsageError("give --isl N --osl N (random prompts) or --dataset FILE",
                         hint="e.g. --isl 1024 --osl 128")
    if num_prompts is not None and duration is not None:
        raise UsageError("give --num-prompts or --duration, not both",
                         hint="--num-prompts counts requests; --duration counts seconds")
    if endpoint not in (None, "completions", "chat"):
        raise UsageError(f"--endpoint is completions or chat, found {endpoint!r}",
                         hint="--endpoint chat sends /v1/chat/completions")
    config = BenchConfig(
        url=url, model=model,
        workload=WorkloadSpec(isl=isl, osl=osl, dataset=dataset, range_ratio=range_ratio,
                              prefix_len=prefix_len, num_prefixes=num_prefixes),
        levels=parse_levels(concurrency, rate, burstiness) if sla is None else (),
        endpoint=endpoint,  # type: ignore[arg-type]
        num_prompts=num_prompts, duration_s=duration, warmup=warmup, gpus=gpus,
        tokenizer=tokenizer, slos_ms=parse_slos(slo or []), seed=seed,
        ignore_eos=ignore_eos, min_tokens=min_tokens, continuous_usage=continuous_usage,
        token_ids=token_ids, temperature=temperature, extra_body=_extra_body(extra_body),
        connect_timeout_s=connect_timeout, read_timeout_s=read_timeout, api_key=api_key,
        timeout_s=timeout, server_metrics=server_metrics,
    )
    if sla is not None:
        from servewise.cli.bench_sla import run_sla

        run_sla(config, sla, concurrency, rate, burstiness, sla_max, sla_step, sla_runs,
                as_json=as_json, store=not no_store, output=output, plot=plot,
                display=_Display)
    with _Display() as display:
        result = run_bench(config, progress=display)
    # The run is finished: keep it first, whatever fails after.
    stored = _store_run(result) if not no_store else False
    late = _write_files(result, output, plot, stored, as_json)
    if result.document.get("stopped"):
        say("warning", "yellow", result.document["stopped"])
    if as_json:
        emit_json(result.document)
    else:
        from servewise.render.bench import bench_table

        out().print(bench_table(result.document))
    failed = sum(entry["failed"] for entry in result.document["results"])
    if failed:
        say("warning", "yellow", f"{failed} request(s) failed; see errors in the JSON")
    raise typer.Exit(1 if failed or late or result.document.get("stopped") else 0)


def _rescue(result: BenchResult) -> str:
    """Where the finished run still is when ``--output`` failed: the store, a file in the
    cache folder, or (neither writable) the JSON printed on stdout."""
    from servewise.folders import cache_folder
    from servewise.formats.redact import redact_data

    path = cache_folder() / "runs" / f"{result.run_id}.json"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(redact_data(result.document), indent=2) + "\n")
    except OSError:
        emit_json(result.document)
        return "the run's JSON is printed on stdout instead (it is not stored: --no-store)"
    return f"the run is saved to {path} instead (it is not stored: --no-store)"


def _write_files(result: BenchResult, output: Path | None, plot: Path | None,
                 stored: bool = True, as_json: bool = False) -> bool:
    """Write ``--output`` and ``--plot``; say what failed and where the run still is (the
    store, else a file in the cache folder: a finished run is never lost)."""
    from servewise.formats.redact import redact_data

    failed = False
    if output is not None:
        try:
            output.write_text(json.dumps(redact_data(result.document), indent=2) + "\n")
        except OSError as error:
            failed = True
            kept = (f"the run is kept (servewise runs {result.run_id} --json)" if stored
                    else _rescue(result) if not as_json
                    else "the run's JSON is printed on stdout (it is not stored: --no-store)")
            say("error", "red", f"cannot write {output}: {error}; {kept}")
    if plot is not None:
        from servewise.bench.plot import write_plot

        records = [{"level": index, **record.to_dict(level.origin)}
                   for index, level in enumerate(result.levels) for record in level.records]
        try:
            write_plot(result.document, records, plot)
        except ServewiseError as error:
            failed = True
            kept = (f"the run is kept (servewise runs {result.run_id} --plot FILE draws it "
                    "again)" if stored else "the run is not stored (--no-store)")
            say("error", "red", f"{error.message}; {kept}")
    return failed


def _store_run(result: BenchResult) -> bool:
    """Keep the run in the store; whether it was kept."""
    from servewise.bench.run import save_run
    from servewise.store import Store

    try:
        with Store() as store:
            save_run(store, result)
        say("saved", "dim", f"run {result.run_id} (servewise runs {result.run_id})")
        return True
    except StoreError as error:
        say("warning", "yellow", f"{error.message}; the run was not stored")
        return False


@app.command()
def runs(
    run_id: Annotated[str | None, typer.Argument(help="Show this run (default: list runs).",
                                                 show_default=False)] = None,
    requests: Annotated[bool, typer.Option("--requests", help="With a run id and --json: add "
                                           "the raw per-request records.")] = False,
    limit: Annotated[int, typer.Option("--limit", help="Runs to list, newest first.",
                                       min=1)] = 50,
    plot: Annotated[Path | None, typer.Option("--plot", help="With a run id: draw its plots "
                                              "again into this file.")] = None,
    as_json: JsonOption = False,
) -> None:
    """The benchmark runs kept in the local store: a list, or one run's results."""
    from servewise.store import Store

    with Store() as store:
        if run_id is None:
            documents = store.bench_runs(limit)
            from servewise.cli import launch as launches  # launch/search rows
            if as_json:
                emit_json([{key: d.get(key) for key in ("run_id", "created_at", "url",
                                                         "model", "endpoint")}
                           | {"levels": len(d.get("results", []))} for d in documents]
                          + launches.runs_listing(store, limit))
                return
            from servewise.render.bench import runs_table

            out().print(runs_table(documents))
            launches.print_runs(store, limit)
            return
        document = store.bench_run(run_id)
        if document is None:
            from servewise.cli import launch as launches  # a launch or a search id
            if launches.show_run(store, run_id, as_json):
                return
            raise UsageError(f"no benchmark run {run_id!r} in the store",
                             hint="`servewise runs` lists the stored runs")
        records = store.bench_requests(run_id) if (requests or plot) else []
    if plot is not None:
        from servewise.bench.plot import write_plot

        write_plot(document, records, plot)
    if as_json:
        emit_json({**document, "requests": records} if requests else document)
        return
    from servewise.render.bench import bench_table

    out().print(bench_table(document))
