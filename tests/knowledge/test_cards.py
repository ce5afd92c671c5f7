"""The bundled model cards: real configs, derived tensor lists, sources."""

from __future__ import annotations

import gzip
import json
from importlib import resources

import pytest

from servewise.knowledge._load import looks_like_source
from servewise.knowledge.cards import card_document, card_index, find_card
from servewise.plan.resolve import card_model
from support.configs import shared_dir

CARDS = [card.id for card in card_index()]


def test_at_least_eleven_cards_and_the_seed_model() -> None:
    assert len(CARDS) >= 11
    assert find_card("MJPansa/DeepSeek-V4-Flash-0731-NVFP4") is not None
    assert find_card("deepseek-ai/deepseek-v4-flash") is not None  # case-insensitive
    assert find_card("nobody/nothing") is None


@pytest.mark.parametrize("card_id", CARDS)
def test_card_is_whole_and_sourced(card_id: str) -> None:
    card = next(c for c in card_index() if c.id == card_id)
    model = card_model(card)
    assert model.spec.supported, model.spec.unsupported_reason
    assert model.weights.total_bytes == card.tensor_bytes
    assert model.weights.unknown_dtypes == ()
    assert card.sources and all(looks_like_source(s) for s in card.sources)
    if card.computed:  # a config-only card: the tensors are computed from its config
        assert "computes the tensors" in card.how
        assert any(note.startswith("weights computed") for note in model.notes)
    else:
        assert "derived" in card.how and "meta device" in card.how
    blob = resources.files("servewise.knowledge").joinpath("data", "cards", card.file)
    assert len(blob.read_bytes()) < 4 * 2**20


@pytest.mark.parametrize(
    ("card_id", "folder"),
    [
        ("llama-3.1-8b-instruct", "meta-llama--Llama-3.1-8B-Instruct"),
        ("gemma-3-27b-it", "google--gemma-3-27b-it"),
        ("deepseek-r1", "deepseek-ai--DeepSeek-R1"),
        ("deepseek-v4-flash", "deepseek-ai--DeepSeek-V4-Flash"),
        ("qwen3.6-35b-a3b-nvfp4", "nvidia--Qwen3.6-35B-A3B-NVFP4"),
    ],
)
def test_card_config_is_the_real_file(card_id: str, folder: str) -> None:
    path = shared_dir() / "data" / "configs" / folder / "config.json"
    assert card_document(card_id)["config"] == json.loads(path.read_text())


def test_known_checkpoint_sizes() -> None:
    # Published sizes: Llama-3.1-8B's index total_size, gpt-oss's ~65.3 / 13.8 GB repos.
    assert next(c for c in card_index() if c.id == "llama-3.1-8b-instruct").tensor_bytes \
        == 16_060_522_496
    sizes = {c.id: c.tensor_bytes for c in card_index()}
    assert sizes["gpt-oss-120b"] == pytest.approx(65.3e9, rel=0.01)
    assert sizes["gpt-oss-20b"] == pytest.approx(13.8e9, rel=0.01)
    assert sizes["deepseek-r1"] == pytest.approx(688.6e9, rel=0.01)


def test_the_seed_checkpoint_figures() -> None:
    """seeds/000: DeepSeek-V4-Flash-0731 NVFP4, 48 safetensors, 175.6 GB."""
    card = find_card("DeepSeek-V4-Flash-0731-NVFP4")
    assert card is not None and card.files == 48
    assert card.tensor_bytes == pytest.approx(175.6e9, rel=0.01)
    dtypes = card_model(card).weights.by_dtype
    assert {"U8", "F8_E4M3", "F32", "BF16"} <= set(dtypes)


def test_cards_are_compact_json() -> None:
    folder = resources.files("servewise.knowledge").joinpath("data", "cards")
    for card in card_index():
        document = json.loads(gzip.decompress(folder.joinpath(card.file).read_bytes()))
        assert set(document) >= {"config", "tensors", "sources", "how"}
