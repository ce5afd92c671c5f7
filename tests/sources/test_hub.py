"""Reading models from a Hub-like HTTP server on 127.0.0.1 through huggingface_hub."""

from __future__ import annotations

import json
from pathlib import Path

import huggingface_hub
import pytest

from servewise.errors import FormatError, SourceError
from servewise.plan.model import ModelInfo
from servewise.sources.hub import SPECULATIVE_BYTES, HubReader
from servewise.store import Store
from support.hub_server import HubRepo, run_hub, safetensors_bytes, sharded_repo

CONFIG = {
    "architectures": ["MixtralForCausalLM"], "model_type": "mixtral", "hidden_size": 4096,
    "num_hidden_layers": 4, "num_attention_heads": 32, "num_key_value_heads": 8,
    "intermediate_size": 14336, "num_local_experts": 8, "num_experts_per_tok": 2,
    "vocab_size": 32000, "max_position_embeddings": 32768, "torch_dtype": "bfloat16",
}


def _single_repo() -> HubRepo:
    data, _ = safetensors_bytes({
        "model.embed_tokens.weight": ("BF16", [32000, 64], 32000 * 64 * 2),
        "model.layers.0.self_attn.q_proj.weight": ("BF16", [64, 64], 64 * 64 * 2),
        "model.layers.0.mlp.experts.0.w1.weight": ("F8_E4M3", [128, 64], 128 * 64),
        "model.layers.0.mlp.experts.1.w1.weight": ("F8_E4M3", [128, 64], 128 * 64),
        "model.layers.0.mlp.experts.0.w1.weight_scale": ("F32", [], 4),
        "model.layers.0.mlp.experts.1.w1.weight_scale": ("F32", [], 4),
        "model.layers.0.odd.weight": ("Q4_K", [16], 9),
    })
    return HubRepo({"config.json": json.dumps(CONFIG).encode(), "model.safetensors": data})


def test_single_file_repo_is_read_from_headers(tmp_path: Path) -> None:
    with run_hub({"org/tiny": _single_repo()}) as hub:
        model = HubReader(endpoint=hub.url).read("org/tiny")
        assert hub.counts["range"] == 1  # the whole header came in the first read
    assert model.source == "hub" and model.revision == _single_repo().sha
    names = {t.name: t for t in model.tensors}
    experts = names["model.layers.0.mlp.experts.*.w1.weight"]
    assert experts.count == 2 and experts.nbytes == 128 * 64
    weights = ModelInfo.from_checkpoint(model).weights
    assert weights.unknown_dtypes == ("Q4_K",)
    assert weights.total_bytes == 32000 * 64 * 2 + 64 * 64 * 2 + 2 * 128 * 64 + 8 + 9


def test_48_shards_take_at_most_two_ranged_reads_each() -> None:
    repo = sharded_repo(48, 30, config=CONFIG)
    with run_hub({"org/big": repo}) as hub:
        model = HubReader(endpoint=hub.url).read("org/big")
        assert model.files == 48
        assert len(hub.ranges) == 48 and max(hub.ranges.values()) <= 2
        assert hub.counts["get"] == 2  # config.json and the index, whole


def test_a_header_longer_than_the_first_read_costs_exactly_two() -> None:
    repo = sharded_repo(2, 10, config=CONFIG, header_pad=SPECULATIVE_BYTES + 1000)
    with run_hub({"org/wide": repo}) as hub:
        model = HubReader(endpoint=hub.url).read("org/wide")
        assert sorted(hub.ranges.values()) == [2, 2]
    assert sum(t.count for t in model.tensors) == 20


def test_the_store_serves_the_same_commit_and_offline_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = sharded_repo(3, 4, config=CONFIG)
    with Store(tmp_path / "s.db") as store, run_hub({"org/m": repo}) as hub:
        first = HubReader(endpoint=hub.url, store=store).read("org/m")
        hub.reset()
        again = HubReader(endpoint=hub.url, store=store).read("org/m")
        assert hub.counts["range"] == 0 and hub.counts["get"] == 0 and hub.counts["api"] == 1
        assert again.tensors == first.tensors and again.revision == first.revision
        monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
        hub.reset()
        offline = HubReader(endpoint=hub.url, store=store).read("org/m")
        assert sum(hub.counts.values()) == 0
        assert offline.tensors == first.tensors and offline.tensor_bytes == first.tensor_bytes
        with pytest.raises(SourceError, match="HF_HUB_OFFLINE"):
            HubReader(endpoint=hub.url, store=store).read("org/other")


def test_a_token_is_sent_and_a_gated_repo_says_so() -> None:
    repo = _single_repo()
    repo.token = "hf_secret"
    with run_hub({"org/gated": repo}) as hub:
        with pytest.raises(SourceError) as info:
            HubReader(endpoint=hub.url, token=False).read("org/gated")
        assert "HF_TOKEN" in (info.value.hint or "")
        model = HubReader(endpoint=hub.url, token="hf_secret").read("org/gated")
        assert model.files == 1


def test_missing_repo_and_missing_weights() -> None:
    bare = HubRepo({"config.json": json.dumps(CONFIG).encode()})
    with run_hub({"org/bare": bare}) as hub:
        with pytest.raises(SourceError, match="cannot read org/none"):
            HubReader(endpoint=hub.url).read("org/none")
        with pytest.raises(SourceError, match="no safetensors"):
            HubReader(endpoint=hub.url).read("org/bare")


def test_a_header_that_disagrees_with_the_file_size_is_refused() -> None:
    repo = _single_repo()
    repo.sizes["model.safetensors"] = len(repo.files["model.safetensors"]) + 4096
    with run_hub({"org/short": repo}) as hub, pytest.raises(FormatError, match="file size"):
        HubReader(endpoint=hub.url).read("org/short")


def test_a_header_over_the_cap_is_refused() -> None:
    repo = sharded_repo(1, 2, config=CONFIG, header_pad=4096)
    with run_hub({"org/cap": repo}) as hub, pytest.raises(FormatError, match="cap"):
        HubReader(endpoint=hub.url, max_header_bytes=1024).read("org/cap")


def test_a_malformed_config_is_a_format_error() -> None:
    repo = _single_repo()
    repo.files["config.json"] = b"{not json"
    with run_hub({"org/bad": repo}) as hub, pytest.raises(FormatError, match=r"config\.json"):
        HubReader(endpoint=hub.url).read("org/bad")
