"""Bundled model cards: facts for popular models, usable offline.

A card is a model's real ``config.json`` (and ``hf_quant_config.json``), its tensor list
(names, dtypes, shapes; experts collapsed to ``experts.*`` with a count) and its sources.
``knowledge/data/cards.toml`` indexes them by id, repository and alias; each card's JSON is
read (gzip, standard library) only when asked for. ``scripts/make_model_cards.py`` writes
both; how each tensor list was obtained is in the card's ``how``::

    card = find_card("deepseek-ai/DeepSeek-V4-Flash")
    info = card_model(card)        # a plan.model.ModelInfo

Config-only cards (``config_cards.toml``, ``computed = true``) hold the config alone; their
tensors are computed from it, and a plan from one says so.
"""

from __future__ import annotations

import functools
import gzip
import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

from servewise.errors import FormatError
from servewise.knowledge._load import EntryReader, RawEntry, check_unique, shipped_entries

FILENAME = "cards.toml"
CONFIG_FILENAME = "config_cards.toml"
"""Config-only cards: a model's real ``config.json`` (and ``hf_quant_config.json``) without a
tensor list; the tensors are computed from it (:mod:`servewise.plan.config_weights`).
Written by ``scripts/make_config_cards.py`` for the models vLLM's recipe database names."""
TABLE = "card"
FIELDS = frozenset({"id", "repo", "aliases", "file", "tensor_bytes", "files", "source", "how",
                    "computed"})


@dataclass(frozen=True)
class CardEntry:
    """One card of the index."""

    id: str
    repo: str
    aliases: tuple[str, ...]
    file: str
    tensor_bytes: int
    files: int | None
    sources: tuple[str, ...]
    how: str
    computed: bool = False
    """A config-only card: its tensors are computed from the config, not listed."""

    @property
    def names(self) -> tuple[str, ...]:
        """Every name that finds this card."""
        return (self.id, self.repo, *self.aliases)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data."""
        return {"id": self.id, "repo": self.repo, "aliases": list(self.aliases),
                "tensor_bytes": self.tensor_bytes, "files": self.files,
                "sources": list(self.sources), "how": self.how, "computed": self.computed}


def _entry(raw: RawEntry) -> CardEntry:
    reader = EntryReader(raw, FIELDS)
    files = raw.data.get("files")
    return CardEntry(
        id=reader.string("id"),
        repo=reader.string("repo"),
        aliases=reader.strings("aliases", required=False),
        file=reader.string("file"),
        tensor_bytes=reader.positive_int("tensor_bytes"),
        files=files if isinstance(files, int) and not isinstance(files, bool) else None,
        sources=reader.sources(),
        how=reader.string("how"),
        computed=raw.data.get("computed") is True,
    )


@functools.cache
def card_index() -> tuple[CardEntry, ...]:
    """Every bundled card: those with a tensor list first, then the config-only ones."""
    entries = [*shipped_entries(FILENAME, TABLE), *shipped_entries(CONFIG_FILENAME, TABLE)]
    check_unique(entries)
    return tuple(_entry(entry) for entry in entries)


def _key(name: str) -> str:
    return name.strip().lower().removeprefix("hf:").removeprefix("card:")


def find_card(name: str) -> CardEntry | None:
    """The card called ``name`` (id, repository id or alias; case-insensitive), or None."""
    key = _key(name)
    for card in card_index():
        if key in (_key(n) for n in card.names):
            return card
    return None


@functools.cache
def card_document(card_id: str) -> dict[str, Any]:
    """A card's JSON document."""
    card = next(c for c in card_index() if c.id == card_id)
    resource = resources.files("servewise.knowledge").joinpath("data", "cards", card.file)
    try:
        document = json.loads(gzip.decompress(resource.read_bytes()))
    except (OSError, EOFError, ValueError) as exc:
        raise FormatError(f"model card {card.file}", offset=0, expected="gzip-compressed JSON",
                          found=f"{type(exc).__name__}: {exc}") from None
    tensors = document.get("tensors") if isinstance(document, dict) else None
    if not isinstance(document, dict) or not isinstance(document.get("config"), dict) or not (
            isinstance(tensors, list) or (tensors is None and card.computed)):
        raise FormatError(f"model card {card.file}", offset=0,
                          expected="an object with config and tensors", found="something else")
    return document
