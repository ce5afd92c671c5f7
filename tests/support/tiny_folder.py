"""The default tiny Llama as the planner reads it, without the engine environment.

``scripts/make_tiny_model.py`` needs torch (the engine's python); the planner only reads
``config.json`` and the safetensors header, so tests that plan the tiny model without starting
an engine write this: the same config and tensor shapes (2 layers, 4 query and 2 KV heads of
64, hidden 256, vocab 512, bfloat16), zeros for the weights.
"""

from __future__ import annotations

import json
from pathlib import Path

from support.hub_server import safetensors_bytes


def tiny_llama_folder(folder: Path) -> Path:
    """The default tiny model's config and weights' layout (zeros), as the planner reads it."""
    folder.mkdir(parents=True)
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama",
              "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2,
              "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64,
              "vocab_size": 512, "max_position_embeddings": 2048, "torch_dtype": "bfloat16",
              "rms_norm_eps": 1e-5, "tie_word_embeddings": False}
    (folder / "config.json").write_text(json.dumps(config))
    shapes = {"model.embed_tokens.weight": [512, 256], "lm_head.weight": [512, 256],
              "model.norm.weight": [256]}
    for layer in range(2):
        base = f"model.layers.{layer}."
        shapes |= {base + "self_attn.q_proj.weight": [256, 256],
                   base + "self_attn.k_proj.weight": [128, 256],
                   base + "self_attn.v_proj.weight": [128, 256],
                   base + "self_attn.o_proj.weight": [256, 256],
                   base + "mlp.gate_proj.weight": [512, 256],
                   base + "mlp.up_proj.weight": [512, 256],
                   base + "mlp.down_proj.weight": [256, 512],
                   base + "input_layernorm.weight": [256],
                   base + "post_attention_layernorm.weight": [256]}
    tensors = {name: ("BF16", shape, 2 * _product(shape)) for name, shape in shapes.items()}
    (folder / "model.safetensors").write_bytes(safetensors_bytes(tensors)[0])
    return folder


def _product(shape: list[int]) -> int:
    total = 1
    for size in shape:
        total *= size
    return total
