"""``servewise plan`` and ``servewise model``: the memory planner and a model's shape.

stdout carries data; stderr notes, warnings and errors. Exit codes: 0 fine, 1 the plan does
not fit, 2 bad usage or unreadable input.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from servewise.cli._common import app, emit_json, say
from servewise.cli.options import (
    ComputeCapabilityOption,
    GpuMemoryOption,
    GpuOption,
    JsonOption,
    NoCacheOption,
    TimeoutOption,
    network_deadline,
)
from servewise.errors import ServewiseError, UsageError

if TYPE_CHECKING:
    from servewise.plan.model import ModelInfo
    from servewise.plan.startup import Settings
    from servewise.store import Store

ModelArgument = Annotated[str, typer.Argument(
    help="A folder with config.json, an org/name Hub repository (hub:org/name skips the "
    "cards), or a bundled card id.", show_default=False)]
RevisionOption = Annotated[str | None, typer.Option(
    "--revision", help="Hub branch, tag or commit (default main).", show_default=False)]
KvDtypeOption = Annotated[str, typer.Option(
    "--kv-cache-dtype", help="KV cache dtype (auto, fp8, fp8_e4m3, ...).")]


def _store(no_cache: bool) -> Store | None:
    if no_cache:
        return None
    from servewise.store import Store

    try:
        return Store()
    except ServewiseError as error:
        say("warning", "yellow", f"{error.message}; reading without the store")
        return None


def _load(model: str, revision: str | None, no_cache: bool, timeout: float | None = None
          ) -> ModelInfo:
    from servewise.plan.resolve import load_model, reads_hub
    from servewise.sources.deadline import deadline_scope

    store = _store(no_cache) if reads_hub(model, revision) else None
    try:
        with deadline_scope(network_deadline(timeout)):  # Hub reads keep --timeout
            return load_model(model, revision=revision, store=store)
    finally:
        if store is not None:
            store.close()


@app.command()
def model(
    model_id: ModelArgument,
    tensors: Annotated[bool, typer.Option(
        "--tensors", help="Also list every tensor (experts grouped as experts.*).")] = False,
    kv_cache_dtype: KvDtypeOption = "auto",
    revision: RevisionOption = None,
    timeout: TimeoutOption = None,
    no_cache: NoCacheOption = False,
    as_json: JsonOption = False,
) -> None:
    """A model's shape, weight bytes by role and dtype, and KV bytes per token.

    From a folder, a bundled card or the Hugging Face Hub (headers only).
    """
    from servewise.plan.report import model_report

    report = model_report(_load(model_id, revision, no_cache, timeout),
                          kv_cache_dtype=kv_cache_dtype,
                          tensors=tensors)
    if as_json:
        emit_json(report)
        return
    from servewise.render.plan_text import model_text

    sys.stdout.write(model_text(report))


def settings_from(
    *, engine: str, engine_version: str | None, tp: int | None, pp: int | None,
    dp: int | None, ep: int | None, kv_cache_dtype: str, block_size: int | None,
    max_model_len: int | None, max_num_seqs: int | None, max_num_batched_tokens: int | None,
    gpu_memory_utilization: float | None, mem_fraction_static: float | None,
    kv_cache_memory: str | None, enforce_eager: bool, speculative: bool,
) -> tuple[Settings, bool]:
    """The planner's :class:`~servewise.plan.startup.Settings` from ``plan``'s options."""
    from servewise.knowledge.gpus import parse_size
    from servewise.plan.startup import Settings
    from servewise.plan.weights import Parallel

    given = [name for name, value in (("--gpu-memory-utilization", gpu_memory_utilization),
                                      ("--mem-fraction-static", mem_fraction_static),
                                      ("--kv-cache-memory", kv_cache_memory))
             if value is not None]
    if len(given) > 1:
        raise UsageError(f"{' and '.join(given)} both size the KV cache; give one",
                         hint="--gpu-memory-utilization is vLLM's, --mem-fraction-static "
                         "SGLang's, --kv-cache-memory a fixed pool")
    for flag, fraction in (("--gpu-memory-utilization", gpu_memory_utilization),
                           ("--mem-fraction-static", mem_fraction_static)):
        if fraction is not None and not 0 < fraction <= 1:
            raise UsageError(f"{flag} {fraction}: expected a fraction in (0, 1]",
                             hint=f"give {flag} 0.9, for example", found=fraction)
    explicit = any(v is not None for v in (tp, pp, dp, ep))
    tp_size, pp_size, dp_size = tp or 1, pp or 1, dp or 1
    expert = False
    if ep is not None and ep > 1:
        if ep != tp_size * dp_size:
            raise UsageError(
                f"--ep {ep} must equal TP x DP ({tp_size * dp_size}): experts are spread "
                "over every tensor- and data-parallel rank",
                hint="drop --ep, or set it to --tp times --dp", ep=ep,
            )
        expert = True
    kv_memory = None
    if kv_cache_memory is not None:
        text = kv_cache_memory.strip()
        kv_memory = int(text) if text.isdigit() else parse_size(text, "--kv-cache-memory")
    settings = Settings(
        engine=engine, engine_version=engine_version,
        layout=Parallel(tp_size, pp_size, dp_size, expert), kv_cache_dtype=kv_cache_dtype,
        block_size=block_size, max_model_len=max_model_len, max_num_seqs=max_num_seqs,
        max_num_batched_tokens=max_num_batched_tokens,
        gpu_memory_utilization=gpu_memory_utilization, mem_fraction_static=mem_fraction_static,
        kv_cache_memory_bytes=kv_memory, enforce_eager=enforce_eager, speculative=speculative,
    )
    return settings, explicit


@app.command()
def plan(
    model_id: ModelArgument,
    gpu: GpuOption,
    nodes: Annotated[int, typer.Option("--nodes", min=1, help="Nodes.")] = 1,
    gpu_memory: GpuMemoryOption = None,
    compute_capability: ComputeCapabilityOption = None,
    engine: Annotated[str, typer.Option(
        "--engine", help="vllm or sglang.")] = "vllm",
    engine_version: Annotated[str | None, typer.Option(
        "--engine-version", help="Engine version (0.19.0, 0.26.1rc1.dev229+g6f91edf96, V0); "
        "default: the latest the tables know.", show_default=False)] = None,
    tp: Annotated[int | None, typer.Option("--tp", min=1, help="Tensor-parallel size.",
                                           show_default=False)] = None,
    pp: Annotated[int | None, typer.Option("--pp", min=1, help="Pipeline-parallel size.",
                                           show_default=False)] = None,
    dp: Annotated[int | None, typer.Option("--dp", min=1, help="Data-parallel size.",
                                           show_default=False)] = None,
    ep: Annotated[int | None, typer.Option(
        "--ep", min=1, help="Expert-parallel size (vLLM: --enable-expert-parallel; TP x DP).",
        show_default=False)] = None,
    kv_cache_dtype: KvDtypeOption = "auto",
    block_size: Annotated[int | None, typer.Option("--block-size", min=1,
                                                   show_default=False)] = None,
    max_model_len: Annotated[int | None, typer.Option("--max-model-len", min=1,
                                                      show_default=False)] = None,
    max_num_seqs: Annotated[int | None, typer.Option("--max-num-seqs", min=1,
                                                     show_default=False)] = None,
    max_num_batched_tokens: Annotated[int | None, typer.Option(
        "--max-num-batched-tokens", min=1, show_default=False)] = None,
    gpu_memory_utilization: Annotated[float | None, typer.Option(
        "--gpu-memory-utilization",
        help="vLLM's share of each GPU's memory.", show_default=False)] = None,
    mem_fraction_static: Annotated[float | None, typer.Option(
        "--mem-fraction-static",
        help="SGLang's share of each GPU's memory for weights and KV.",
        show_default=False)] = None,
    kv_cache_memory: Annotated[str | None, typer.Option(
        "--kv-cache-memory", metavar="BYTES", help="A fixed KV pool per GPU (vLLM "
        "--kv-cache-memory-bytes; CPU backend: VLLM_CPU_KVCACHE_SPACE GiB): 1073741824, "
        "1GiB, 512MiB.", show_default=False)] = None,
    enforce_eager: Annotated[bool, typer.Option("--enforce-eager",
                                                help="No CUDA graphs.")] = False,
    speculative: Annotated[bool, typer.Option(
        "--speculative", help="Load the MTP draft layers (speculative decoding).")] = False,
    context: Annotated[int | None, typer.Option(
        "--context", min=1, help="Report the concurrency at this context length.",
        show_default=False)] = None,
    revision: RevisionOption = None,
    timeout: TimeoutOption = None,
    no_cache: NoCacheOption = False,
    as_json: JsonOption = False,
) -> None:
    """Memory plan: what vLLM or SGLang will log at startup for MODEL on these GPUs.

    Weights, KV pool, tokens, concurrency, or the error; and the settings and parallel
    layouts that fit. Exit 1 when it does not fit.
    """
    from servewise.cli.options import gpu_spec
    from servewise.knowledge.accounting import load_engine_constants
    from servewise.plan.planner import make_plan

    if engine not in ("vllm", "sglang"):
        raise UsageError(f"--engine {engine!r}: expected vllm or sglang", found=engine)
    settings, explicit = settings_from(
        engine=engine, engine_version=engine_version, tp=tp, pp=pp, dp=dp, ep=ep,
        kv_cache_dtype=kv_cache_dtype, block_size=block_size, max_model_len=max_model_len,
        max_num_seqs=max_num_seqs, max_num_batched_tokens=max_num_batched_tokens,
        gpu_memory_utilization=gpu_memory_utilization, mem_fraction_static=mem_fraction_static,
        kv_cache_memory=kv_cache_memory, enforce_eager=enforce_eager, speculative=speculative)
    memory = gpu_memory
    if gpu.split(":")[0].strip().lower() == "cpu" and memory is None and kv_cache_memory:
        memory = f"{settings.kv_cache_memory_bytes}B"
    device = gpu_spec(gpu, memory=memory, capability=compute_capability)
    info = _load(model_id, revision, no_cache, timeout)
    result = make_plan(info, device, settings, load_engine_constants(),
                       gpus_per_node=device.count, nodes=nodes, context=context,
                       explicit_layout=explicit)
    data: dict[str, Any] = result.to_dict()
    if as_json:
        emit_json(data)
    else:
        from servewise.render.plan_text import plan_text

        for note in result.notes:
            say("note", "dim", note)
        sys.stdout.write(plan_text(data))
    raise typer.Exit(0 if result.fits else 1)
