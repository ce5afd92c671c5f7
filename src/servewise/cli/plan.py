"""``servewise plan`` and ``servewise model``: the memory planner and a model's shape.

stdout carries data; stderr notes, warnings and errors. Exit codes: 0 fine, 1 the plan does
not fit, 2 bad usage or unreadable input.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from servewise.cli._common import app, emit_json, open_store, say
from servewise.cli.options import (
    ComputeCapabilityOption,
    GpuMemoryOption,
    GpuOption,
    JsonOption,
    NoCacheOption,
    TimeoutOption,
    network_deadline,
)
from servewise.errors import UsageError

if TYPE_CHECKING:
    from servewise.plan.model import ModelInfo
    from servewise.plan.startup import Settings

ModelArgument = Annotated[str, typer.Argument(
    help="A folder with config.json, an org/name Hub repository (hub:org/name skips the "
    "cards), or a bundled card id.", show_default=False)]
RevisionOption = Annotated[str | None, typer.Option(
    "--revision", help="Hub branch, tag or commit (default main).", show_default=False)]
KvDtypeOption = Annotated[str | None, typer.Option(
    "--kv-cache-dtype", help="KV cache dtype (auto, fp8, fp8_e4m3, ...); default auto, or "
    "what the model requires.", show_default=False)]


def _load(model: str, revision: str | None, no_cache: bool, timeout: float | None = None
          ) -> ModelInfo:
    from servewise.plan.resolve import load_model, reads_hub
    from servewise.sources.deadline import deadline_scope

    store = open_store(no_cache, "reading without it") if reads_hub(model, revision) else None
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
    kv_cache_dtype: KvDtypeOption = None,
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
                          kv_cache_dtype=kv_cache_dtype or "auto",
                          tensors=tensors)
    if as_json:
        emit_json(report)
        return
    from servewise.render.plan_text import model_text

    sys.stdout.write(model_text(report))


def settings_from(
    *, engine: str | None, engine_version: str | None, tp: int | None, pp: int | None,
    dp: int | None, ep: int | None, kv_cache_dtype: str | None, block_size: int | None,
    max_model_len: int | None, max_num_seqs: int | None, max_num_batched_tokens: int | None,
    gpu_memory_utilization: float | None, mem_fraction_static: float | None,
    kv_cache_memory: str | None, enforce_eager: bool, speculative: bool,
    dp_attention: bool = False, quantization: str | None = None,
) -> tuple[Settings, bool, list[str]]:
    """The planner's :class:`~servewise.plan.startup.Settings` from ``plan``'s options,
    whether a layout was given, and notes on choices made for the user (the engine a flag
    selects). The options become the shared :class:`~servewise.knowledge.flags.EngineSettings`
    and go through the planner's one validating conversion, as ``check``'s argv does."""
    from servewise.knowledge.flags import EngineSettings
    from servewise.knowledge.gpus import parse_size
    from servewise.plan.requirements import choose_engine
    from servewise.plan.settings import plan_settings

    given = [name for name, value in (("--gpu-memory-utilization", gpu_memory_utilization),
                                      ("--mem-fraction-static", mem_fraction_static),
                                      ("--kv-cache-memory", kv_cache_memory))
             if value is not None]
    engine, notes = choose_engine(engine, [*given, *(["--enable-dp-attention"]
                                                     if dp_attention else [])])
    if len(given) > 1:
        raise UsageError(f"{' and '.join(given)} both size the KV cache; give one",
                         hint="--gpu-memory-utilization sizes vLLM's share of the GPU, "
                         "--kv-cache-memory a fixed pool")
    kv_memory = None
    if kv_cache_memory is not None:
        text = kv_cache_memory.strip()
        kv_memory = int(text) if text.isdigit() else parse_size(text, "--kv-cache-memory")
    chosen = EngineSettings(
        tensor_parallel_size=tp, pipeline_parallel_size=pp, data_parallel_size=dp,
        expert_parallel_size=ep,
        enable_expert_parallel=True if ep is not None and ep > 1 else None,
        enable_dp_attention=True if dp_attention else None,
        kv_cache_dtype=kv_cache_dtype, block_size=block_size, max_model_len=max_model_len,
        max_num_seqs=max_num_seqs, max_num_batched_tokens=max_num_batched_tokens,
        gpu_memory_utilization=gpu_memory_utilization, mem_fraction_static=mem_fraction_static,
        kv_cache_memory_bytes=kv_memory, enforce_eager=enforce_eager or None,
        quantization=quantization)
    settings = plan_settings(engine, chosen, engine_version, speculative=speculative)
    explicit = any(v is not None for v in (tp, pp, dp, ep))
    return settings, explicit, notes


@app.command()
def plan(
    model_id: ModelArgument,
    gpu: GpuOption,
    nodes: Annotated[int, typer.Option("--nodes", min=1, help="Nodes.")] = 1,
    gpu_memory: GpuMemoryOption = None,
    compute_capability: ComputeCapabilityOption = None,
    engine: Annotated[str | None, typer.Option(
        "--engine", help="vllm or sglang (default vllm; --mem-fraction-static selects "
        "sglang).", show_default=False)] = None,
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
    kv_cache_dtype: KvDtypeOption = None,
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
    quantization: Annotated[str | None, typer.Option(
        "--quantization", help="Quantize an unquantized checkpoint while loading (fp8: "
        "linear layers in FP8); a quantized checkpoint is planned as stored.",
        show_default=False)] = None,
    speculative: Annotated[bool, typer.Option(
        "--speculative", help="Load the MTP draft layers (speculative decoding).")] = False,
    speculative_config: Annotated[str | None, typer.Option(
        "--speculative-config", metavar="JSON", help="vLLM's speculative config: "
        '\'{"method": "mtp", "num_speculative_tokens": 2}\', '
        '\'{"method": "eagle3", "model": "org/draft"}\', ngram; the draft\'s weights and '
        "KV pages are counted.", show_default=False)] = None,
    enable_dp_attention: Annotated[bool, typer.Option(
        "--enable-dp-attention", help="SGLang: DP attention inside the TP group (--tp 8 --dp "
        "8 is 8 GPUs); selects SGLang.")] = False,
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

    settings, explicit, notes = settings_from(
        engine=engine, engine_version=engine_version, tp=tp, pp=pp, dp=dp, ep=ep,
        kv_cache_dtype=kv_cache_dtype, block_size=block_size, max_model_len=max_model_len,
        max_num_seqs=max_num_seqs, max_num_batched_tokens=max_num_batched_tokens,
        gpu_memory_utilization=gpu_memory_utilization, mem_fraction_static=mem_fraction_static,
        kv_cache_memory=kv_cache_memory, enforce_eager=enforce_eager, speculative=speculative,
        dp_attention=enable_dp_attention, quantization=quantization)
    memory = gpu_memory
    if gpu.split(":")[0].strip().lower() == "cpu" and memory is None and kv_cache_memory:
        memory = f"{settings.kv_cache_memory_bytes}B"
    device = gpu_spec(gpu, memory=memory, capability=compute_capability)
    from servewise.plan.speculative import parse_speculative, resolve_speculative

    wanted = parse_speculative(speculative_config) if speculative_config else None
    info = _load(model_id, revision, no_cache, timeout)
    if wanted is not None:
        from dataclasses import replace

        draft = resolve_speculative(wanted, info,
                                    lambda ref: _load(ref, None, no_cache, timeout))
        settings = replace(settings, speculative_config=draft)
        notes.append(draft.describe())
    given = frozenset(flag for flag, value in (("--kv-cache-dtype", kv_cache_dtype),
                                               ("--max-model-len", max_model_len))
                      if value is not None)
    result = make_plan(info, device, settings, load_engine_constants(),
                       gpus_per_node=device.count, nodes=nodes, context=context,
                       explicit_layout=explicit, given=given, notes=tuple(notes))
    data: dict[str, Any] = result.to_dict()
    if as_json:
        emit_json(data)
    else:
        from servewise.render.plan_text import plan_text

        for note in result.notes:
            say("note", "dim", note)
        sys.stdout.write(plan_text(data))
    raise typer.Exit(0 if result.fits else 1)
