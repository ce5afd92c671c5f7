"""Engine rules read in vLLM's source, version by version (issue 30).

The profile peak is the larger of the dummy forward and the sampler warm-up; hybrid models
hold two state pages per linear-attention group with prefix caching on ('align'), which is
the default for them from 0.26.0; the 'GPU KV cache size' line counts
``max_concurrency * max_model_len`` from 0.22.0; ``--kv-cache-dtype auto`` follows a ModelOpt
checkpoint's declared KV cache from 0.14.0; the "estimated maximum model length" of vLLM's
error is its binary search over the pool.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from servewise.formats.hfconfig import HfConfig, config_from_mapping
from servewise.knowledge.accounting import load_engine_constants
from servewise.knowledge.gpus import resolve_gpu
from servewise.plan.kv import (
    bytes_per_block,
    checkpoint_kv_cache_dtype,
    pages_per_request,
    vllm_groups,
    vllm_layer_specs,
    vllm_max_model_len,
)
from servewise.plan.model import ModelInfo
from servewise.plan.model_spec import model_spec
from servewise.plan.resolve import load_model
from servewise.plan.startup import Settings
from servewise.plan.vllm import activation_bytes, forward_bytes, sampler_bytes, vllm_startup
from servewise.versions import EngineVersion
from support.plan_corpus import load_corpus

CONSTANTS = load_engine_constants()


def _with_quantization(model: ModelInfo, quantization: dict[str, object]) -> ModelInfo:
    raw = dict(model.config.raw)
    raw["quantization_config"] = quantization
    config = HfConfig(raw, raw if model.config.text is model.config.raw else model.config.text,
                      model.config.source)
    return dataclasses.replace(model, config=config)


def test_profile_peak_is_the_larger_of_forward_and_sampler() -> None:
    model = load_model("llama-3.1-8b-instruct")
    version = EngineVersion.parse("0.19.0")
    settings = Settings(engine_version="0.19.0")
    forward = forward_bytes(model, settings, 8192, CONSTANTS, version)
    sampler = sampler_bytes(model, 8192, 1024, CONSTANTS, version)
    assert sampler > forward > 0
    assert activation_bytes(model, settings, 8192, 1024, CONSTANTS, version) == int(sampler)
    # a small batch of sequences: the forward dominates
    few = activation_bytes(model, settings, 8192, 8, CONSTANTS, version)
    assert few == int(forward)
    # the sort-based top-k/top-p before 0.18 holds more copies than the Triton one after
    old = sampler_bytes(model, 8192, 1024, CONSTANTS, EngineVersion.parse("0.16.0"))
    assert old > sampler


def _hybrid(version: str, prefix: bool | None) -> dict[str, object]:
    model = load_model("qwen3.6-35b-a3b-nvfp4")
    settings = Settings(engine_version=version, kv_cache_dtype="fp8", max_model_len=131072,
                        max_num_batched_tokens=8192, max_num_seqs=1,
                        enable_prefix_caching=prefix)
    startup = vllm_startup(model, resolve_gpu("rtx-5090"), settings, CONSTANTS)
    return {"pages": startup.breakdown["blocks_per_request"], "tokens": startup.kv_cache_tokens,
            "concurrency": startup.max_concurrency, "groups": startup.breakdown["kv_groups"],
            "notes": startup.notes}


def test_hybrid_prefix_caching_holds_two_state_pages_per_group() -> None:
    off = _hybrid("0.24.0", None)  # hybrids default to no prefix caching before 0.26
    on = _hybrid("0.24.0", True)
    default_new = _hybrid("0.26.0", None)
    linear_groups = int(str(off["groups"])) - 1  # one full-attention group
    assert on["pages"] == int(str(off["pages"])) + linear_groups
    assert default_new["pages"] == on["pages"]
    notes = on["notes"]
    assert isinstance(notes, (list, tuple))
    assert any("mamba_cache_mode align" in str(note) for note in notes)


def test_token_line_counts_concurrency_times_length_from_0_22() -> None:
    new = _hybrid("0.24.0", True)
    assert new["tokens"] == int(float(str(new["concurrency"])) * 131072)
    old = _hybrid("0.20.0", True)  # num_blocks // groups * block: a hybrid's tokens shrink
    assert int(str(old["tokens"])) < float(str(old["concurrency"])) * 131072 / 2


def test_checkpoint_declared_kv_cache_dtype() -> None:
    assert checkpoint_kv_cache_dtype({"quant_method": "modelopt",
                                      "kv_cache_quant_algo": "FP8"}) == "fp8_e4m3"
    assert checkpoint_kv_cache_dtype({"quant_method": "modelopt", "quantization": {
        "kv_cache_quant_algo": "NVFP4"}}) == "nvfp4"
    assert checkpoint_kv_cache_dtype({"quant_method": "modelopt", "kv_cache_scheme": {
        "dynamic": False, "num_bits": 8, "type": "float"}}) == "fp8_e4m3"
    assert checkpoint_kv_cache_dtype({"quant_method": "modelopt",
                                      "kv_cache_quant_algo": "INT4"}) == "auto"
    assert checkpoint_kv_cache_dtype({"quant_method": "fp8",
                                      "kv_cache_quant_algo": "FP8"}) is None
    assert checkpoint_kv_cache_dtype({"quant_method": "modelopt"}) is None


def test_auto_follows_the_checkpoint_from_0_14() -> None:
    base = load_model("llama-3.1-8b-instruct")
    model = _with_quantization(base, {"quant_method": "modelopt", "quant_algo": "NVFP4",
                                      "kv_cache_quant_algo": "FP8"})
    gpu = resolve_gpu("h100-sxm")
    plain = vllm_startup(base, gpu, Settings(engine_version="0.19.0", max_model_len=8192),
                         CONSTANTS)
    declared = vllm_startup(model, gpu, Settings(engine_version="0.19.0", max_model_len=8192),
                            CONSTANTS)
    before = vllm_startup(model, gpu, Settings(engine_version="0.13.0", max_model_len=8192),
                          CONSTANTS)
    assert declared.breakdown["kv_cache_dtype"] == "fp8_e4m3"
    assert before.breakdown["kv_cache_dtype"] == "auto"
    assert declared.kv_bytes_per_token * 2 == plain.kv_bytes_per_token


def test_estimated_max_model_len_of_a_logged_error_within_two_percent() -> None:
    """vLLM's binary search over the pool (the number in its "estimated maximum model
    length" error), replayed from the pool the log states: eugr/spark-vllm-docker#396
    (MiniMax-M2.7 AWQ, TP2, 0.29.1rc1; its architecture is MiniMax-M2.5's, which the log's
    own "24.0 GiB needed for 196,608 tokens" confirms to the byte)."""
    record = next(r for r in load_corpus()
                  if r.id == "eugr/spark-vllm-docker#396 (gpu_memory_utilization 0.8, failed)")
    path = Path(__file__).resolve().parents[1] / "data" / "configs" / \
        "MiniMaxAI--MiniMax-M2.5_config.json"
    spec = model_spec(config_from_mapping(json.loads(path.read_text()), source=str(path)))
    tp = record.settings["layout"]["tp"]
    specs = [page for _, page in vllm_layer_specs(spec, tp=tp, block_size=16,
                                                  kv_cache_dtype="auto")]
    groups = vllm_groups(specs)
    mml = record.settings["max_model_len"]
    needed = bytes_per_block(groups) * pages_per_request(groups, mml, 8192)
    assert round(needed / 2**30, 2) == record.logged["kv_needed_gib"]
    available = int(record.logged["available_kv_gib"] * 2**30)
    estimated = vllm_max_model_len(groups, available, mml, 8192)
    logged = record.logged["estimated_max_model_len"]
    assert abs(estimated / logged - 1) <= 0.02, (estimated, logged)


def test_the_vision_encoder_profile_follows_vllm_s_dummy_batch() -> None:
    from servewise.plan.vision import max_items, vision_tower

    gemma = vision_tower(load_model("gemma-3-27b-it"))
    assert gemma is not None and (gemma.tokens, gemma.patches) == (256, 4096)
    # encoder budget 8192 tokens / 256 a picture: 32 pictures, however many sequences
    assert max_items(gemma, 8192, 1024, 8192) == 32
    qwen = vision_tower(load_model("qwen3.6-35b-a3b-nvfp4"))
    assert qwen is not None and (qwen.tokens, qwen.patches) == (16384, 65536)
    # one 4096 x 4096 picture fills the budget of max(8192, 16384) tokens
    assert max_items(qwen, 8192, 1, 131072) == 1
    # an encoder not read: the planner keeps its single allowance
    assert vision_tower(load_model("llama-3.1-8b-instruct")) is None


def test_speculative_tokens_add_state_pages_from_0_15() -> None:
    from servewise.plan.kv import PageSpec

    state = PageSpec("state", 16, 0, fixed_page=1 << 20, speculative_pages=2)
    assert state.pages_per_request(131072, 8192) == 3
    aligned = PageSpec("state", 16, 0, fixed_page=1 << 20, mamba_mode="align",
                       speculative_pages=2)
    assert aligned.pages_per_request(131072, 8192) == 4
    model = load_model("qwen3.6-35b-a3b-nvfp4")
    device = resolve_gpu("rtx-5090")
    from servewise.plan.speculative import Speculative

    mtp = Speculative("mtp", 2)
    base = dict(max_model_len=131072, kv_cache_dtype="fp8", max_num_seqs=1,
                max_num_batched_tokens=8192, enable_prefix_caching=False)
    new = vllm_startup(model, device, Settings(engine_version="0.20.0", speculative_config=mtp,
                                               **base), CONSTANTS)  # type: ignore[arg-type]
    old = vllm_startup(model, device, Settings(engine_version="0.14.1", speculative_config=mtp,
                                               **base), CONSTANTS)  # type: ignore[arg-type]
    assert new.breakdown["blocks_per_request"] > old.breakdown["blocks_per_request"]
