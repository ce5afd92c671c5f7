"""Find the model a user named: a local folder, a bundled card, or a Hub repository.

Order: an existing folder; a bundled card whose id, repository or alias matches (offline);
then the Hugging Face Hub for anything shaped like ``org/name``. ``hub:org/name`` skips
the cards and reads the Hub; ``card:ID`` insists on a card.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from servewise.errors import SourceError, UsageError
from servewise.formats.checkpoint import WeightTensor
from servewise.formats.hfconfig import config_from_mapping
from servewise.formats.safetensors import DTYPE_BITS
from servewise.knowledge.cards import CardEntry, card_document, card_index, find_card
from servewise.plan.model import ModelInfo

if TYPE_CHECKING:
    from servewise.store import Store

_REPO = re.compile(r"^[\w.-]+/[\w.-]+$")


def card_model(card: CardEntry) -> ModelInfo:
    """A bundled card as a :class:`ModelInfo`."""
    document = card_document(card.id)
    tensors = []
    for name, dtype, shape, count in document["tensors"]:
        bits = DTYPE_BITS[dtype]
        elements = 1
        for dim in shape:
            elements *= dim
        tensors.append(WeightTensor(name, dtype, tuple(shape), elements * bits // 8, count))
    total = sum(t.total_bytes for t in tensors)
    return ModelInfo(
        ref=card.repo,
        source="card",
        config=config_from_mapping(document["config"], source=f"card {card.id}"),
        tensors=tuple(tensors),
        files=card.files or 0,
        file_bytes=total,
        provenance=(*card.sources, card.how),
        quant_config=document.get("quant_config"),
        revision=None,
    )


#: The longest model reference read (a folder path; Hub ids are at most 96 characters).
MAX_REF_CHARS = 4096


def _path_of(text: str) -> Path | None:
    """``text`` as a path that exists, or None; a reference too long to be a path or an id
    is a :class:`UsageError` (the file system would refuse it with an OSError)."""
    if len(text) > MAX_REF_CHARS or "\0" in text:
        raise UsageError(f"a model reference of {len(text)} characters is neither a folder "
                         "nor a Hub id", found=text[:80] + "…", expected=f"a folder path "
                         f"(at most {MAX_REF_CHARS} characters), an org/name Hub id or a card",
                         hint="give the model's folder, its Hub id (org/name) or a card id")
    try:
        path = Path(text).expanduser()
        return path if path.exists() else None
    except OSError as error:
        raise UsageError(f"{text[:80]!r} cannot be a model folder: {error.strerror}",
                         found=text[:80], hint="give the model's folder, its Hub id "
                         "(org/name) or a card id") from None


def reads_hub(ref: str, revision: str | None = None) -> bool:
    """Whether :func:`load_model` will go to the Hub for ``ref`` (no folder, no card)."""
    text = ref.strip()
    if text.startswith("hub:"):
        return True
    if text.startswith("card:") or _path_of(text) is not None:
        return False
    return not (find_card(text) is not None and revision is None)


def load_model(ref: str, *, revision: str | None = None,
               store: Store | None = None) -> ModelInfo:
    """The :class:`ModelInfo` of ``ref`` (folder, card, or Hub repository).

    A source's hint that suggests a bundled card gets the cards' ids.
    """
    try:
        return _load_model(ref, revision=revision, store=store)
    except SourceError as error:
        from servewise.sources.hub import BUNDLED_CARD

        if error.hint and BUNDLED_CARD in error.hint:
            ids = ", ".join(card.id for card in card_index())
            error.hint = error.hint.replace(BUNDLED_CARD, f"{BUNDLED_CARD} ({ids})", 1)
        raise


def _load_model(ref: str, *, revision: str | None, store: Store | None) -> ModelInfo:
    text = ref.strip()
    if text.startswith("card:"):
        card = find_card(text)
        if card is None:
            raise _unknown(text)
        return card_model(card)
    if not text.startswith("hub:"):
        path = _path_of(text) or Path(text).expanduser()
        if path.is_dir():
            from servewise.sources.model_folder import read_folder

            return ModelInfo.from_checkpoint(read_folder(path))
        if path.suffix == ".json" or path.exists():
            raise UsageError(f"{ref} is not a model folder",
                             hint="point at the folder that holds config.json", found=ref)
        card = find_card(text)
        if card is not None and revision is None:
            return card_model(card)
    repo = text.removeprefix("hub:")
    if _REPO.match(repo) is None:
        raise _unknown(text)
    from servewise.sources.hub import read_hub

    return ModelInfo.from_checkpoint(read_hub(repo, revision=revision, store=store))


def _unknown(ref: str) -> UsageError:
    ids = [card.id for card in card_index()]
    return UsageError(
        f"{ref!r} is not a model folder, a bundled card or a Hub repository id",
        hint="give a folder with config.json, an org/name repository, or a card: "
        + ", ".join(ids),
        found=ref, cards=ids,
    )
