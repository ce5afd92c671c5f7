"""A model folder: config.json, headers checked against file sizes, the shard index."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from servewise.errors import FormatError, SourceError
from servewise.plan.model import ModelInfo
from servewise.sources.model_folder import read_folder
from support.hub_server import safetensors_bytes

CONFIG = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 64,
          "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
          "intermediate_size": 128, "vocab_size": 100, "torch_dtype": "bfloat16"}


def _folder(tmp_path: Path, shards: int = 2) -> Path:
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(CONFIG))
    weight_map = {}
    for shard in range(shards):
        name = f"model-{shard + 1:05d}-of-{shards:05d}.safetensors"
        tensor = f"model.layers.{shard}.mlp.down_proj.weight"
        blob, _ = safetensors_bytes({tensor: ("BF16", [64, 128], 64 * 128 * 2)})
        (folder / name).write_bytes(blob)
        weight_map[tensor] = name
    (folder / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
    return folder


def test_sharded_folder(tmp_path: Path) -> None:
    model = ModelInfo.from_checkpoint(read_folder(_folder(tmp_path)))
    assert model.files == 2 and model.weights.by_role["dense_mlp"] == 2 * 64 * 128 * 2
    assert model.spec.family == "dense"


def test_missing_shard_truncated_file_and_bad_config(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    shard = folder / "model-00002-of-00002.safetensors"
    data = shard.read_bytes()
    shard.write_bytes(data[:-10])
    with pytest.raises(FormatError, match="file size"):
        read_folder(folder)
    shard.unlink()
    with pytest.raises(SourceError, match="missing shard"):
        read_folder(folder)
    (folder / "config.json").write_text("[1, 2]")
    with pytest.raises(FormatError, match="JSON object"):
        read_folder(folder)
    (folder / "config.json").unlink()
    with pytest.raises(SourceError, match=r"no config\.json"):
        read_folder(folder)


def test_header_over_the_cap(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="cap"):
        read_folder(_folder(tmp_path), limit=16)


def test_no_weights(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps(CONFIG))
    with pytest.raises(SourceError, match=r"no \*\.safetensors"):
        read_folder(tmp_path)
