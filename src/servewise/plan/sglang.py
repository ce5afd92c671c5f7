"""SGLang's startup memory accounting: ``--mem-fraction-static`` and the token pool.

Following ``python/sglang/srt/server_args.py`` (``_handle_gpu_memory_settings``) and the
model runner's ``profile_max_num_token`` (research/plan.md §2):

* the default fraction reserves ``512 + max(chunked_prefill, 2048) * 1.5 +
  cuda_graph_max_bs * 2 + tp * pp / 8 * 1024`` MiB (at least 10 GiB on GPUs above 60 GiB,
  2 GiB more for EAGLE/MTP drafts) and is ``round((gpu - reserved) / gpu, 3)``;
* the KV budget is ``free_after_weights - free_before_load * (1 - fraction)``; the pool is
  that divided by ``cell_size`` (bytes per token over the rank's layers), rounded down to
  the page size;
* a budget of zero or less is the "not enough memory" failure.

Everything outside the fraction — activations, CUDA graphs, MoE workspaces — must fit in
``1 - fraction``; the recommendation step checks the named workspaces against it.
"""

from __future__ import annotations

import math

from servewise.errors import UnsupportedModelError
from servewise.knowledge.accounting import EngineConstants
from servewise.knowledge.gpus import GpuSpec
from servewise.plan.kv import sglang_cell_bytes
from servewise.plan.model import ModelInfo
from servewise.plan.startup import Settings, Startup, engine_version
from servewise.plan.weights import pp_layer_ranges
from servewise.versions import EngineVersion

ENGINE = "sglang"
MIB = 2**20
GIB = 2**30

#: (GPU memory below GiB, chunked prefill, cuda_graph_max_bs for tp < 4, for tp >= 4),
#: server_args._handle_gpu_memory_settings (research/plan.md §2.1).
_GPU_TIERS = (
    (20, 2048, 8, 8),
    (35, 2048, 24, 80),
    (60, 4096, 32, 160),
    (90, 8192, 256, 512),
    (160, 8192, 256, 512),
    (10**9, 16384, 512, 512),
)


def default_fraction(device: GpuSpec, settings: Settings, constants: EngineConstants,
                     version: EngineVersion) -> tuple[float, dict[str, float]]:
    """SGLang's default ``--mem-fraction-static`` and the reserve behind it (MiB).

    SGLang reads the GPU's capacity from ``nvidia-smi --query-gpu=memory.total``
    (``get_nvgpu_memory_capacity``), so the catalog's nvidia-smi total is used where known.
    """
    smi = device.gpu.nvidia_smi_bytes if device.gpu is not None else None
    capacity = smi if smi and device.memory_source != "user" else device.memory_bytes
    gib = capacity / GIB
    layout = settings.layout
    tier = next(t for t in _GPU_TIERS if gib < t[0])
    _, chunked, small_bs, large_bs = tier
    graph_bs = small_bs if layout.tp < 4 else large_bs
    base = constants.number(ENGINE, "reserved_mib_base", version)
    reserved = (base + max(chunked, 2048) * 1.5 + graph_bs * 2
                + layout.tp * layout.pp / 8 * 1024)
    if layout.dp > 1:
        reserved += graph_bs * layout.dp * 3
    if gib > 60:
        reserved = max(reserved, constants.number(ENGINE, "reserved_mib_floor_large_gpu",
                                                  version))
    if settings.loads_mtp or settings.speculative_config is not None:
        reserved += constants.number(ENGINE, "reserved_mib_eagle", version)
    total_mib = capacity / MIB
    fraction = round((total_mib - reserved) / total_mib, 3)
    return fraction, {"reserved_mib": reserved, "chunked_prefill_size": chunked,
                      "cuda_graph_max_bs": graph_bs}


def _ceil3(value: float) -> float:
    """``value`` rounded up to 3 decimals (a fraction that is enough, not just short)."""
    return math.ceil(value * 1000) / 1000


def page_size(model: ModelInfo) -> int:
    """SGLang's pool page: 1 token, 64 for MLA (FlashMLA), 256 for DeepSeek-V4."""
    spec = model.spec
    if spec.family == "dsv4":
        return 256
    return 64 if spec.uses_mla else 1


def sglang_startup(model: ModelInfo, device: GpuSpec, settings: Settings,
                   constants: EngineConstants) -> Startup:
    """Predict SGLang's pool for ``model`` on ``device``."""
    spec = model.spec
    if not spec.supported:
        raise UnsupportedModelError(
            f"cannot plan {model.ref}: {spec.unsupported_reason}",
            hint="`servewise model` shows what was read", model_type=spec.model_type,
        )
    version = engine_version(settings, constants)
    layout = settings.layout
    default, reserve = default_fraction(device, settings, constants, version)
    fraction = settings.mem_fraction_static or default
    notes: list[str] = []
    if spec.family == "dsv4" and device.gpu_id == "h200" and settings.mem_fraction_static is None:
        seen = constants.number(ENGINE, "observed_default_fraction_dsv4_h200", version)
        notes.append(f"the seed reports a default of {seen} for DeepSeek-V4 on H200; the "
                     f"formula gives {default} (see accounting.toml)")
    stages = model.per_rank(layout, load_mtp=settings.loads_mtp)
    weights = max(stage.total for stage in stages)
    context = constants.integer(
        ENGINE, "pre_load_used_bytes_multi_gpu" if layout.tp * layout.pp > 1
        else "pre_load_used_bytes_single_gpu", version)
    free_before = device.memory_bytes - context
    cells = [sglang_cell_bytes(spec, layers, tp=layout.attention_tp,
                               kv_cache_dtype=settings.kv_cache_dtype or "auto")
             for layers in pp_layer_ranges(spec.num_layers, layout.pp)]
    page = page_size(model)
    context_len = settings.max_model_len or spec.max_position or 2048
    tokens_per_stage = []
    budgets = []
    for stage, cell in zip(stages, cells, strict=True):
        if settings.kv_cache_memory_bytes is not None:
            budget = settings.kv_cache_memory_bytes
        else:
            budget = int(free_before - stage.total - free_before * (1 - fraction))
        budgets.append(budget)
        tokens_per_stage.append(budget // cell if cell else 0)
    tokens = min(tokens_per_stage)
    tokens = tokens // page * page if tokens > 0 else tokens
    cell = max(cells)
    error = None
    heaviest = max(stage.total for stage in stages)
    lowest = (heaviest + cell * page) / free_before if free_before > 0 else 1.0
    lowest_full = (heaviest + cell * context_len) / free_before if free_before > 0 else 1.0
    if tokens <= 0:
        if version.at_least("0.5.10"):
            error = (f"Loaded weights leave no GPU memory for the KV cache under "
                     f"--mem-fraction-static={fraction}")
        else:
            error = "Not enough memory. Please try to increase --mem-fraction-static."
        if lowest < 1:
            notes.append(f"the smallest --mem-fraction-static that leaves a KV page is "
                         f"{_ceil3(lowest)}; one {context_len}-token request needs "
                         f"{_ceil3(lowest_full)}" + ("" if lowest_full < 1 else
                                                   " (more than the whole GPU)"))
        else:
            notes.append("the weights alone exceed the GPU's memory on one rank: no "
                         "--mem-fraction-static helps; add GPUs or quantize")
    running = min(max(int(max(tokens, 0) / context_len * 512), 2048), 4096)
    breakdown = {
        "device_memory_bytes": device.memory_bytes,
        "device_memory_source": device.memory_source,
        "mem_fraction_static": fraction,
        "mem_fraction_static_default": default,
        **reserve,
        "pre_load_used_bytes": context,
        "weights_bytes_per_stage": [s.total for s in stages],
        "kv_budget_bytes": min(budgets),
        "cell_size_bytes": cell,
        "page_size": page,
        "context_len": context_len,
        "max_running_requests_default": running,
        "lowest_viable_mem_fraction_static": _ceil3(lowest),
        "dp_attention": layout.dp_attention,
        "layout": layout.label(),
    }
    if tokens > 0 and tokens < context_len:
        notes.append(f"the pool ({tokens} tokens) is shorter than context_len {context_len}: "
                     "SGLang starts, and rejects longer requests")
    return Startup(
        engine=ENGINE,
        engine_version=str(version),
        fits=error is None,
        error=error,
        weights_bytes_per_gpu=weights,
        kv_bytes_per_token=float(cell),
        kv_cache_bytes=max(tokens, 0) * cell,
        kv_cache_tokens=max(tokens, 0),
        max_concurrency=max(tokens, 0) / context_len,
        max_model_len=context_len,
        breakdown=breakdown,
        notes=tuple(notes),
    )
