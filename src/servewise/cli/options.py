"""Options every command shares, defined once: ``--gpu``, ``--json`` and the build REF block.

A command takes them by annotation (``gpu: GpuOption``, ``as_json: JsonOption``) and turns
the raw text into the shared vocabulary with :func:`gpu_spec` and :func:`source_options`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from servewise.cli._common import errors_as_json

if TYPE_CHECKING:
    from servewise.knowledge.gpus import GpuSpec
    from servewise.sources import SourceOptions
    from servewise.sources.deadline import Deadline

# The callback tells the error boundary (servewise.cli._common) to render errors as JSON too.
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON to stdout.",
                                          callback=errors_as_json)]

GPU_HELP = ("GPU name and how many per node, NAME[:COUNT]: h200:8, rtx-pro-6000:2, b200 "
            "(`servewise gpus` lists the names).")
GpuOption = Annotated[str, typer.Option("--gpu", metavar="NAME[:COUNT]", help=GPU_HELP,
                                        show_default=False)]
OptionalGpuOption = Annotated[str | None, typer.Option(
    "--gpu", metavar="NAME[:COUNT]", help=GPU_HELP, show_default=False)]
GpuMemoryOption = Annotated[str | None, typer.Option(
    "--gpu-memory", help="Memory per GPU as the driver reports it (97887MiB, 95.59GiB): for "
    "GPUs the catalog lacks, or to override its figure.", show_default=False)]
MAX_CONTEXT_TOKENS = 2**30
"""The longest context ``--max-model-len`` takes (a larger one only sizes absurd plans)."""


def context_length(text: str) -> int:
    """``--max-model-len`` as vLLM reads it: ``131072``, ``128k`` (10^3), ``128K`` (2^10),
    ``1.5m``; ``auto`` (or -1) fits it to the KV memory (``check`` only)."""
    from servewise.knowledge.flags import human_int

    try:
        value = human_int(text)
    except ValueError:
        raise typer.BadParameter(f"{text!r}: expected a number of tokens such as 131072, "
                                 "128k or 128K (or auto)") from None
    if value == 0:
        raise typer.BadParameter("0 tokens: give at least 1")
    if value > MAX_CONTEXT_TOKENS:
        raise typer.BadParameter(f"{value} tokens: expected at most {MAX_CONTEXT_TOKENS} "
                                 "(2^30; no model serves a longer context)")
    return value


ContextLengthOption = Annotated[int | None, typer.Option(
    "--max-model-len", parser=context_length, metavar="TOKENS", show_default=False,
    help="The context length to serve: 131072, 128k (10^3), 128K (2^10), or auto (vLLM fits "
         "it to the KV memory).")]

ComputeCapabilityOption = Annotated[str | None, typer.Option(
    "--compute-capability", help="MAJOR.MINOR, for GPUs the catalog lacks.",
    show_default=False)]


def gpu_spec(text: str, memory: str | None = None, capability: str | None = None) -> GpuSpec:
    """``--gpu NAME[:COUNT]`` (with ``--gpu-memory``/``--compute-capability``) as a GpuSpec."""
    from servewise.knowledge.gpus import parse_gpu_spec

    return parse_gpu_spec(text, memory=memory, capability=capability)


# --- The build REF block: inspect, gate, diff, tags, bisect, check ------------------------

RefArgument = Annotated[
    str,
    typer.Argument(
        help="An engine build: a .so/.cubin file, a folder (site-packages or a virtual "
        "environment), a .whl file or URL, pypi:NAME==VERSION, an image "
        "[registry/]repo[:tag|@digest], a docker save tarball or an OCI layout folder.",
        show_default=False,
    ),
]
PlatformOption = Annotated[str | None, typer.Option(
    "--platform", help="Image or wheel platform as os/arch or os/arch/variant (default "
    "linux/amd64), or a wheel platform tag such as manylinux_2_28_aarch64.",
    show_default=False)]
InsecureOption = Annotated[bool, typer.Option(
    "--insecure", help="Allow plain HTTP and unverified TLS for a registry that is not on "
    "this machine.")]
IndexUrlOption = Annotated[str | None, typer.Option(
    "--index-url", help="Package index (PEP 503/691 simple API) for pypi: REFs; default "
    "$PIP_INDEX_URL, else PyPI.", show_default=False)]
NoCacheOption = Annotated[
    bool, typer.Option("--no-cache", help="Read everything afresh; do not use the store.")
]
GraceOption = Annotated[float | None, typer.Option(
    "--grace", metavar="SECONDS", min=0.0, show_default=False,
    help="Seconds between SIGTERM and SIGKILL when an engine is stopped (default: 15).")]

TimeoutOption = Annotated[float | None, typer.Option(
    "--timeout", metavar="SECONDS", help="Deadline for all of the command's network work "
    "(registries, package indexes, web servers, the Hugging Face Hub). Default: no overall "
    "limit, but no single wait for a server lasts more than 60 s.", show_default=False)]


def network_deadline(timeout: float | None) -> Deadline:
    """The command's deadline (``--timeout``), telling stderr about waits longer than 5 s."""
    from servewise.sources.deadline import Deadline, Waiting

    def show(waiting: Waiting) -> None:
        from servewise.cli._common import say

        say("waiting", "dim", waiting.describe())

    return Deadline.start(timeout, on_wait=show)


def source_options(platform: str | None, insecure: bool, index_url: str | None,
                   timeout: float | None = None) -> SourceOptions:
    """The options remote and image sources take, with the command's deadline."""
    from servewise.sources import SourceOptions

    return SourceOptions(platform=platform, insecure=insecure, index_url=index_url,
                         deadline=network_deadline(timeout))


__all__ = [
    "ComputeCapabilityOption", "GpuMemoryOption", "GpuOption", "IndexUrlOption",
    "InsecureOption", "JsonOption", "NoCacheOption", "OptionalGpuOption", "PlatformOption",
    "RefArgument", "TimeoutOption", "gpu_spec", "network_deadline", "source_options",
]
