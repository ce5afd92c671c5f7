"""Plain-text rendering of ``servewise plan`` and ``servewise model`` (no rich: fast start)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

GIB = 2**30


def gib(value: int | float | None) -> str:
    """Bytes as ``12.34 GiB`` (``-`` for None)."""
    return "-" if value is None else f"{value / GIB:.2f} GiB"


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A left-aligned text table."""
    cells = [[str(h) for h in headers]] + [["-" if c is None else str(c) for c in r] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip()
             for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines) + "\n"


_RECOMMENDATION_LABELS = (
    ("layout", "layout"),
    ("gpu_memory_utilization", "gpu memory utilization"),
    ("mem_fraction_static", "mem fraction static"),
    ("mem_fraction_static_default", "SGLang's default fraction"),
    ("lowest_viable_mem_fraction_static", "lowest that starts"),
    ("lowest_fraction_for_one_request", "lowest for one request"),
    ("highest_fraction_with_headroom", "highest with headroom"),
    ("largest_context_tokens", "largest context tokens"),
    ("context_tokens", "context tokens"),
    ("concurrency_at_context", "concurrency at context"),
)
"""The recommendation's keys in the order shown, with their labels."""

_RISK_WORDS = {"low": "firm", "near the edge": "near the edge",
               "depends on unpinned memory": "depends on unpinned memory"}


def _verdict(fits: bool, verdict: dict[str, Any]) -> str:
    """The verdict line: fits or not, by how much, and how firm (never "low risk" beside a
    failure: the risk is that of the verdict being wrong, said as such)."""
    margin = verdict.get("margin_bytes")
    text = "fits" if fits else "does not fit"
    if margin is not None:
        word = "left over" if margin >= 0 else "short of"
        text += f": {gib(abs(margin))} per GPU {word} one full-length request"
    risk = _RISK_WORDS.get(verdict["risk"], verdict["risk"])
    return text + f" ({risk}; GPU memory pinned by {verdict.get('memory_pinned_by')})"


def plan_text(plan: dict[str, Any]) -> str:
    """The human form of a plan."""
    s = plan["startup"]
    d = plan["startup_detail"]
    gpu = plan["gpu"]
    model = plan["model"]
    out = [
        f"{model['ref']} ({model['architecture']}, {gib(model['weights_bytes'])} of weights) on "
        f"{plan['gpus_per_node']} x {gpu['name']} ({gib(gpu['memory_bytes'])}, "
        f"{gpu['memory_source']}) x {plan['nodes']} node(s)",
        f"{plan['engine']} {plan['engine_version']}, {plan['layout']}, "
        f"max_model_len {d.get('max_model_len')}",
        "",
        "startup (per GPU):",
        f"  fits                  {'yes' if s['fits'] else 'NO'}",
        f"  weights               {gib(s['weights_bytes_per_gpu'])}",
        f"  KV bytes per token    {s['kv_bytes_per_token']:.1f}",
        f"  KV cache              {gib(s['kv_cache_bytes'])}",
        f"  KV cache tokens       {s['kv_cache_tokens']:,}",
        f"  max concurrency       {s['max_concurrency']:.2f}x (requests of "
        f"{d.get('max_model_len') or 0:,} tokens at once, per replica: what the engine logs)",
    ]
    if s["error"]:
        out.append(f"  error                 {s['error']}")
    for note in d.get("notes", []):
        out.append(f"  note: {note}")
    rec = plan["recommendation"]
    out += ["", "recommendation:"]
    for key, label in _RECOMMENDATION_LABELS:
        if rec.get(key) is not None:
            out.append(f"  {label:<26}{rec[key]}")
    if "mem_fraction_static" in rec and rec["mem_fraction_static"] is None:
        out.append(f"  {'mem fraction static':<26}none: no fraction starts with headroom")
    if rec.get("headroom_bytes") is not None:
        out.append(f"  {'headroom':<26}{gib(rec['headroom_bytes'])} (workspaces: "
                   + (", ".join(f"{w['name']} {gib(w['bytes'])}" for w in rec["workspaces"])
                      or "none named") + ")")
    verdict = rec.get("verdict") or {}
    if verdict.get("risk"):
        out.append(f"  {'verdict as planned':<26}" + _verdict(s["fits"], verdict))
    if "startup" in rec:
        r = rec["startup"]
        out.append(f"  {'with it':<26}{'fits' if r['fits'] else 'does not fit'}: "
                   f"{r['kv_cache_tokens']:,} tokens, {r['max_concurrency']:.2f}x")
    rows = [(lay["layout"], lay["nodes"], "yes" if lay["fits"] else "no",
             gib(lay["weights_bytes_per_gpu"]),
             f"{lay['kv_cache_tokens']:,}" if lay["kv_cache_tokens"] is not None else None,
             lay["total_concurrency"], (lay["reason"] or "")[:90])
            for lay in plan["layouts"]]
    out += ["", "layouts (the engines' guides first: TP within a node, PP across nodes, "
            "DP+EP for latent-attention MoE):", table(
        ("layout", "nodes", "fits", "weights/GPU", "KV tokens/GPU", "full-length reqs, all "
         "replicas", "why not"), rows)]
    return "\n".join(out)


def model_text(report: dict[str, Any]) -> str:
    """The human form of ``servewise model``."""
    arch = report["architecture"]
    weights = report["weights"]
    out = [
        f"{report['ref']} ({report['source']}" + (f" @ {report['revision']}"
                                                 if report.get("revision") else "") + ")",
        f"  {arch['model_type']} / {arch['architecture']}: {arch['family']}"
        + ("" if arch["supported"] else f" -- NOT SUPPORTED: {arch['unsupported_reason']}"),
        f"  layers {arch['num_layers']}, hidden {arch['hidden_size']}, heads "
        f"{arch['num_attention_heads']} (KV {arch['num_kv_heads']}), head_dim "
        f"{arch['head_dim']}, vocab {arch['vocab_size']}, context "
        f"{arch['max_position_embeddings']}",
        "  layer kinds: " + ", ".join(f"{k} {v}" for k, v in arch["layer_kinds"].items()),
    ]
    if arch.get("moe"):
        moe = arch["moe"]
        out.append(f"  MoE: {moe['experts']} experts, top-{moe['top_k']}, "
                   f"intermediate {moe['moe_intermediate_size']}, shared {moe['shared_experts']}")
    out.append(f"  weights: {gib(weights['total_bytes'])} ({weights['total_bytes']:,} bytes) in "
               f"{weights['tensors']:,} tensors, {report['files'] or '-'} file(s)")
    out.append(table(("role", "size", "bytes"), [
        (role, gib(size), f"{size:,}") for role, size in weights["bytes_by_role"].items()]))
    out.append(table(("dtype", "size"), [
        (dtype, gib(size)) for dtype, size in weights["bytes_by_dtype"].items()]))
    if weights["unknown_dtypes"]:
        out.append("  unknown dtypes (kept, sized by offsets): "
                   + ", ".join(weights["unknown_dtypes"]))
    kv = report.get("kv")
    if kv and "error" not in kv:
        out.append(f"  KV per token (TP1, {kv['kv_cache_dtype']}): vLLM "
                   + ", ".join(f"{k} {v}" for k, v in
                               kv["vllm_bytes_per_token_by_layer_kind"].items())
                   + f"; SGLang cell {kv['sglang_cell_bytes']} B")
        if kv["linear_state_bytes_per_sequence"]:
            out.append(f"  linear-attention state per sequence: "
                       f"{gib(kv['linear_state_bytes_per_sequence'])}")
    for note in report.get("notes", []):
        out.append(f"  note: {note}")
    for source in report.get("provenance", []):
        out.append(f"  source: {source}")
    if report.get("tensors"):
        out.append(table(("tensor", "dtype", "shape", "count", "role"), [
            (t["name"], t["dtype"], "x".join(map(str, t["shape"])), t["count"], t["role"])
            for t in report["tensors"]]))
    return "\n".join(out) + "\n"
