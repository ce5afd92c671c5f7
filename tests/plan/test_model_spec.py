"""Architecture specs from the real configs of the dev-log models."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from servewise.formats.hfconfig import config_from_mapping
from servewise.plan.model_spec import model_spec
from support.configs import shared_config


@pytest.mark.parametrize(
    ("name", "family", "kinds"),
    [
        ("meta-llama--Llama-3.1-8B-Instruct", "dense", {"full": 32}),
        ("google--gemma-3-27b-it", "dense-hybrid-sliding", {"sliding": 52, "full": 10}),
        ("openai--gpt-oss-120b", "moe-hybrid-sliding", {"sliding": 18, "full": 18}),
        ("Qwen--Qwen3-235B-A22B-FP8", "moe", {"full": 94}),
        ("deepseek-ai--DeepSeek-R1", "mla", {"mla": 61}),
        ("moonshotai--Kimi-VL-A3B-Instruct", "mla", {"mla": 27}),
        ("deepseek-ai--DeepSeek-V4-Flash", "dsv4", {"dsv4": 43}),
        ("nvidia--Qwen3.6-35B-A3B-NVFP4", "gdn-hybrid", {"gdn": 30, "full": 10}),
    ],
)
def test_families_and_layer_kinds(name: str, family: str, kinds: dict[str, int]) -> None:
    spec = model_spec(shared_config(name))
    assert spec.supported and spec.family == family and spec.layer_kinds == kinds


def test_mla_and_dsv4_details() -> None:
    r1 = model_spec(shared_config("deepseek-ai--DeepSeek-R1"))
    assert r1.layers[0].latent == 576 and r1.mtp_layers == 1 and r1.moe is not None
    assert r1.moe.dense_layers == 3 and r1.moe.experts == 256
    v4 = model_spec(shared_config("deepseek-ai--DeepSeek-V4-Flash"))
    ratios = [layer.compress_ratio for layer in v4.layers]
    assert ratios.count(4) == 21 and ratios.count(128) == 20 and ratios.count(0) == 2
    assert all(layer.index_head_dim == 128 for layer in v4.layers if layer.compress_ratio == 4)


def test_gemma3_defaults_are_named() -> None:
    spec = model_spec(shared_config("google--gemma-3-27b-it"))
    assert spec.vocab == 262208 and spec.tie_embeddings
    assert any("transformers defaults" in note for note in spec.notes)


def test_gdn_state_shape() -> None:
    spec = model_spec(shared_config("nvidia--Qwen3.6-35B-A3B-NVFP4"))
    gdn = next(layer for layer in spec.layers if layer.kind == "gdn")
    assert (gdn.state_heads, gdn.state_k, gdn.state_v) == (32, 128, 128)
    assert gdn.conv_dim == 2 * 16 * 128 + 32 * 128 and gdn.conv_kernel == 4


def test_unknown_architecture_is_reported_not_guessed() -> None:
    config = config_from_mapping({"model_type": "rwkv7", "architectures": ["Rwkv7ForCausalLM"],
                                  "hidden_size": 2048, "num_hidden_layers": 24,
                                  "num_attention_heads": 32})
    spec = model_spec(config)
    assert not spec.supported and "rwkv7" in spec.unsupported_reason
    assert spec.hidden == 2048 and spec.num_layers == 24  # what is known is kept


def test_nemotron_h_pattern() -> None:
    config = config_from_mapping({
        "model_type": "nemotron_h", "architectures": ["NemotronHForCausalLM"],
        "hidden_size": 4096, "num_hidden_layers": 6, "num_attention_heads": 32,
        "num_key_value_heads": 8, "head_dim": 128, "hybrid_override_pattern": "M-M*-M",
        "mamba_num_heads": 128, "mamba_head_dim": 64, "ssm_state_size": 128, "n_groups": 8,
        "conv_kernel": 4, "vocab_size": 131072})
    spec = model_spec(config)
    assert spec.layer_kinds == {"mamba2": 3, "none": 2, "full": 1}


def test_deepseek_v4_in_transformers_5_spelling() -> None:
    config = config_from_mapping({
        "model_type": "deepseek_v4", "architectures": ["DeepseekV4ForCausalLM"],
        "hidden_size": 256, "num_hidden_layers": 3, "num_attention_heads": 64,
        "num_key_value_heads": 1, "head_dim": 512, "index_head_dim": 128,
        "layer_types": ["sliding_attention", "compressed_sparse_attention",
                        "heavily_compressed_attention"],
        "compress_rates": {"compressed_sparse_attention": 4, "heavily_compressed_attention": 128},
    })
    spec = model_spec(config)
    assert spec.supported and [layer.compress_ratio for layer in spec.layers] == [0, 4, 128]


def test_minimax_m2_is_full_attention_moe() -> None:
    """MiniMax-M2.x (was: exit 2 "unknown family"): GQA on every layer, 256 experts, top-8."""
    config = config_from_mapping({
        "model_type": "minimax_m2", "architectures": ["MiniMaxM2ForCausalLM"],
        "hidden_size": 3072, "num_attention_heads": 48, "num_key_value_heads": 8,
        "head_dim": 128, "num_hidden_layers": 62, "intermediate_size": 1536,
        "num_local_experts": 256, "num_experts_per_tok": 8, "vocab_size": 200064,
        "max_position_embeddings": 196608, "torch_dtype": "bfloat16"}, source="test")
    spec = model_spec(config)
    assert spec.supported and spec.family == "moe"
    assert spec.layer_kinds == {"full": 62}
    assert spec.moe is not None and (spec.moe.experts, spec.moe.top_k) == (256, 8)


def test_llama4_chunked_attention_on_rope_layers() -> None:
    config = config_from_mapping({
        "model_type": "llama4", "architectures": ["Llama4ForConditionalGeneration"],
        "text_config": {"model_type": "llama4_text", "hidden_size": 5120,
                        "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128,
                        "num_hidden_layers": 48, "intermediate_size": 8192,
                        "num_local_experts": 16, "num_experts_per_tok": 1,
                        "attention_chunk_size": 8192, "vocab_size": 202048,
                        "max_position_embeddings": 10485760},
        "vision_config": {}, "torch_dtype": "bfloat16"}, source="test")
    spec = model_spec(config)
    assert spec.supported
    assert spec.layer_kinds == {"sliding": 36, "full": 12}
    assert {layer.window for layer in spec.layers if layer.kind == "sliding"} == {8192}
    assert any("chunked local attention" in note for note in spec.notes)


def test_kimi_linear_reads_kda_and_mla_layers() -> None:
    config = config_from_mapping({
        "model_type": "kimi_linear", "architectures": ["KimiLinearForCausalLM"],
        "hidden_size": 2304, "num_attention_heads": 32, "num_hidden_layers": 27,
        "kv_lora_rank": 512, "qk_rope_head_dim": 64, "intermediate_size": 9216,
        "num_experts": 256, "num_experts_per_token": 8, "moe_intermediate_size": 1024,
        "vocab_size": 163840, "max_position_embeddings": 1048576,
        "linear_attn_config": {"kda_layers": [i for i in range(1, 28) if i % 4],
                               "full_attn_layers": [4, 8, 12, 16, 20, 24],
                               "num_heads": 32, "head_dim": 128, "short_conv_kernel_size": 4},
        "torch_dtype": "bfloat16"}, source="test")
    spec = model_spec(config)
    assert spec.supported and spec.family == "kda-hybrid"
    assert spec.layer_kinds == {"gdn": 21, "mla": 6}
    kda = next(layer for layer in spec.layers if layer.kind == "gdn")
    assert (kda.state_heads, kda.state_k, kda.conv_dim) == (32, 128, 3 * 32 * 128)
    assert spec.moe is not None and spec.moe.top_k == 8


def test_kimi_linear_without_layer_lists_is_refused_with_the_reason() -> None:
    config = config_from_mapping({
        "model_type": "kimi_linear", "hidden_size": 64, "num_attention_heads": 4,
        "num_hidden_layers": 2}, source="test")
    spec = model_spec(config)
    assert not spec.supported and "linear_attn_config" in spec.unsupported_reason


REAL_CONFIGS = Path(__file__).resolve().parents[1] / "data" / "configs"


@pytest.mark.parametrize("name,family,kinds", [
    ("MiniMaxAI--MiniMax-M2.5", "moe", {"full": 62}),
    ("meta-llama--Llama-4-Scout-17B-16E-Instruct", "moe-hybrid-sliding",
     {"sliding": 36, "full": 12}),
    ("moonshotai--Kimi-K3", "kda-hybrid", {"gdn": 69, "mla": 24}),
    ("zai-org--GLM-5.1", "dsa", {"dsa": 78}),
    ("Qwen--Qwen3-VL-30B-A3B-Instruct", "moe", {"full": 48}),
])
def test_real_configs_of_families_refused_before(name: str, family: str,
                                                 kinds: dict[str, int]) -> None:
    data = json.loads((REAL_CONFIGS / f"{name}_config.json").read_text())
    spec = model_spec(config_from_mapping(data, source=name))
    assert spec.supported, spec.unsupported_reason
    assert spec.family == family and spec.layer_kinds == kinds


def test_a_new_architecture_is_refused_with_its_name_not_guessed() -> None:
    """Gemma 4 (global layers with their own head_dim and KV heads) is not guessed."""
    config = config_from_mapping({"model_type": "gemma4_text", "hidden_size": 2816,
                                  "num_attention_heads": 16, "num_hidden_layers": 30,
                                  "global_head_dim": 512}, source="test")
    spec = model_spec(config)
    assert not spec.supported and "gemma4_text" in spec.unsupported_reason
