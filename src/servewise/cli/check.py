"""``servewise check``: will this deployment start, and the exact command to run."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from servewise.cli._common import app, emit_json
from servewise.cli.build import stored
from servewise.cli.options import (
    ComputeCapabilityOption,
    ContextLengthOption,
    GpuMemoryOption,
    GpuOption,
    IndexUrlOption,
    InsecureOption,
    JsonOption,
    NoCacheOption,
    PlatformOption,
    gpu_spec,
    source_options,
)
from servewise.errors import UsageError


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": False})
def check(
    ctx: typer.Context,
    model: Annotated[str, typer.Argument(
        help="The model: a Hub id, a bundled card id or a folder with config.json.",
        show_default=False)],
    gpu: GpuOption,
    engine: Annotated[str | None, typer.Option(
        "--engine", help="vllm or sglang (default: the best recipe's engine, else vllm).",
        show_default=False)] = None,
    engine_version: Annotated[str | None, typer.Option(
        "--engine-version", help="Engine version (default: from --build, else the recipe's).",
        show_default=False)] = None,
    build: Annotated[str | None, typer.Option(
        "--build", help="The engine build to gate: an image, a docker save tarball, a wheel, "
        "pypi:NAME==VERSION, a folder (anything `servewise gate` reads).",
        show_default=False)] = None,
    max_model_len: ContextLengthOption = None,
    strategy: Annotated[str | None, typer.Option(
        "--strategy", help="A recipe strategy (low-latency, balanced, max-throughput, tp, dep, "
        "...).", show_default=False)] = None,
    nodes: Annotated[int, typer.Option("--nodes", min=1, help="Nodes.")] = 1,
    output_format: Annotated[str | None, typer.Option(
        "--format", help="The command as vllm, sglang, docker or k8s (default: docker when an "
        "image is known, else the engine's own); markdown prints the whole report as Markdown.",
        show_default=False)] = None,
    port: Annotated[int | None, typer.Option("--port", min=1, max=65535,
                                             show_default=False)] = None,
    image: Annotated[str | None, typer.Option(
        "--image", help="The image for --format docker or k8s (default: --build when it is "
        "an image, else the recipe's).", show_default=False)] = None,
    model_cache: Annotated[str | None, typer.Option(
        "--model-cache", metavar="pvc|pvc:CLAIM|hostpath:/PATH", show_default=False,
        help="--format k8s: where pods keep the Hugging Face cache: a claim sized for the "
        "checkpoint (pvc, the default), an existing claim, or a folder on each node.")] = None,
    gpu_memory: GpuMemoryOption = None,
    compute_capability: ComputeCapabilityOption = None,
    platform: PlatformOption = None,
    insecure: InsecureOption = False,
    index_url: IndexUrlOption = None,
    verbose: Annotated[bool, typer.Option(
        "--verbose", "-v", help="List every passing check, not only their count.")] = False,
    no_cache: NoCacheOption = False,
    as_json: JsonOption = False,
) -> None:
    """Will MODEL start on these GPUs, and what exactly do I run?

    One offline report: the kernel gate for --build, the memory plan, the best recipe, the
    model's required flags, the GPU's pitfalls and the final command. Engine flags after
    `--` are yours and win over the recipe's. Exit 0 when it will start, 1 when something
    will fail (with what to change), 2 for bad input.
    """
    from servewise.check import FORMATS, CheckRequest, run_check
    from servewise.formats.redact import redact_text
    from servewise.render.check import check_markdown, check_text

    formats = (*FORMATS, "markdown")
    if output_format is not None and output_format not in formats:
        raise UsageError(f"--format {output_format!r}", hint="give " + ", ".join(formats),
                         found=output_format)
    spec = gpu_spec(gpu, memory=gpu_memory, capability=compute_capability)
    request = CheckRequest(
        model=model, gpu=spec, engine=engine, engine_version=engine_version, build=build,
        max_model_len=max_model_len, strategy=strategy, nodes=nodes,
        flags=tuple(ctx.args), port=port, image=image, model_cache=model_cache,
        command_format=None if output_format == "markdown" else output_format)
    with stored(no_cache) as store:
        report = run_check(request, store=store,
                           options=source_options(platform, insecure, index_url))
    data = report.to_dict()
    if as_json:
        emit_json(data)
    elif output_format == "markdown":
        sys.stdout.write(redact_text(check_markdown(data)))
    else:
        sys.stdout.write(redact_text(check_text(data, verbose=verbose)))
    raise typer.Exit(report.exit_code)
