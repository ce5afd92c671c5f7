"""The shipped knowledge files as raw TOML, for tests that check every entry."""

from __future__ import annotations

import tomllib
from importlib import resources
from typing import Any


def raw_entries(filename: str, table: str) -> list[dict[str, Any]]:
    """The ``[[table]]`` entries of the shipped ``knowledge/data/filename``, as parsed TOML."""
    path = resources.files("servewise.knowledge").joinpath("data", filename)
    entries = tomllib.loads(path.read_text("utf-8"))[table]
    assert isinstance(entries, list)
    return entries
