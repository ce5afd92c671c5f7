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

One rule decides the verdict and the advice (:class:`FractionWindow`): at a fraction ``f``
SGLang starts when its pool holds one page (``f >= lowest_viable``), and the deployment
fits when the pool holds one ``context_len`` request (``f >= lowest_for_one_request``) —
SGLang itself starts with a shorter pool and rejects longer requests, which the plan
reports as not fitting the context asked for. Everything outside the pool — the chunked
prefill's activations, CUDA graphs, communication buffers, named workspaces — must fit in
``free_before_load * (1 - f)``, which bounds the advice from above
(``highest_with_headroom``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from servewise.errors import UnsupportedModelError
from servewise.knowledge.accounting import EngineConstants
from servewise.knowledge.gpus import GpuSpec
from servewise.plan.kv import sglang_cell_bytes
from servewise.plan.model import ModelInfo
from servewise.plan.startup import Settings, Startup, engine_version
from servewise.plan.vllm import forward_bytes
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
    reserved += _dp_attention_mib(layout.dp if layout.dp_attention else 1, graph_bs)
    if gib > 60:
        reserved = max(reserved, constants.number(ENGINE, "reserved_mib_floor_large_gpu",
                                                  version))
    if settings.loads_mtp or settings.speculative_config is not None:
        reserved += constants.number(ENGINE, "reserved_mib_eagle", version)
    total_mib = capacity / MIB
    fraction = round((total_mib - reserved) / total_mib, 3)
    return fraction, {"reserved_mib": reserved, "chunked_prefill_size": chunked,
                      "cuda_graph_max_bs": graph_bs}


def _dp_attention_mib(dp: int, graph_bs: int) -> float:
    """What ``--enable-dp-attention`` adds to SGLang's reserve (MiB): ``3 * cuda_graph_max_bs
    * dp`` for padding, and ``1.5 * cuda_graph_max_bs * dp`` more above a graph batch of 300
    (``server_args._handle_gpu_memory_settings``, 0.5.16: "DP attention uses much more memory
    for large cuda graph max bs"). Plain ``--dp`` replicas (no DP attention) add nothing."""
    if dp <= 1:
        return 0.0
    extra = graph_bs * dp * 3.0
    if graph_bs > 300:
        extra += graph_bs * dp * 1.5
    return extra


def _ceil3(value: float) -> float:
    """``value`` rounded up to 3 decimals (a fraction that is enough, not just short)."""
    return math.ceil(value * 1000 - 1e-9) / 1000


def _floor3(value: float) -> float:
    """``value`` rounded down to 3 decimals (a fraction that leaves enough, not just short)."""
    return math.floor(value * 1000 + 1e-9) / 1000


@dataclass(frozen=True)
class FractionWindow:
    """The ``--mem-fraction-static`` values that matter for one layout, from one rule.

    The pool at fraction ``f`` is ``f * free_before_load - weights`` on each stage, so
    ``lowest_viable`` (one page: SGLang starts) and ``lowest_for_one_request`` (one
    ``context_len`` request: the plan fits) are exact; ``highest_with_headroom`` leaves
    ``runtime_bytes`` outside the pool.
    """

    lowest_viable: float
    lowest_for_one_request: float
    highest_with_headroom: float
    default: float
    runtime_bytes: int
    free_before_load: int

    def advice(self) -> float | None:
        """The fraction to run: SGLang's default when it holds one full request and leaves
        the runtime its room, else the lowest that holds one; when no fraction with headroom
        holds one, the highest with headroom if the engine starts there (the longest request
        is then shorter than the context); ``None`` when nothing starts with headroom."""
        high = self.highest_with_headroom
        if self.lowest_for_one_request <= high:
            return min(high, max(self.default, self.lowest_for_one_request))
        if self.lowest_viable <= high:
            return high
        return None

    def to_dict(self) -> dict[str, Any]:
        """The recommendation's fraction keys."""
        return {
            "mem_fraction_static": self.advice(),
            "mem_fraction_static_default": self.default,
            "lowest_viable_mem_fraction_static": self.lowest_viable,
            "lowest_fraction_for_one_request": self.lowest_for_one_request,
            "highest_fraction_with_headroom": self.highest_with_headroom,
            "runtime_reserve_bytes": self.runtime_bytes,
        }


def runtime_bytes(model: ModelInfo, device: GpuSpec, settings: Settings,
                  constants: EngineConstants, extra_bytes: int = 0) -> int:
    """What SGLang allocates outside the static pool after sizing it, on one rank.

    SGLang's own reserve (``_handle_gpu_memory_settings``) sums a base of 512 MiB, a generic
    1.5 MiB per chunked-prefill token for activations, 2 MiB per CUDA-graph batch size,
    ``tp * pp / 8`` GiB for communication (and ``3 * cuda_graph_max_bs * dp`` MiB under DP
    attention, 2 GiB for EAGLE/MTP), floored at 10 GiB on large GPUs. Here its terms are kept
    except the generic activation term and the floor, which become the model's own forward
    peak for one chunk of ``chunked_prefill_size`` tokens (:func:`forward_bytes`, the dense
    MLP or fused-MoE workspaces); ``extra_bytes`` are the named workspaces and the safety
    margin the planner keeps.
    """
    version = engine_version(settings, constants)
    _, reserve = default_fraction(device, settings, constants, version)
    layout = settings.layout
    graph_bs = int(reserve["cuda_graph_max_bs"])
    chunk = int(settings.max_num_batched_tokens or reserve["chunked_prefill_size"])
    mib = (constants.number(ENGINE, "reserved_mib_base", version) + graph_bs * 2
           + layout.tp * layout.pp / 8 * 1024)
    mib += _dp_attention_mib(layout.dp if layout.dp_attention else 1, graph_bs)
    if settings.loads_mtp or settings.speculative_config is not None:
        mib += constants.number(ENGINE, "reserved_mib_eagle", version)
    vllm_version = constants.version("vllm", "latest_read")
    forward = forward_bytes(model, settings, chunk, constants, vllm_version)
    return int(mib * MIB + forward + extra_bytes)


def fraction_window(model: ModelInfo, device: GpuSpec, settings: Settings,
                    constants: EngineConstants, extra_bytes: int = 0) -> FractionWindow:
    """The fractions at which SGLang starts, fits one full request, and leaves headroom."""
    version = engine_version(settings, constants)
    layout = settings.layout
    default, _ = default_fraction(device, settings, constants, version)
    free_before = _free_before_load(device, settings, constants, version)
    stages = model.per_rank(layout, load_mtp=settings.loads_mtp)
    cells = _cells(model, settings)
    page = page_size(model)
    context_len = settings.max_model_len or model.spec.max_position or 2048
    full = math.ceil(context_len / page) * page
    if free_before <= 0:
        viable = one_request = 1.0
    else:
        viable = max((s.total + c * page) / free_before for s, c in zip(stages, cells,
                                                                        strict=True))
        one_request = max((s.total + c * full) / free_before for s, c in zip(stages, cells,
                                                                             strict=True))
    runtime = runtime_bytes(model, device, settings, constants, extra_bytes)
    cap = constants.number(ENGINE, "max_recommended_fraction", version)
    highest = _floor3(min(cap, 1 - runtime / free_before)) if free_before > 0 else 0.0
    return FractionWindow(_ceil3(viable), _ceil3(one_request), highest, default, runtime,
                          free_before)


def _free_before_load(device: GpuSpec, settings: Settings, constants: EngineConstants,
                      version: EngineVersion) -> int:
    """The free memory SGLang measures before loading: the device less what is in use."""
    layout = settings.layout
    used = constants.integer(
        ENGINE, "pre_load_used_bytes_multi_gpu" if layout.tp * layout.pp > 1
        else "pre_load_used_bytes_single_gpu", version)
    return device.memory_bytes - used


def _cells(model: ModelInfo, settings: Settings) -> list[int]:
    """Bytes per token of the pool on each pipeline stage."""
    layout = settings.layout
    return [sglang_cell_bytes(model.spec, layers, tp=layout.attention_tp,
                              kv_cache_dtype=settings.kv_cache_dtype or "auto")
            for layers in pp_layer_ranges(model.spec.num_layers, layout.pp)]


def page_size(model: ModelInfo) -> int:
    """SGLang's pool page: 1 token, 64 for MLA (FlashMLA), 256 for DeepSeek-V4."""
    spec = model.spec
    if spec.family == "dsv4":
        return 256
    return 64 if spec.uses_mla else 1


def sglang_startup(model: ModelInfo, device: GpuSpec, settings: Settings,
                   constants: EngineConstants) -> Startup:
    """Predict SGLang's pool for ``model`` on ``device``; ``fits`` is the pool holding one
    ``context_len`` request (:class:`FractionWindow`'s rule)."""
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
    context = device.memory_bytes - _free_before_load(device, settings, constants, version)
    free_before = device.memory_bytes - context
    cells = _cells(model, settings)
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
    window = fraction_window(model, device, settings, constants)
    error = None
    if tokens <= 0:
        if version.at_least("0.5.10"):
            error = (f"Loaded weights leave no GPU memory for the KV cache under "
                     f"--mem-fraction-static={fraction}")
        else:
            error = "Not enough memory. Please try to increase --mem-fraction-static."
        if window.lowest_viable < 1:
            notes.append(f"the smallest --mem-fraction-static that leaves a KV page is "
                         f"{window.lowest_viable}; one {context_len:,}-token request needs "
                         f"{window.lowest_for_one_request}" + (
                             "" if window.lowest_for_one_request < 1
                             else " (more than the whole GPU)"))
        else:
            notes.append("the weights alone exceed the GPU's memory on one rank: no "
                         "--mem-fraction-static helps; add GPUs or quantize")
    elif tokens < context_len:
        where = (f"--mem-fraction-static={fraction}" if settings.kv_cache_memory_bytes is None
                 else "the KV memory given")
        need = (f"; it needs --mem-fraction-static {window.lowest_for_one_request}"
                if window.lowest_for_one_request < 1 else "; no fraction of this GPU holds one")
        error = (f"one {context_len:,}-token request does not fit: the KV pool holds "
                 f"{tokens:,} tokens at {where} (SGLang starts and rejects longer requests)"
                 + need)
    running = min(max(int(max(tokens, 0) / context_len * 512), 2048), 4096)
    per_request = math.ceil(context_len / page)
    breakdown = {
        "device_memory_bytes": device.memory_bytes,
        "device_memory_source": device.memory_source,
        "mem_fraction_static": fraction,
        "mem_fraction_static_default": default,
        **reserve,
        "pre_load_used_bytes": context,
        "weights_bytes_per_stage": [s.total for s in stages],
        "kv_budget_bytes": min(budgets),
        "available_kv_bytes": min(budgets),
        "bytes_per_block": cell * page,
        "blocks_per_request": per_request,
        "cell_size_bytes": cell,
        "page_size": page,
        "context_len": context_len,
        "max_running_requests_default": running,
        "lowest_viable_mem_fraction_static": window.lowest_viable,
        "lowest_mem_fraction_static_for_one_request": window.lowest_for_one_request,
        "dp_attention": layout.dp_attention,
        "layout": layout.label(),
        # SGLang starts with a pool shorter than one request and raises nothing: the error
        # is then servewise's words, not the engine's (a caller must not quote it as such)
        "engine_starts": tokens > 0,
        "error_from_engine": tokens <= 0,
    }
    if tokens > 0:
        breakdown["largest_max_model_len"] = tokens
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
