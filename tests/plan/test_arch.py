"""Architecture specs from the real configs of the dev-log models."""

from __future__ import annotations

import pytest

from servewise.formats.hfconfig import config_from_mapping
from servewise.plan.arch import model_spec
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
