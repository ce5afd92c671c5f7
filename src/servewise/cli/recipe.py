"""``servewise recipe list|show|match|render|import``: the recipe database on the command line.

Exit codes: 0 fine; 1 nothing found (no recipe matches, an empty list); 2 bad input (an
unknown id or GPU, a broken recipe file or import).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from servewise.cli._common import app, emit_json, out, say
from servewise.cli.options import GpuOption, JsonOption, OptionalGpuOption, gpu_spec

if TYPE_CHECKING:
    from servewise.recipes import Recipe, RecipeBook, RecipeMatch

recipe_app = typer.Typer(
    no_args_is_help=True,
    help="Launch recipes that worked: list, show, match to your GPUs, render as a command "
    "(vllm, docker, sglang, Kubernetes), import vLLM's recipe database. Exit 1 when nothing "
    "matches, 2 for bad input.",
)
app.add_typer(recipe_app, name="recipe")

EngineOption = Annotated[str | None, typer.Option(
    "--engine", help="vllm or sglang.", show_default=False)]


def _book() -> RecipeBook:
    from servewise.recipes import load_recipes

    return load_recipes()


def _row(recipe: Recipe) -> list[str]:
    m = recipe.match
    layout = f"{m.gpus}x{m.hw}" + (f" x{m.nodes} nodes" if m.nodes > 1 else "")
    status = recipe.status + (" (derived)" if recipe.derived else "")
    return [recipe.id, status, recipe.engine, layout, m.quant or "-", m.strategy or "-",
            recipe.min_version or "-", recipe.origin]


def _table(recipes: list[Recipe], title: str) -> None:
    from rich.table import Table
    from rich.text import Text

    table = Table(title=title, title_justify="left")
    for column in ("id", "status", "engine", "GPUs", "quant", "strategy", "min version",
                   "origin"):
        table.add_column(column)
    for recipe in recipes:
        table.add_row(*(Text(cell) for cell in _row(recipe)))
    out().print(table)


@recipe_app.command("list")
def list_recipes(
    model: Annotated[str | None, typer.Option("--model", help="Any name of the model.",
                                              show_default=False)] = None,
    engine: EngineOption = None,
    gpu: OptionalGpuOption = None,
    status: Annotated[str | None, typer.Option(
        "--status", help="verified, in-progress, estimated or unsupported.",
        show_default=False)] = None,
    as_json: JsonOption = False,
) -> None:
    """Every recipe (shipped and in $SERVEWISE_DATA_DIR/recipes/), filtered."""
    found = _book().filter(model=model, engine=engine, hw=gpu, status=status)
    if as_json:
        emit_json({"recipes": [recipe.to_dict() for recipe in found], "count": len(found)})
    else:
        _table(found, f"{len(found)} recipe(s)")
    if not found:
        raise typer.Exit(1)


@recipe_app.command("save")
def save(
    run_id: Annotated[str, typer.Argument(metavar="RUN_ID", help="A launch that became ready.",
                                          show_default=False)],
    bench: Annotated[list[str] | None, typer.Option(
        "--bench", metavar="RUN_ID", show_default=False,
        help="A benchmark run against it (repeatable).")] = None,
    gpu: OptionalGpuOption = None,
    model: Annotated[str | None, typer.Option("--model", metavar="ID", show_default=False,
                                              help="The model's Hugging Face id.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Save a ready launch as a verified recipe in your recipe folder (check then prefers it)."""
    from servewise.cli.evidence import save_recipe

    save_recipe(run_id, bench or [], gpu, model, as_json)


@recipe_app.command("show")
def show(
    ident: Annotated[str, typer.Argument(metavar="ID", help="A recipe id (see `recipe list`).",
                                         show_default=False)],
    as_json: JsonOption = False,
) -> None:
    """One recipe: match, image, flags, environment, provenance and benchmarks."""
    recipe = _book().require(ident)
    from servewise.recipes.save import read_evidence

    evidence = read_evidence(recipe)
    if as_json:
        emit_json({**recipe.to_dict(), **({"evidence": evidence} if evidence else {})})
        return
    _show(recipe)
    if evidence:
        from servewise.render.evidence import evidence_view

        out().print(evidence_view({"evidence": evidence, "prediction": evidence.get(
            "prediction")}))


def _show(recipe: Recipe) -> None:
    from rich.text import Text

    from servewise.recipes import render

    console = out()
    m = recipe.match
    lines = [
        ("recipe", recipe.id), ("status", recipe.status), ("model", m.model),
        ("checkpoint", recipe.checkpoint), ("variant / quant", f"{m.variant or '-'} / "
                                                              f"{m.quant or '-'}"),
        ("GPUs", f"{m.gpus} x {m.hw} per node, {m.nodes} node(s)"),
        ("strategy", m.strategy or "-"),
        ("engine", f"{recipe.engine} ≥ {recipe.min_version}" if recipe.min_version
         else recipe.engine),
        ("image", (recipe.image or "none named")
         + ("" if recipe.image_pinned or recipe.image is None else "  (not pinned)")),
        ("source", recipe.provenance.source), ("who", recipe.provenance.who),
        ("engine version", recipe.provenance.engine_version or "-"),
        ("date", recipe.provenance.date or "-"), ("file", recipe.file),
    ]
    for label, value in lines:
        console.print(Text.assemble((f"{label:>16}: ", "bold"), value), highlight=False)
    if recipe.provenance.notes:
        console.print(Text(f"\n{recipe.provenance.notes}"), highlight=False)
    console.print(Text("\n" + render(recipe, recipe.engine).shell), highlight=False)
    for run in recipe.benchmarks:
        console.print(Text(f"benchmark ({run.engine_version or '?'}; {run.source})",
                           style="bold"), highlight=False)
        for result in run.results:
            workload = result.get("workload", {})
            console.print(Text(
                f"  isl {workload.get('isl')} osl {workload.get('osl')} "
                f"conc {workload.get('max_concurrency', workload.get('request_rate'))}: "
                f"TTFT {_stat(result.get('ttft_ms'))} ms, TPOT {_stat(result.get('tpot_ms'))} ms, "
                f"{result.get('tokens_per_sec_per_gpu', '-')} tok/s/GPU (in+out), "
                f"{result.get('output_tokens_per_sec_per_gpu', '-')} out tok/s/GPU"),
                highlight=False)


def _stat(value: object) -> str:
    if isinstance(value, dict) and value:
        key = "p50" if "p50" in value else next(iter(value))
        return f"{value[key]} ({key})"
    return "-"


@recipe_app.command("match")
def match(
    model: Annotated[str, typer.Argument(help="The model: a Hugging Face id, its name or a "
                                         "local folder.", show_default=False)],
    gpu: GpuOption,
    engine: EngineOption = None,
    quant: Annotated[str | None, typer.Option("--quant", show_default=False,
                                              help="fp8, fp4, nvfp4, bf16, …")] = None,
    variant: Annotated[str | None, typer.Option("--variant", show_default=False,
                                                help="The recipe's variant.")] = None,
    strategy: Annotated[str | None, typer.Option("--strategy", show_default=False,
                                                 help="low-latency, balanced, tp, …")] = None,
    nodes: Annotated[int, typer.Option("--nodes", min=1, help="Nodes.")] = 1,
    as_json: JsonOption = False,
) -> None:
    """The recipes that fit this model on these GPUs, best first, with the reasons."""
    book = _book()
    spec = gpu_spec(gpu)
    options = {"model": model, "hw": spec, "engine": engine, "quant": quant,
               "variant": variant, "strategy": strategy, "nodes": nodes}
    found = book.match(**options)  # type: ignore[arg-type]
    misses = [] if found else book.near_misses(**options)  # type: ignore[arg-type]
    if as_json:
        emit_json({"model": model, "gpu": gpu, "matches": [item.to_dict() for item in found],
                   "near_misses": [{"id": recipe.id, "status": recipe.status, "why": why}
                                   for recipe, why in misses]})
    elif found:
        _matches(found)
    if not found:
        if not as_json:
            say("none", "yellow", f"no recipe fits {model} on {gpu}")
            for recipe, why in misses[:10]:
                say("near", "dim", f"{recipe.id} ({recipe.status}): {why}")
        raise typer.Exit(1)


def _matches(found: list[RecipeMatch]) -> None:
    from rich.table import Table
    from rich.text import Text

    table = Table(title=f"{len(found)} matching recipe(s), best first", title_justify="left")
    for column in ("#", "id", "why"):
        table.add_column(column)
    for rank, item in enumerate(found, 1):
        table.add_row(str(rank), Text(item.recipe.id), Text(item.reason))
    out().print(table)


@recipe_app.command("render")
def render_command(
    ident: Annotated[str, typer.Argument(metavar="ID", help="A recipe id.", show_default=False)],
    format: Annotated[str, typer.Option(
        "--format", help="vllm, sglang, docker or k8s (a LeaderWorkerSet manifest).")] = "",
    port: Annotated[int | None, typer.Option("--port", show_default=False,
                                             help="Serve on this port.")] = None,
    host: Annotated[str | None, typer.Option("--host", show_default=False,
                                             help="Listen on this address.")] = None,
    image: Annotated[str | None, typer.Option("--image", show_default=False,
                                              help="Use this image (docker, k8s).")] = None,
    model_dir: Annotated[str | None, typer.Option(
        "--model-dir", show_default=False,
        help="A local folder of the weights (docker mounts it read-only at /model).")] = None,
    multinode: Annotated[str | None, typer.Option(
        "--multinode", show_default=False,
        help="Several vLLM nodes: mp (vLLM's --nnodes/--node-rank), ray, or dp "
             "(data-parallel ranks per node); default: the recipe's own, else mp.")] = None,
    namespace: Annotated[str | None, typer.Option("--namespace", show_default=False,
                                                  help="k8s: the namespace.")] = None,
    as_json: JsonOption = False,
) -> None:
    """A recipe as a command to run: argv and shell text (or a Kubernetes manifest)."""
    from servewise.recipes import render

    recipe = _book().require(ident)
    rendered = render(recipe, format or recipe.engine, port=port, host=host, image=image,
                      model_dir=model_dir, multinode=multinode, namespace=namespace)
    if as_json:
        emit_json({"recipe": recipe.id, "status": recipe.status,
                   "command": {"argv": rendered.argv, "shell": rendered.shell},
                   **rendered.to_dict()})
        return
    typer.echo(rendered.shell, nl=False)
    if recipe.status != "verified":
        say("note", "yellow", f"this recipe is {recipe.status}, not verified")


@recipe_app.command("import")
def import_command(
    path: Annotated[Path, typer.Argument(
        help="A clone of vllm-project/recipes or of sgl-project/sglang (its cookbook), or a "
             "file of one.", show_default=False)],
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Check and count; write nothing.")]
        = False,
    strict: Annotated[bool, typer.Option(
        "--strict", help="All or nothing: any refused file imports nothing (for CI).")] = False,
    as_json: JsonOption = False,
) -> None:
    """Import vLLM's recipe database or SGLang's cookbook into $SERVEWISE_DATA_DIR/recipes/.

    A folder with docs_new/src/snippets/configs is read as SGLang's cookbook, anything else
    as vLLM's recipe database. Every model file is imported, skipped as out of scope (with
    why) or refused as broken (every problem by file and field); the rest is imported all the
    same. Exit 1 when a file was refused, 0 otherwise.
    """
    from servewise.recipes.sglang_import import find_configs, import_sglang_cookbook
    from servewise.recipes.vllm_import import import_vllm_recipes

    importer = import_sglang_cookbook if find_configs(path) is not None else import_vllm_recipes
    report = importer(path, dry_run=dry_run, strict=strict)
    if as_json:
        emit_json(report.to_dict())
        raise typer.Exit(report.exit_code)
    verb = "would write" if dry_run else "wrote"
    total = sum(report.recipes.values())
    counts = report.counts()
    typer.echo(f"read {len(report.files_read)} file(s): {counts.get('imported', 0)} model(s) "
               f"imported, {counts.get('out of scope', 0)} out of scope, "
               f"{counts.get('refused', 0)} refused; {verb} {total} recipe(s) in "
               f"{len(report.written)} file(s) under {user_recipe_folder()}")
    for item in report.skipped:
        if item.what == "model":
            typer.echo(f"  out of scope: {item.file}: {item.why}")
    if report.skipped:
        reasons: dict[str, int] = {}
        for item in report.skipped:
            if item.what != "model":
                reasons[item.why] = reasons.get(item.why, 0) + 1
        typer.echo("combinations not offered:")
        for why, count in sorted(reasons.items(), key=lambda pair: -pair[1]):
            typer.echo(f"  {count} x {why}")
    for problem in report.problems:
        say("refused", "red", str(problem))
    raise typer.Exit(report.exit_code)


def user_recipe_folder() -> str:
    """The user's recipe folder, for messages."""
    from servewise.recipes import user_recipe_dir

    return str(user_recipe_dir())
