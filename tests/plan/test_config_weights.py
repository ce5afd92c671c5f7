"""Weights computed from config.json alone (issue 28, item 5): how far they are from the
bundled cards' tensor lists (the figure docs/check.md and the check note give), the
config-only cards, and the quantization layouts."""

from __future__ import annotations

import math
import re

import pytest

from servewise.errors import SourceError
from servewise.formats.checkpoint import WeightTensor
from servewise.formats.hfconfig import config_from_mapping
from servewise.formats.safetensors import DTYPE_BITS
from servewise.knowledge.cards import card_document, card_index, find_card
from servewise.plan.config_weights import MEASURED_MISS, computed_tensors, quant_of
from servewise.plan.model import ModelInfo
from servewise.plan.resolve import card_model
from servewise.plan.weights import Parallel

TOWER = re.compile(r"vision|visual|multi_modal_projector|mm_projector|audio")
#: Kimi-K2's card holds an MTP layer (layer 61) its config does not declare
#: (num_nextn_predict_layers: 0); nothing in the config says it is there.
UNDECLARED = {"kimi-k2-instruct": 0.021}


def _bytes(rows: list[list]) -> tuple[int, int]:  # type: ignore[type-arg]
    whole = text = 0
    for name, dtype, shape, count in rows:
        size = math.prod(shape) * DTYPE_BITS[dtype] // 8 * count
        whole += size
        text += 0 if TOWER.search(name) else size
    return whole, text


def _listed() -> list[str]:
    return [card.id for card in card_index() if not card.computed]


def measure() -> dict[str, tuple[float, float] | None]:
    """Per card with a tensor list: (miss on the whole checkpoint, miss on the text model),
    as fractions (negative: the computation is smaller), or None when not computable."""
    found: dict[str, tuple[float, float] | None] = {}
    for ident in _listed():
        document = card_document(ident)
        config = config_from_mapping(document["config"], source=ident)
        try:
            rows, _ = computed_tensors(config, document.get("quant_config"))
        except SourceError:
            found[ident] = None
            continue
        got = sum(row.total_bytes for row in rows)
        whole, text = _bytes(document["tensors"])
        found[ident] = (got / whole - 1, got / text - 1)
    return found


def test_computed_weights_against_the_bundled_cards() -> None:
    found = measure()
    computed = {k: v for k, v in found.items() if v is not None}
    # DeepSeek-V4 (compressed attention) is not computed: its weights are never guessed
    assert {k for k, v in found.items() if v is None} == {"deepseek-v4-flash",
                                                          "deepseek-v4-flash-0731-nvfp4"}
    assert len(computed) == 14
    exact = [k for k, (_, text) in computed.items() if abs(text) < 0.00003]
    assert len(exact) == 13 and set(computed) - set(exact) == set(UNDECLARED)
    for ident, (whole, text) in computed.items():
        assert -UNDECLARED.get(ident, 0.00003) <= text <= 0.00003, ident
        assert -0.039 <= whole <= 0.0, ident  # towers are not computed
    assert min(w for w, _ in computed.values()) == pytest.approx(-0.0382, abs=0.0005)
    assert "14 bundled cards" in MEASURED_MISS and "on 13" in MEASURED_MISS
    assert "0.003 %" in MEASURED_MISS and "2.1 %" in MEASURED_MISS and "3.8 %" in MEASURED_MISS


@pytest.mark.parametrize(("ident", "layout"), [
    ("llama-3.1-70b", Parallel(tp=4)), ("qwen3-235b-a22b-fp8", Parallel(tp=8)),
    ("deepseek-r1", Parallel(tp=8, expert_parallel=True)), ("gpt-oss-120b", Parallel(tp=2)),
    ("minimax-m2.5", Parallel(tp=4, pp=2)),
])
def test_computed_tensors_land_on_the_same_ranks(ident: str, layout: Parallel) -> None:
    listed = card_model(find_card(ident))  # type: ignore[arg-type]
    rows, _ = computed_tensors(listed.config, listed.quant_config)
    computed = ModelInfo(ref=ident, source="card", config=listed.config, tensors=tuple(rows),
                         files=0, file_bytes=0)
    ours = [stage.total for stage in computed.per_rank(layout)]
    theirs = [stage.total for stage in listed.per_rank(layout)]
    assert ours == theirs


def test_config_only_cards_cover_the_recipe_database_models() -> None:
    cards = [card for card in card_index() if card.computed]
    assert len(cards) >= 30
    repos = {card.repo for card in cards}
    assert {"Qwen/Qwen3-8B", "Qwen/Qwen3-30B-A3B", "deepseek-ai/DeepSeek-V3",
            "zai-org/GLM-5"} <= repos
    for card in cards:
        model = card_model(card)
        assert model.tensor_bytes == card.tensor_bytes, card.id
        assert any(note.startswith("weights computed from config.json") for note in model.notes)
        assert card.sources[0].startswith("https://")


def test_qwen3_8b_is_its_published_size() -> None:
    # "total_size": 16381470720 in https://huggingface.co/Qwen/Qwen3-8B/blob/main/
    # model.safetensors.index.json (399 tensors, 5 shards); computed here from config.json only
    model = card_model(find_card("Qwen/Qwen3-8B"))  # type: ignore[arg-type]
    assert model.tensor_bytes == 16381470720


def _config(**quant: object) -> dict[str, object]:
    base: dict[str, object] = {
        "model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 256,
        "num_attention_heads": 4, "num_key_value_heads": 2, "num_hidden_layers": 2,
        "intermediate_size": 512, "vocab_size": 1000, "torch_dtype": "bfloat16"}
    if quant:
        base["quantization_config"] = quant
    return base


def _by_suffix(rows: list[WeightTensor], suffix: str) -> list[WeightTensor]:
    return [row for row in rows if row.name.endswith(suffix)]


def test_fp8_block_int4_and_nvfp4_layouts() -> None:
    fp8, _ = computed_tensors(config_from_mapping(_config(
        quant_method="fp8", weight_block_size=[128, 128]), source="t"))
    down = _by_suffix(fp8, "layers.0.mlp.down_proj.weight")[0]
    assert down.dtype == "F8_E4M3" and down.shape == (256, 512)
    assert _by_suffix(fp8, "layers.0.mlp.down_proj.weight_scale_inv")[0].shape == (2, 4)
    assert _by_suffix(fp8, "embed_tokens.weight")[0].dtype == "BF16"
    awq, _ = computed_tensors(config_from_mapping(_config(
        quant_method="awq", bits=4, group_size=128), source="t"))
    assert _by_suffix(awq, "layers.0.mlp.down_proj.qweight")[0].shape == (64, 256)
    nvfp4, _ = computed_tensors(config_from_mapping(_config(), source="t"),
                                {"quantization": {"quant_algo": "NVFP4",
                                                  "exclude_modules": ["lm_head"]}})
    weight = _by_suffix(nvfp4, "layers.1.self_attn.q_proj.weight")[0]
    assert weight.dtype == "U8" and weight.shape == (256, 128)
    assert _by_suffix(nvfp4, "lm_head.weight")[0].dtype == "BF16"
    quant, notes = quant_of(config_from_mapping(_config(quant_method="bitsandbytes"),
                                                source="t"), None)
    assert quant.kind == "none" and "not modelled" in notes[0]


def test_an_unknown_family_is_not_guessed() -> None:
    config = config_from_mapping({"model_type": "mystery", "hidden_size": 8,
                                  "num_attention_heads": 1, "num_hidden_layers": 1},
                                 source="t")
    with pytest.raises(SourceError, match="cannot be computed") as caught:
        computed_tensors(config)
    assert "safetensors" in (caught.value.hint or "")
