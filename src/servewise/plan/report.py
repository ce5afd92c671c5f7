"""``servewise model``: a model's shape, weights and KV bytes per token, as data."""

from __future__ import annotations

from typing import Any

from servewise.errors import UsageError
from servewise.plan.kv import sglang_cell_bytes, vllm_layer_specs
from servewise.plan.model import ModelInfo


def kv_per_token(model: ModelInfo, kv_cache_dtype: str) -> dict[str, Any]:
    """KV bytes per token at TP1 as vLLM (by layer kind) and SGLang (cell size) count them."""
    spec = model.spec
    out: dict[str, Any] = {"kv_cache_dtype": kv_cache_dtype}
    dtype = "fp8_ds_mla" if spec.family == "dsv4" and kv_cache_dtype in ("auto", "fp8") \
        else kv_cache_dtype
    by_kind: dict[str, float] = {}
    state = 0
    for index, page in vllm_layer_specs(spec, tp=1, block_size=256, kv_cache_dtype=dtype):
        if page.kind == "state":
            state += page.fixed_page
            continue
        if page.kind in ("sliding", "mla_sliding"):
            continue  # bounded by the window, not by the context
        kind = spec.layers[index].kind
        by_kind[kind] = by_kind.get(kind, 0.0) + page.page / page.block_size
    out["vllm_bytes_per_token_by_layer_kind"] = {k: round(v, 3) for k, v in by_kind.items()}
    out["vllm_bytes_per_token"] = round(sum(by_kind.values()), 3)
    out["linear_state_bytes_per_sequence"] = state
    windows = sorted({layer.window for layer in spec.layers if layer.kind == "sliding"})
    out["sliding_windows"] = windows
    out["sglang_cell_bytes"] = sglang_cell_bytes(spec, range(spec.num_layers), tp=1,
                                                 kv_cache_dtype=kv_cache_dtype)
    return out


def model_report(model: ModelInfo, *, kv_cache_dtype: str = "auto",
                 tensors: bool = False) -> dict[str, Any]:
    """The JSON of ``servewise model``."""
    report = model.to_dict()
    if model.spec.supported:
        try:
            report["kv"] = kv_per_token(model, kv_cache_dtype)
        except UsageError as exc:
            report["kv"] = {"error": exc.message}
    else:
        report["kv"] = None
    if tensors:
        roles = {item.tensor.name: item.role for item in model.classified}
        report["tensors"] = [
            {"name": t.name, "dtype": t.dtype, "shape": list(t.shape), "bytes": t.nbytes,
             "count": t.count, "role": roles[t.name]}
            for t in model.tensors
        ]
    return report
