"""The plan: what the engine will report for the given settings, and what to run instead.

:func:`make_plan` predicts the startup for the settings given (the engine's defaults for
the rest) and, alongside, ranks every parallel layout of the GPUs (single and multi-node)
with a reason for each that does not fit, recommends a ``--gpu-memory-utilization`` /
``--mem-fraction-static`` that leaves the named workspaces their room, and gives the
largest context one request can have and the concurrency at a context.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from servewise.errors import UsageError
from servewise.knowledge.accounting import EngineConstants
from servewise.knowledge.gpus import GpuSpec
from servewise.plan.model import ModelInfo
from servewise.plan.online_quant import online_quantized
from servewise.plan.recommendation import Recommendation, Workspace
from servewise.plan.requirements import apply_model_rules
from servewise.plan.sglang import fraction_window, sglang_startup
from servewise.plan.startup import Settings, Startup
from servewise.plan.vllm import vllm_startup
from servewise.plan.weights import Parallel

GIB = 2**30
#: Headroom kept free besides the named workspaces (allocator fragmentation, other
#: processes on the GPU). [uncertain] a round figure, not measured.
SAFETY_BYTES = GIB // 2
#: The largest utilization / fraction recommended.
MAX_FRACTION = 0.95


@dataclass(frozen=True)
class LayoutResult:
    """One parallel layout and how it fares."""

    layout: Parallel
    nodes: int
    startup: Startup | None
    reason: str | None
    guide: int = 0
    """How closely the layout follows the engines' guides and recipes (higher: closer);
    see :func:`guide_rank`."""

    @property
    def fits(self) -> bool:
        """Whether the engine starts with this layout."""
        return self.startup is not None and self.startup.fits

    def score(self) -> tuple[float, ...]:
        """Ranking key: fits, then the guides' order, fewer nodes, then KV capacity."""
        if self.startup is None:
            return (0, 0, 0, 0)
        total = self.startup.max_concurrency * self.layout.dp
        return (1 if self.fits else 0, self.guide, -self.nodes, total)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data."""
        s = self.startup
        return {
            "layout": self.layout.label(),
            "tp": self.layout.tp, "pp": self.layout.pp, "dp": self.layout.dp,
            "ep": self.layout.ep,
            "nodes": self.nodes,
            "fits": self.fits,
            "guide_rank": self.guide,
            "reason": self.reason or (s.error if s is not None else None),
            "weights_bytes_per_gpu": s.weights_bytes_per_gpu if s else None,
            "kv_cache_tokens": s.kv_cache_tokens if s else None,
            "max_concurrency": round(s.max_concurrency, 2) if s else None,
            "total_concurrency": round(s.max_concurrency * self.layout.dp, 2) if s else None,
            "largest_context_tokens": s.breakdown.get("largest_max_model_len") if s else None,
        }


@dataclass(frozen=True)
class Plan:
    """Everything ``servewise plan`` reports."""

    model: ModelInfo
    device: GpuSpec
    gpus_per_node: int
    nodes: int
    settings: Settings
    startup: Startup
    layouts: tuple[LayoutResult, ...]
    recommendation: Recommendation
    notes: tuple[str, ...] = field(default=())

    @property
    def fits(self) -> bool:
        """Whether the given (or recommended) settings start."""
        return self.startup.fits

    def to_dict(self) -> dict[str, Any]:
        """The JSON of ``servewise plan``; ``startup`` is the stable contract."""
        weights = self.model.weights
        return {
            "model": {
                "ref": self.model.ref,
                "source": self.model.source,
                "architecture": self.model.spec.family,
                "model_type": self.model.spec.model_type,
                "weights_bytes": weights.total_bytes,
                "unknown_dtypes": list(weights.unknown_dtypes),
            },
            "gpu": self.device.to_dict(),
            "gpus_per_node": self.gpus_per_node,
            "nodes": self.nodes,
            "engine": self.startup.engine,
            "engine_version": self.startup.engine_version,
            "layout": self.settings.layout.label(),
            "startup": self.startup.startup_dict(),
            "startup_detail": {
                "max_model_len": self.startup.max_model_len,
                **self.startup.breakdown,
                "notes": list(self.startup.notes),
            },
            "recommendation": self.recommendation.to_dict(),
            "layouts": [layout.to_dict() for layout in self.layouts],
            "notes": list(self.notes),
        }


def predict(model: ModelInfo, device: GpuSpec, settings: Settings,
            constants: EngineConstants) -> Startup:
    """The engine's startup for ``settings``."""
    if settings.engine == "sglang":
        return sglang_startup(model, device, settings, constants)
    if settings.engine != "vllm":
        raise UsageError(f"unknown engine {settings.engine!r}", hint="use vllm or sglang")
    return vllm_startup(model, device, settings, constants)


def workspaces(model: ModelInfo, settings: Settings, constants: EngineConstants
               ) -> list[Workspace]:
    """The post-pool allocations a plan must leave room for."""
    spec = model.spec
    out = []
    if spec.moe is not None:
        version = constants.version("sglang", "latest_read")
        out.append(Workspace(
            "MoE backend workspace (FlashInfer)",
            constants.integer("sglang", "flashinfer_moe_workspace_bytes", version),
            "sgl-project/sglang#33109",
        ))
    if settings.loads_mtp and spec.mtp_layers:
        mtp = sum(t.tensor.total_bytes for t in model.classified if t.role == "mtp")
        out.append(Workspace("MTP draft layer weights", mtp // max(settings.layout.tp, 1),
                             "the checkpoint's MTP tensors"))
    return out


def layouts_for(model: ModelInfo, gpus_per_node: int, nodes: int,
                engine: str = "vllm") -> list[tuple[Parallel, int]]:
    """Parallel layouts on one node up to all of them: TP within a node, PP and DP across.

    Each layout uses every GPU of the nodes it spans; with expert parallelism as well
    where the experts divide over ``TP x DP``. For SGLang, DP attention inside a full-node
    TP group too (``--tp N --dp N --enable-dp-attention``).
    """
    spec = model.spec
    out: list[tuple[Parallel, int]] = []
    for used in range(1, nodes + 1):
        total = gpus_per_node * used
        for tp in range(1, gpus_per_node + 1):
            if gpus_per_node % tp:
                continue
            rest = total // tp
            for pp in range(1, rest + 1):
                if rest % pp or pp > spec.num_layers:
                    continue
                dp = rest // pp
                out.append((Parallel(tp, pp, dp), used))
                # SGLang spreads experts over its TP group only (--ep-size <= --tp)
                ep_ok = engine != "sglang" or dp == 1
                if (spec.moe is not None and tp * dp > 1 and spec.moe.experts % (tp * dp) == 0
                        and ep_ok):
                    out.append((Parallel(tp, pp, dp, expert_parallel=True), used))
        if engine == "sglang" and gpus_per_node > 1:
            tp = gpus_per_node
            for dp in range(2, tp + 1):
                if tp % dp:
                    continue
                out.append((Parallel(tp, used, dp, dp_attention=True), used))
                if spec.moe is not None and spec.moe.experts % tp == 0:
                    out.append((Parallel(tp, used, dp, expert_parallel=True,
                                         dp_attention=True), used))
    return out


def guide_rank(model: ModelInfo, layout: Parallel, nodes: int, gpus_per_node: int) -> int:
    """How closely ``layout`` follows what vLLM's and SGLang's guides and recipes run.

    3: the recipe layout: for MoE models with latent (MLA-style) attention, whose KV cache
    TP cannot split (DeepSeek V2/V3/R1/V4, Kimi K2), data-parallel attention with expert
    parallelism (``DP=N EP=N``); for other models TP over a node's GPUs and PP across nodes,
    with EP for MoE. 2: the same shape without the preferred extra (TP within nodes, PP only
    across them). 1: other layouts without PP inside a node. 0: PP inside a node (the
    guides use PP only between nodes).
    (https://docs.vllm.ai/en/latest/serving/parallelism_scaling.html,
    https://docs.vllm.ai/projects/recipes/en/latest/DeepSeek/DeepSeek-V3.html)
    """
    spec = model.spec
    if layout.pp > nodes:
        return 0
    latent = any(layer.kind in ("mla", "dsa", "dsv4") for layer in spec.layers)
    if (spec.moe is not None and latent and layout.expert_parallel and layout.tp == 1
            and layout.pp == 1):
        return 3
    if (spec.moe is not None and latent and layout.dp_attention and layout.expert_parallel
            and layout.dp == layout.tp and layout.pp == nodes):
        return 3  # SGLang's DeepSeek recipe: --tp N --dp N --enable-dp-attention --ep N
    full_node_tp = layout.tp == gpus_per_node and layout.pp == nodes
    if full_node_tp:
        if spec.moe is not None and not latent:
            return 3 if layout.expert_parallel else 2
        return 2 if latent else 3
    return 1


def rank_layouts(model: ModelInfo, device: GpuSpec, settings: Settings, gpus_per_node: int,
                 nodes: int, constants: EngineConstants) -> list[LayoutResult]:
    """Every layout, best first, with why each that fails does."""
    results = []
    for layout, used_nodes in layouts_for(model, gpus_per_node, nodes, settings.engine):
        try:
            startup = predict(model, device, replace(settings, layout=layout), constants)
            reason = None if startup.fits else startup.error
        except UsageError as exc:
            startup, reason = None, exc.message
        results.append(LayoutResult(layout, used_nodes, startup, reason,
                                    guide_rank(model, layout, used_nodes, gpus_per_node)))
    results.sort(key=lambda r: r.score(), reverse=True)
    return results


def recommend(model: ModelInfo, device: GpuSpec, settings: Settings, best: Startup,
              constants: EngineConstants, verdict: dict[str, Any] | None = None
              ) -> Recommendation:
    """The utilization / fraction to use and the headroom it leaves."""
    named = tuple(workspaces(model, settings, constants))
    need = sum(w.bytes for w in named) + SAFETY_BYTES
    total = device.memory_bytes
    base = Recommendation(layout=settings.layout.label(), workspaces=named,
                          safety_bytes=SAFETY_BYTES, verdict=verdict or {})
    if device.is_cpu:
        return replace(base, note="CPU backend: the pool is the size given; no fraction to "
                       "choose")
    if settings.engine == "sglang":
        # one rule for the verdict and the advice (plan/sglang.py FractionWindow)
        window = fraction_window(model, device, settings, constants, extra_bytes=need)
        used = window.advice() or window.default
        return replace(base, fraction_window=window.to_dict(),
                       headroom_bytes=int(window.free_before_load * (1 - used)))
    utilization = round(min(MAX_FRACTION, 1 - need / total), 2)
    return replace(base, gpu_memory_utilization=utilization,
                   headroom_bytes=int(total * (1 - utilization)))


def _quantized(model: ModelInfo, method: str) -> tuple[ModelInfo, str]:
    """The model as the engine holds it after ``--quantization``, and what was planned."""
    try:
        return online_quantized(model, method)
    except KeyError:
        return model, (f"--quantization {method} is not modelled: planned with the weights "
                       "as stored, so the memory verdict may be too pessimistic")


def make_plan(model: ModelInfo, device: GpuSpec, settings: Settings, constants: EngineConstants,
              *, gpus_per_node: int, nodes: int = 1, context: int | None = None,
              explicit_layout: bool = False, given: frozenset[str] = frozenset(),
              notes: tuple[str, ...] = ()) -> Plan:
    """The whole plan for ``model`` on ``gpus_per_node`` x ``nodes`` devices.

    ``given`` names the flags the user set; the model's rules fill in the rest
    (:func:`~servewise.plan.requirements.apply_model_rules`). ``notes`` come first in the plan's.
    """
    settings, rule_notes = apply_model_rules(model, settings, given)
    if settings.quantization:
        model, quant_note = _quantized(model, settings.quantization)
        rule_notes.append(quant_note)
    if settings.layout.gpus > gpus_per_node * nodes:
        raise UsageError(
            f"the layout {settings.layout.label()} needs {settings.layout.gpus} GPUs; "
            f"--gpu gives {gpus_per_node} x {nodes} node(s)",
            hint="raise COUNT in --gpu NAME:COUNT or --nodes, or lower --tp/--pp/--dp",
        )
    layouts = rank_layouts(model, device, settings, gpus_per_node, nodes, constants)
    plan_notes: list[str] = [*notes, *rule_notes]
    chosen = settings
    startup: Startup | None = None
    if not explicit_layout and layouts and layouts[0].startup is not None:
        chosen = replace(settings, layout=layouts[0].layout)
        startup = layouts[0].startup  # rank_layouts predicted exactly these settings
    memory_given = (settings.gpu_memory_utilization is not None
                    or settings.mem_fraction_static is not None
                    or settings.kv_cache_memory_bytes is not None)
    if startup is None:
        startup = predict(model, device, chosen, constants)
    recommendation = recommend(model, device, chosen, startup, constants)
    if not memory_given and not device.is_cpu:
        key = "mem_fraction_static" if chosen.engine == "sglang" else "gpu_memory_utilization"
        value: Any = recommendation.fraction(key)
        if value is not None:
            with_headroom = replace(chosen, **{key: value})
            recommended = predict(model, device, with_headroom, constants)
            recommendation = replace(recommendation, startup=recommended.startup_dict())
    if startup.breakdown.get("largest_max_model_len") is not None:
        longest = min(startup.breakdown["largest_max_model_len"],
                      model.spec.max_position or startup.breakdown["largest_max_model_len"])
        recommendation = replace(recommendation, largest_context_tokens=longest)
    if context:
        at = predict(model, device, replace(chosen, max_model_len=context), constants)
        recommendation = replace(recommendation, context_tokens=context,
                                 concurrency_at_context=round(at.max_concurrency, 2))
    risk = verdict_risk(model, device, chosen, startup, constants)
    recommendation = replace(recommendation, verdict=risk)
    if risk.get("note"):
        plan_notes.append(risk["note"])
    if not any(layout.fits for layout in layouts):
        plan_notes.append(shortfall(model, device, layouts))
    return Plan(model, device, gpus_per_node, nodes, chosen, startup, tuple(layouts),
                recommendation, tuple(plan_notes))


#: A verdict whose margin is under this share of the device's memory is "near the edge":
#: run-to-run differences in the engine's profile (allocator, graph capture, other
#: processes) are of this order. [uncertain] a round figure.
EDGE_SHARE = 0.02


def verdict_risk(model: ModelInfo, device: GpuSpec, settings: Settings, startup: Startup,
                 constants: EngineConstants) -> dict[str, Any]:
    """How safe the fits / does-not-fit verdict is: the margin, and whether it holds over
    the range of total memory the GPU may have (a figure pinned only by the vendor's
    datasheet leaves a range; see :attr:`GpuSpec.memory_range`).

    Returns ``margin_bytes`` (KV memory left over one full-length request, negative when
    short), ``memory_pinned_by``, ``fits_at_low``/``fits_at_high`` and ``risk``
    (``low``, ``near the edge``, ``depends on unpinned memory``) with a ``note``.
    """
    out: dict[str, Any] = {"memory_pinned_by": device.memory_pinned_by}
    b = startup.breakdown
    margin = None
    if b.get("available_kv_bytes") is not None and b.get("bytes_per_block"):
        needed = b["bytes_per_block"] * b.get("blocks_per_request", 0)
        margin = int(b["available_kv_bytes"] - needed)
    out["margin_bytes"] = margin
    low, high = device.memory_range
    fits_low = fits_high = startup.fits
    # a margin wider than the whole range cannot flip: no need to predict the ends
    clear = margin is not None and abs(margin) > high - low
    if (low, high) != (device.memory_bytes, device.memory_bytes) and not clear:
        for size in {low, high} - {device.memory_bytes}:
            try:
                other = predict(model, replace(device, memory_bytes=size), settings, constants)
            except UsageError:
                continue
            if size == low:
                fits_low = other.fits
            else:
                fits_high = other.fits
    out.update({"memory_range_bytes": [low, high], "fits_at_low": fits_low,
                "fits_at_high": fits_high})
    if fits_low != fits_high:
        out["risk"] = "depends on unpinned memory"
        out["note"] = (
            f"the verdict turns on the GPU's total memory, which {device.memory_pinned_by} "
            f"does not pin: it fits at {high / GIB:.2f} GiB but not at {low / GIB:.2f} GiB; "
            "run nvidia-smi and pass --gpu-memory with its total (MiB) to settle it")
    elif margin is not None and abs(margin) < EDGE_SHARE * device.memory_bytes:
        out["risk"] = "near the edge"
        word = "left over" if margin >= 0 else "short"
        out["note"] = (
            f"near the edge: {abs(margin) / GIB:.2f} GiB per GPU {word} for one full-length "
            f"request, under {EDGE_SHARE:.0%} of the GPU; the engine's own profile can differ "
            "by that much, so lower --max-model-len or leave more memory to be safe")
    else:
        out["risk"] = "low"
    if device.memory_pinned_by == "vendor datasheet only" and "note" not in out:
        out["note"] = (f"{device.name}'s total memory is not pinned by an engine log or "
                       f"nvidia-smi output; planned with {device.memory_bytes / GIB:.2f} GiB "
                       f"(the vendor's GB as bytes; it may be up to {high / GIB:.2f} GiB)")
    return out


def shortfall(model: ModelInfo, device: GpuSpec, layouts: list[LayoutResult]) -> str:
    """How far the best layout is from fitting."""
    best = None
    for result in layouts:
        s = result.startup
        if s is None:
            continue
        available = s.breakdown.get("available_kv_bytes")
        if available is None:
            continue
        needed = s.breakdown.get("bytes_per_block", 0) * s.breakdown.get("blocks_per_request", 0)
        short = needed - available
        if best is None or short < best[0]:
            best = (short, result)
    if best is None:
        return f"{model.ref} does not fit on these GPUs with any layout"
    short, result = best
    return (f"{model.ref} does not fit anywhere: the best layout ({result.layout.label()}) is "
            f"{short / GIB:.2f} GiB per GPU short of one full-length request; add GPUs, "
            "lower --max-model-len or use a smaller quantization")
