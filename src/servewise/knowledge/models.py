"""Model families and the kernel libraries they need on the GPU path.

The table ships as ``knowledge/data/models.toml``; a ``models.toml`` in the
user data folder adds families (ahead of the shipped ones) or overrides
shipped ones by ``id``. Names are matched with case-insensitive regexes, so
an HF repo id, a local folder name or a family id all work::

    table = load_model_table()
    table.require("deepseek-ai/DeepSeek-V4-Flash").requires    # ("deep_gemm",)
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servewise.errors import UsageError
from servewise.knowledge._load import (
    EntryReader,
    RawEntry,
    check_unique,
    load_table,
    shipped_entries,
)
from servewise.knowledge.libraries import LibraryTable, load_library_table, shipped_library_table

FILENAME = "models.toml"
TABLE = "model"

FIELDS = frozenset(
    {"id", "name", "patterns", "examples", "requires", "uses", "notes", "source"}
)
"""Fields a ``[[model]]`` entry may set."""


@dataclass(frozen=True)
class ModelFamily:
    """A model family and the libraries it needs (``requires``) or uses (``uses``)."""

    id: str
    name: str
    patterns: tuple[re.Pattern[str], ...]
    examples: tuple[str, ...]
    requires: tuple[str, ...]
    uses: tuple[str, ...]
    notes: str
    sources: tuple[str, ...]

    @property
    def source(self) -> str:
        """The first (main) source of this entry."""
        return self.sources[0]

    def matches(self, name: str) -> bool:
        """Whether one of the family's patterns occurs in ``name`` (or ``name`` is the id)."""
        text = name.strip()
        if text.lower() == self.id:
            return True
        return any(pattern.search(text) for pattern in self.patterns)

    def to_dict(self) -> dict[str, Any]:
        """The family as JSON-ready data."""
        return {
            "id": self.id,
            "name": self.name,
            "patterns": [pattern.pattern for pattern in self.patterns],
            "requires": list(self.requires),
            "uses": list(self.uses),
            "notes": self.notes,
            "sources": list(self.sources),
        }


class ModelTable:
    """The known model families; the first family whose pattern matches a name wins."""

    def __init__(self, families: Iterable[ModelFamily]) -> None:
        self._families = tuple(families)

    def all(self) -> tuple[ModelFamily, ...]:
        """Every family, in match order."""
        return self._families

    def ids(self) -> tuple[str, ...]:
        """Every family id, in match order."""
        return tuple(family.id for family in self._families)

    def __len__(self) -> int:
        return len(self._families)

    def __iter__(self) -> Iterator[ModelFamily]:
        return iter(self._families)

    def find(self, name: str) -> ModelFamily | None:
        """The family of ``name`` (a family id, HF repo id or folder name), or None."""
        for family in self._families:
            if family.matches(name):
                return family
        return None

    def require(self, name: str) -> ModelFamily:
        """The family of ``name``; an unknown name raises :class:`UsageError`."""
        family = self.find(name)
        if family is None:
            raise UsageError(
                f"unknown model family for {name!r}; known: {', '.join(self.ids())}",
                hint="give a family id (e.g. deepseek-v4) or an HF repo id it matches, or "
                "add the family to $SERVEWISE_DATA_DIR/models.toml (default ~/.config/servewise/)",
                found=name,
                known=list(self.ids()),
            )
        return family


def family_from_entry(entry: RawEntry, libraries: LibraryTable) -> ModelFamily:
    """Validate one ``[[model]]`` entry (library ids must exist) and build its family."""
    reader = EntryReader(entry, FIELDS)
    requires = reader.strings("requires")
    uses = reader.strings("uses", required=False)
    for field, ids in (("requires", requires), ("uses", uses)):
        for ident in ids:
            if ident not in libraries:
                raise reader.error(
                    field,
                    "unknown library id",
                    expected="an id from libraries.toml: " + ", ".join(libraries.ids()),
                    found=ident,
                )
    both = sorted(set(requires) & set(uses))
    if both:
        raise reader.error("uses", "a library is both required and used", found=", ".join(both))
    family = ModelFamily(
        id=reader.string("id"),
        name=reader.string("name"),
        patterns=reader.regexes("patterns", re.IGNORECASE),
        examples=reader.strings("examples", required=False),
        requires=requires,
        uses=uses,
        notes=reader.optional_string("notes"),
        sources=reader.sources(),
    )
    return family


def _build(entries: list[RawEntry], libraries: LibraryTable) -> ModelTable:
    check_unique(entries)
    return ModelTable(family_from_entry(entry, libraries) for entry in entries)


@functools.cache
def _shipped_table() -> ModelTable:
    return _build(list(shipped_entries(FILENAME, TABLE)), shipped_library_table())


def load_model_table(user_dir: Path | None = None) -> ModelTable:
    """The shipped model table plus ``models.toml`` from the user data folder.

    Library ids are checked against :func:`load_library_table` for the same
    user folder. ``user_dir`` defaults to ``$SERVEWISE_DATA_DIR`` or
    ``~/.config/servewise``.
    """
    # shipped families name shipped libraries only, which a user file cannot remove, so the
    # shipped table needs no check against the user's libraries
    return load_table(FILENAME, TABLE, user_dir, _shipped_table,
                      lambda entries: _build(entries, load_library_table(user_dir)))
