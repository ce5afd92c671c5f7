"""Advice for a command line the engine refused: which engine and version a flag belongs to.

Engines rename flags between releases, and vLLM and SGLang spell the same setting
differently (``--max-model-len`` / ``--context-length``). When argparse refuses a flag,
the engine-flag table (``knowledge/data/engine_flags.toml``) says whether the flag is this
engine's spelling for other versions, or the other engine's, and how this one spells it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from servewise.diagnose.result import FieldValue
from servewise.errors import ServewiseError
from servewise.knowledge.engines import display_name, serving_engines
from servewise.knowledge.flags import FlagSpelling, FlagTable, Setting, load_flag_table
from servewise.versions import EngineVersion

__all__ = ["advise_flag", "flag_spelling"]

_FLAG = re.compile(r"(?<![\w-])--?[A-Za-z][\w-]*")
_NAMES = {engine: display_name(engine) for engine in serving_engines()}
"""How people write each engine the flag table spells (``engines.toml``)."""


def _range(spelling: FlagSpelling) -> str:
    if spelling.since and spelling.until:
        return f"from {spelling.since} until {spelling.until}"
    if spelling.since:
        return f"from {spelling.since} on"
    if spelling.until:
        return f"before {spelling.until}"
    return "in every version"


def _version(values: Mapping[str, FieldValue]) -> EngineVersion | None:
    text = values.get("engine_version")
    if not isinstance(text, str):
        return None
    try:
        return EngineVersion.coerce(text)
    except ServewiseError:
        return None


def _own_spelling(table: FlagTable, setting: Setting, engine: str,
                  version: EngineVersion | None) -> str | None:
    """How ``engine`` spells ``setting`` at ``version``, or its counterpart setting."""
    found = table.nearest_spelling(setting.id, engine, version)
    if found is None:
        return None
    spelling, counterpart = found
    return f"{spelling.name} (its counterpart setting)" if counterpart else spelling.name


def advise_flag(table: FlagTable, flag: str, engine: str | None,
                version: EngineVersion | None) -> str | None:
    """One sentence on ``flag`` refused by ``engine`` at ``version``, or None when the table
    has nothing to add (the flag is right for this version, or nobody's)."""
    if engine in _NAMES:
        found = table.lookup(engine, flag, version)
        if found is not None:
            setting, spelling = found
            current = setting.spelling(engine, version)
            name = _NAMES[engine]
            if current is None:
                return (f"{flag} is {name}'s flag {_range(spelling)}; this {name} has no "
                        f"{setting.id.replace('_', '-')} setting.")
            if flag not in current.names:
                return (f"{flag} is {name}'s spelling {_range(spelling)}; this version "
                        f"spells it {current.name}.")
            return None
    for other in _NAMES:
        if other == engine:
            continue
        found = table.lookup(other, flag)
        if found is None:
            continue
        setting, _ = found
        if engine in _NAMES:
            mine = _own_spelling(table, setting, engine, version)
            spelled = f"{_NAMES[engine]} spells it {mine}" if mine else (
                f"{_NAMES[engine]} has no such setting")
            return f"{flag} is {_NAMES[other]}'s flag; {spelled}."
        return f"{flag} is {_NAMES[other]}'s flag ({setting.id.replace('_', '-')})."
    return None


def flag_spelling(values: Mapping[str, FieldValue], engine: str | None
                  ) -> dict[str, FieldValue]:
    """``spelling_advice`` for the flags in ``unrecognized_flags``, when the table knows them."""
    text = values.get("unrecognized_flags")
    if not isinstance(text, str):
        return {}
    table = load_flag_table()
    version = _version(values)
    notes = [note for flag in dict.fromkeys(_FLAG.findall(text))
             if (note := advise_flag(table, flag, engine, version)) is not None]
    return {"spelling_advice": " ".join(notes)} if notes else {}
