"""Weight roles and per-rank placement on the bundled cards."""

from __future__ import annotations

import pytest

from servewise.knowledge.cards import find_card
from servewise.plan.resolve import card_model
from servewise.plan.weights import Parallel, per_rank, pp_layer_ranges


def _model(name: str):  # type: ignore[no-untyped-def]
    card = find_card(name)
    assert card is not None
    return card_model(card)


def test_roles_of_a_dense_model() -> None:
    model = _model("meta-llama/Llama-3.1-8B-Instruct")
    roles = model.weights.by_role
    assert roles["embeddings"] == roles["head"] == 128256 * 4096 * 2
    assert roles["experts"] == 0 and roles["dense_mlp"] == 32 * 3 * 4096 * 14336 * 2


def test_tp_splits_and_kv_heads_replicate() -> None:
    model = _model("meta-llama/Llama-3.1-8B-Instruct")
    one = per_rank(model.classified, model.spec, Parallel())[0].by_role
    tp8 = per_rank(model.classified, model.spec, Parallel(tp=8))[0].by_role
    tp16 = per_rank(model.classified, model.spec, Parallel(tp=16))[0].by_role
    assert tp8["dense_mlp"] * 8 == one["dense_mlp"]
    # 8 KV heads: at TP16 each rank still holds one whole KV head
    kv = 32 * 2 * 1024 * 4096 * 2
    assert tp16["attention"] == (one["attention"] - kv) // 16 + kv // 8


def test_expert_parallel_and_pipeline_stages() -> None:
    model = _model("deepseek-ai/DeepSeek-R1")
    tp8 = per_rank(model.classified, model.spec, Parallel(tp=8))[0]
    ep8 = per_rank(model.classified, model.spec, Parallel(dp=8, expert_parallel=True))[0]
    assert ep8.by_role["experts"] == pytest.approx(tp8.by_role["experts"], rel=1e-6)
    assert ep8.by_role["attention"] > tp8.by_role["attention"]  # attention replicated per DP
    stages = per_rank(model.classified, model.spec, Parallel(pp=2))
    assert stages[0].by_role["head"] == 0 and stages[1].by_role["embeddings"] == 0
    assert stages[0].by_role["mtp"] == stages[1].by_role["mtp"] == 0
    assert [len(r) for r in pp_layer_ranges(61, 4)] == [15, 15, 16, 15]
    assert [len(r) for r in pp_layer_ranges(61, 2)] == [31, 30]


def test_mtp_loads_only_when_asked() -> None:
    model = _model("deepseek-ai/DeepSeek-V4-Flash")
    plain = per_rank(model.classified, model.spec, Parallel(tp=2))[0].by_role["mtp"]
    draft = per_rank(model.classified, model.spec, Parallel(tp=2), load_mtp=True)[0]
    assert plain == 0 and draft.by_role["mtp"] > 0


def test_fused_expert_tensors_split_under_expert_parallelism() -> None:
    model = _model("openai/gpt-oss-120b")  # [experts, ...] blocks, one tensor per layer
    one = per_rank(model.classified, model.spec, Parallel())[0].by_role["experts"]
    ep4 = per_rank(model.classified, model.spec, Parallel(dp=4, expert_parallel=True))[0]
    assert ep4.by_role["experts"] == pytest.approx(one / 4, rel=1e-3)


def test_moe_profile_peak_follows_the_fused_moe_workspaces() -> None:
    """vLLM 0.32 TritonExperts: workspace13 (M, top_k, max(I, H)) + workspace2
    (M, top_k, max(2I, H)) per MoE layer; DP+EP gathers every DP rank's tokens first."""
    from dataclasses import replace

    from servewise.knowledge.accounting import load_engine_constants
    from servewise.plan.resolve import load_model
    from servewise.plan.startup import Settings
    from servewise.plan.vllm import activation_bytes
    from servewise.versions import EngineVersion

    model = load_model("qwen3-235b-a22b-fp8")
    spec = model.spec
    assert spec.moe is not None
    constants = load_engine_constants()
    version = EngineVersion.parse("0.32.0")
    one = Settings(layout=Parallel(tp=4))
    base = activation_bytes(model, one, 8192, 256, constants, version)
    moe, hidden = spec.moe, spec.hidden
    inter = moe.intermediate / 4
    per_token = moe.top_k * (max(inter, hidden) + max(2 * inter, hidden))
    doubled = activation_bytes(model, one, 16384, 256, constants, version)
    # the MoE workspaces are linear in the batched tokens
    assert doubled - base >= 8192 * per_token * 2
    dp = replace(one, layout=Parallel(tp=1, dp=4, expert_parallel=True))
    gathered = activation_bytes(model, dp, 8192, 256, constants, version)
    assert gathered > 3 * base  # four ranks' tokens through unsharded experts
