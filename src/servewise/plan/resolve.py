"""Find the model a user named: a local folder, a card, or a Hub repository.

Order: an existing folder (with its ``*.safetensors`` headers, or ``config.json`` alone:
then the weights are computed from the config); a bundled card whose id, repository or alias
matches (offline); a user card, ``$SERVEWISE_DATA_DIR/cards/ORG--NAME/config.json``
(offline, weights computed); then the Hugging Face Hub for anything shaped like
``org/name``. ``hub:org/name`` skips the cards and reads the Hub; ``card:ID`` insists on a
card. When the Hub cannot be read (offline, no network), the error says how to give the
config instead.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from servewise.errors import SourceError, UsageError
from servewise.formats.checkpoint import WeightTensor
from servewise.formats.hfconfig import HfConfig, config_from_mapping
from servewise.formats.safetensors import DTYPE_BITS
from servewise.knowledge.cards import CardEntry, card_document, card_index, find_card
from servewise.plan.model import ModelInfo

if TYPE_CHECKING:
    from servewise.store import Store

_REPO = re.compile(r"^[\w.-]+/[\w.-]+$")


USER_CARDS = "cards"
"""User cards: ``$SERVEWISE_DATA_DIR/cards/ORG--NAME/config.json`` (and, for a ModelOpt
checkpoint, ``hf_quant_config.json``)."""


def config_model(config: HfConfig, quant_config: dict[str, Any] | None, *, ref: str,
                 source: str, provenance: tuple[str, ...]) -> ModelInfo:
    """A :class:`ModelInfo` whose tensors are computed from ``config`` (no weight files);
    its notes say so, and what the computation leaves out."""
    from servewise.plan.config_weights import computed_tensors

    tensors, notes = computed_tensors(config, quant_config)
    total = sum(t.total_bytes for t in tensors)
    return ModelInfo(ref=ref, source=source, config=config, tensors=tuple(tensors), files=0,
                     file_bytes=total, provenance=provenance, quant_config=quant_config,
                     revision=None, notes=tuple(notes))


def user_card_folder(repo: str, user_dir: Path | None = None) -> Path | None:
    """The user card folder of ``repo`` (``ORG/NAME``), when it holds a ``config.json``."""
    from servewise.knowledge._load import user_data_dir

    if _REPO.match(repo) is None:
        return None
    folder = (user_dir or user_data_dir()) / USER_CARDS / repo.replace("/", "--", 1)
    return folder if (folder / "config.json").is_file() else None


def _folder_config_model(folder: Path, ref: str, source: str) -> ModelInfo:
    from servewise.sources.model_folder import read_config, read_quant_config

    return config_model(read_config(folder), read_quant_config(folder), ref=ref,
                        source=source, provenance=(str(folder.resolve()),))


def card_model(card: CardEntry) -> ModelInfo:
    """A bundled card as a :class:`ModelInfo` (a config-only card's tensors computed)."""
    document = card_document(card.id)
    if document.get("tensors") is None:
        return config_model(config_from_mapping(document["config"], source=f"card {card.id}"),
                            document.get("quant_config"), ref=card.repo, source="card",
                            provenance=(*card.sources, card.how))
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
    if revision is None and user_card_folder(text) is not None:
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

        repo = ref.strip().removeprefix("hub:")
        if reads_hub(ref, revision) and _REPO.match(repo):
            # the Hub's own advice (unset HF_HUB_OFFLINE, check the network or the id), then
            # the way that needs no Hub: the config alone
            own = (error.hint or "").replace(f", or give a local folder or {BUNDLED_CARD}",
                                             "").replace(f"; or give {BUNDLED_CARD}", "")
            error.hint = (f"{own}; " if own else "") + give_config_hint(repo)
        elif error.hint and BUNDLED_CARD in error.hint:
            ids = ", ".join(card.id for card in card_index())
            error.hint = error.hint.replace(BUNDLED_CARD, f"{BUNDLED_CARD} ({ids})", 1)
        raise


def give_config_hint(repo: str) -> str:
    """How to plan ``repo`` without the Hub: its config.json is enough."""
    from servewise.knowledge._load import user_data_dir

    card = user_data_dir() / USER_CARDS / repo.replace("/", "--", 1)
    return (f"without the Hub, give its config.json: download "
            f"https://huggingface.co/{repo}/resolve/main/config.json into a folder and pass "
            f"the folder, or save it as {card}/config.json (a user card: `{repo}` then works "
            "offline); servewise computes the weights from it. `servewise model card:ID` "
            "reads a bundled card")


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
            from servewise.sources.model_folder import has_weights, read_folder

            if not has_weights(path) and (path / "config.json").is_file():
                return _folder_config_model(path, str(path), "folder")
            return ModelInfo.from_checkpoint(read_folder(path))
        if path.suffix == ".json" or path.exists():
            raise UsageError(f"{ref} is not a model folder",
                             hint="point at the folder that holds config.json", found=ref)
        card = find_card(text)
        if card is not None and revision is None:
            return card_model(card)
        folder = user_card_folder(text) if revision is None else None
        if folder is not None:
            return _folder_config_model(folder, text, "user card")
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
