"""KV page sizes and groups as vLLM computes them; SGLang cells."""

from __future__ import annotations

import pytest

from servewise.errors import UsageError
from servewise.plan.kv import (
    bytes_per_block,
    kv_heads_per_rank,
    pages_per_request,
    sglang_cell_bytes,
    vllm_groups,
    vllm_layer_specs,
)
from servewise.plan.model_spec import model_spec
from support.configs import shared_config


def _groups(name: str, tp: int = 1, block: int = 16, dtype: str = "auto", packed: bool = False):
    spec = model_spec(shared_config(name))
    specs = [p for _, p in vllm_layer_specs(spec, tp=tp, block_size=block, kv_cache_dtype=dtype)]
    return spec, vllm_groups(specs, packed=packed)


def test_gqa_page_and_tp_replication() -> None:
    _, groups = _groups("meta-llama--Llama-3.1-8B-Instruct")
    assert len(groups) == 1 and groups[0].spec.page == 16 * 8 * 256 * 2
    assert bytes_per_block(groups) == 32 * 16 * 8 * 256 * 2
    _, tp8 = _groups("Qwen--Qwen3-235B-A22B-FP8", tp=8)  # 4 KV heads: one per rank
    assert tp8[0].spec.state_bytes == 1 * 256 * 2
    assert kv_heads_per_rank(4, 8) == 1 and kv_heads_per_rank(8, 2) == 4


def test_mla_is_replicated_under_tp() -> None:
    _, tp1 = _groups("deepseek-ai--DeepSeek-R1", block=64)
    _, tp8 = _groups("deepseek-ai--DeepSeek-R1", tp=8, block=64)
    assert tp1[0].spec.state_bytes == tp8[0].spec.state_bytes == 576 * 2
    _, fp8 = _groups("deepseek-ai--DeepSeek-R1", block=64, dtype="fp8_ds_mla")
    assert fp8[0].spec.state_bytes == 656


def test_gemma3_hybrid_groups() -> None:
    _, groups = _groups("google--gemma-3-27b-it")
    assert len(groups) == 7 and bytes_per_block(groups) == 10 * 16 * 16 * 256 * 2
    # 6 sliding groups at the window + one full group at the context
    assert pages_per_request(groups, 8192, 8192) == 512 + 6 * 513
    assert pages_per_request(groups, 8192, 512) == 512 + 6 * (96 + 1)


def test_deepseek_v4_packs_five_groups() -> None:
    _, groups = _groups("deepseek-ai--DeepSeek-V4-Flash", block=256, dtype="fp8_ds_mla",
                        packed=True)
    assert len(groups) == 5
    assert bytes_per_block(groups) == 21 * 37440 + 21 * 8640 + 20 * 1728
    pages = pages_per_request(groups, 121344, 8192)
    assert pages == 474 + 2 * 131 + 2051 + 1041


def test_parallelism_that_does_not_divide_heads() -> None:
    spec = model_spec(shared_config("meta-llama--Llama-3.1-8B-Instruct"))
    with pytest.raises(UsageError, match="does not divide the 32 attention heads"):
        vllm_layer_specs(spec, tp=3, block_size=16, kv_cache_dtype="auto")
    with pytest.raises(UsageError, match="--kv-cache-dtype"):
        vllm_layer_specs(spec, tp=1, block_size=16, kv_cache_dtype="int3")


def test_sglang_cell() -> None:
    spec = model_spec(shared_config("Qwen--Qwen3-235B-A22B-FP8"))
    assert sglang_cell_bytes(spec, range(94), tp=4, kv_cache_dtype="auto") == 94 * 256 * 2
    r1 = model_spec(shared_config("deepseek-ai--DeepSeek-R1"))
    assert sglang_cell_bytes(r1, range(61), tp=8, kv_cache_dtype="auto") == 61 * 576 * 2
