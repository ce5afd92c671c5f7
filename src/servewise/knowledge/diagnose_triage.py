"""The triage contract's defaults: what to collect next and what a fix can break, per layer.

``knowledge/data/diagnose_triage.toml`` holds one entry per layer of a diagnosis (see
``docs/diagnose.md``). A finding whose rule or knowledge-table entry says nothing itself about
what to collect next, or about the fix's risk, takes its layer's entry.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from servewise.knowledge._load import EntryReader, check_unique, shipped_entries
from servewise.knowledge.diagnose_tables import LAYERS

__all__ = ["TriageDefault", "triage_defaults"]


@dataclass(frozen=True)
class TriageDefault:
    """What to collect next and what a fix can break, for one layer."""

    layer: str
    collect: str
    risk: str
    sources: tuple[str, ...]


@functools.cache
def triage_defaults() -> dict[str, TriageDefault]:
    """Every layer's defaults, validated: one entry per layer of :data:`LAYERS`."""
    entries = shipped_entries("diagnose_triage.toml", "triage")
    check_unique(entries)
    found: dict[str, TriageDefault] = {}
    for entry in entries:
        reader = EntryReader(entry, {"id", "collect", "risk", "source"})
        layer = reader.string("id")
        if layer not in LAYERS:
            raise reader.error("id", "not a layer", expected=", ".join(LAYERS), found=layer)
        found[layer] = TriageDefault(layer, reader.string("collect"), reader.string("risk"),
                                     reader.sources())
    missing = sorted(set(LAYERS) - set(found))
    if missing:
        raise reader.error("id", f"no entry for layer(s) {missing}")
    return found
