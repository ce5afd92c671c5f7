"""Engine accounting constants (``knowledge/data/accounting.toml``), each named, sourced, versioned.

The planner asks for a constant by engine, name and engine version::

    table = load_engine_constants()
    table.value("vllm", "non_torch_bytes_single_gpu", EngineVersion.parse("0.19.0"))

Several entries may share a name for different version ranges (``since`` inclusive,
``until`` exclusive). A user ``accounting.toml`` in ``$SERVEWISE_DATA_DIR`` overrides entries by
``id`` like the other tables.

A constant fitted to startup logs names them in ``fitted_on``: corpus record ids
(``tests/data/plan_corpus.jsonl``) or ``family:NAME`` for a log outside the corpus, and may
give a ``prior`` — the value used when those logs are set aside (leave-one-family-out
validation); without one the prior is zero (the overhead is not known).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass, replace
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
from servewise.knowledge.engines import serving_engines
from servewise.versions import EngineVersion

FILENAME = "accounting.toml"
TABLE = "constant"
FIELDS = frozenset({"id", "name", "engine", "value", "unit", "since", "until", "source", "notes",
                    "fitted_on", "prior"})
ENGINES = serving_engines()


@dataclass(frozen=True)
class EngineConstant:
    """One entry of the table."""

    id: str
    name: str
    engine: str
    value: float | int | str
    unit: str
    since: EngineVersion | None
    until: EngineVersion | None
    sources: tuple[str, ...]
    notes: str
    fitted_on: tuple[str, ...] = ()
    """Startup logs the value was fitted to: corpus record ids or ``family:NAME``."""
    prior: float | str | None = None
    """The value without those logs (``None``: zero)."""

    @property
    def fitted(self) -> bool:
        """Whether the value was fitted to logs rather than read in an engine's source."""
        return bool(self.fitted_on)

    def applies(self, version: EngineVersion) -> bool:
        """Whether the entry holds for ``version``."""
        if self.since is not None and version < self.since:
            return False
        return not (self.until is not None and version >= self.until)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data."""
        return {
            "id": self.id,
            "name": self.name,
            "engine": self.engine,
            "value": self.value,
            "unit": self.unit,
            "since": str(self.since) if self.since else None,
            "until": str(self.until) if self.until else None,
            "sources": list(self.sources),
            "notes": self.notes,
            "fitted_on": list(self.fitted_on),
            "prior": self.prior,
        }


class EngineConstants:
    """The table: look a constant up by engine, name and version."""

    def __init__(self, constants: Iterable[EngineConstant]) -> None:
        self._all = tuple(constants)

    def all(self) -> tuple[EngineConstant, ...]:
        """Every entry."""
        return self._all

    def with_values(self, values: dict[str, float | int | str]) -> EngineConstants:
        """A copy where the entries with the ids in ``values`` hold those values."""
        unknown = set(values) - {constant.id for constant in self._all}
        if unknown:
            raise UsageError(f"no constant with id {sorted(unknown)[0]!r}")
        return EngineConstants(replace(c, value=values[c.id]) if c.id in values else c
                               for c in self._all)

    def entry(self, engine: str, name: str, version: EngineVersion) -> EngineConstant:
        """The entry for ``name`` that holds at ``version``."""
        for constant in self._all:
            if constant.engine == engine and constant.name == name and constant.applies(version):
                return constant
        raise UsageError(
            f"no {engine} constant {name!r} for version {version}",
            hint="add one to accounting.toml in $SERVEWISE_DATA_DIR",
            engine=engine, name=name, version=str(version),
        )

    def number(self, engine: str, name: str, version: EngineVersion) -> float:
        """A numeric constant."""
        value = self.entry(engine, name, version).value
        if isinstance(value, str):
            raise UsageError(f"{engine} constant {name!r} is not a number", found=value)
        return float(value)

    def integer(self, engine: str, name: str, version: EngineVersion) -> int:
        """An integer constant."""
        return int(self.number(engine, name, version))

    def text(self, engine: str, name: str, version: EngineVersion) -> str:
        """A string constant (a version, a rule)."""
        return str(self.entry(engine, name, version).value)

    def version(self, engine: str, name: str) -> EngineVersion:
        """A constant that is a version (its own range ignored)."""
        for constant in self._all:
            if constant.engine == engine and constant.name == name:
                return EngineVersion.parse(str(constant.value))
        raise UsageError(f"no {engine} version constant {name!r}")


def constant_from_entry(entry: RawEntry) -> EngineConstant:
    """Validate one ``[[constant]]`` entry."""
    reader = EntryReader(entry, FIELDS)
    engine = reader.string("engine")
    if engine not in ENGINES:
        raise reader.error("engine", "unknown engine", expected=" or ".join(ENGINES), found=engine)
    value = entry.data.get("value")
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise reader.error("value", "must be a number or a string", found=repr(value))
    prior = entry.data.get("prior")
    if prior is not None and (isinstance(prior, bool)
                              or not isinstance(prior, int | float | str)):
        raise reader.error("prior", "must be a number or a string", found=repr(prior))
    fitted_on = reader.strings("fitted_on", required=False)
    if prior is not None and not fitted_on:
        raise reader.error("prior", "only a fitted constant has a prior",
                           expected="fitted_on beside it")
    return EngineConstant(
        id=reader.string("id"),
        name=reader.string("name"),
        engine=engine,
        value=value,
        unit=reader.string("unit"),
        since=reader.optional_version("since"),
        until=reader.optional_version("until"),
        sources=reader.sources(),
        notes=reader.optional_string("notes"),
        fitted_on=fitted_on,
        prior=float(prior) if isinstance(prior, int | float) else prior,
    )


def _build(entries: list[RawEntry]) -> EngineConstants:
    check_unique(entries)
    return EngineConstants(constant_from_entry(entry) for entry in entries)


@functools.cache
def _shipped() -> EngineConstants:
    return _build(list(shipped_entries(FILENAME, TABLE)))


def load_engine_constants(user_dir: Path | None = None) -> EngineConstants:
    """The shipped constants plus ``accounting.toml`` from the user data folder."""
    return load_table(FILENAME, TABLE, user_dir, _shipped, _build)
