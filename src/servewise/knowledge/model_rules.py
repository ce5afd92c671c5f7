"""Model rules and GPU pitfalls, read from data files with their sources.

``knowledge/data/model_rules.toml`` holds ``[[rule]]`` entries: a flag a model requires
(with the values it takes) or forbids on an engine, from or below a version, with the
error it prevents, the fix and the source. A rule names its models by Hugging Face id
(globs) and, so that a renamed copy or a local folder is caught too, by the architectures of
their ``config.json``. The planner, ``check`` and the recipe importer read this one table.
``knowledge/data/pitfalls.toml`` holds
``[[pitfall]]`` entries: a known way to fail on a GPU family or compute capability with
an engine (and, optionally, a bundled library or some flags), with the symptom, what to
do and the source. A user file of the same name in ``$SERVEWISE_DATA_DIR`` adds entries
or overrides shipped ones by ``id``.

::

    rules = model_rules_for("deepseek-ai/DeepSeek-V4-Flash", "vllm", "0.26.0")
    check_rules(rules, ["--tensor-parallel-size", "2"])     # kv-cache-dtype, block size, …
    pitfalls_for(cc="12.0", engine="vllm", libraries={"deep_gemm"})
"""

from __future__ import annotations

import fnmatch
import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from servewise.errors import ServewiseError
from servewise.knowledge import argv as argv_tools
from servewise.knowledge._load import (
    EntryReader,
    RawEntry,
    check_unique,
    load_table,
    shipped_entries,
)
from servewise.knowledge.engines import serving_engines
from servewise.versions import EngineVersion

RULES_FILE = "model_rules.toml"
PITFALLS_FILE = "pitfalls.toml"


def _in_range(
    version: EngineVersion | str | None, low: EngineVersion | None, high: EngineVersion | None
) -> bool:
    """Whether ``version`` is in [low, high); an unknown or unreadable version is."""
    if version is None or (low is None and high is None):
        return True
    try:
        parsed = EngineVersion.coerce(version.split()[0] if isinstance(version, str)
                                      else version)
    except ServewiseError:
        return True
    return (low is None or parsed.at_least(low)) and (high is None or not parsed.at_least(high))


def _model_matches(patterns: Iterable[str], model: str) -> bool:
    full = model.strip().rstrip("/").lower()
    base = full.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatchcase(full, p.lower()) or fnmatch.fnmatchcase(base, p.lower())
               for p in patterns)


@dataclass(frozen=True)
class ModelRule:
    """A flag a model requires (with allowed values) or forbids on an engine."""

    id: str
    models: tuple[str, ...]
    engine: str
    kind: Literal["require", "forbid"]
    flag: str
    values: tuple[str, ...]
    """Allowed values (require) or forbidden value patterns (forbid); empty: any value."""
    fix: tuple[str, ...]
    prevents: str
    why: str
    sources: tuple[str, ...]
    min_version: EngineVersion | None = None
    max_version: EngineVersion | None = None
    architectures: tuple[str, ...] = ()
    """``config.json`` architectures the rule is about, whatever the model is called."""

    def applies(self, model: str, engine: str, version: EngineVersion | str | None = None,
                architectures: Iterable[str] = ()) -> bool:
        """Whether the rule is about this model (by id, or by one of its config's
        ``architectures``), engine and version."""
        named = _model_matches(self.models, model) or bool(
            set(self.architectures) & set(architectures))
        return (self.engine == engine and named
                and _in_range(version, self.min_version, self.max_version))

    def check(self, argv: Sequence[str]) -> RuleViolation | None:
        """The violation of this rule by ``argv``, or None when it holds."""
        given = argv_tools.values(argv, self.flag)
        if self.kind == "require":
            if not given and not argv_tools.has(argv, self.flag):
                return RuleViolation(self, None, "missing")
            last = given[-1] if given else None
            if self.values and (last is None or last not in self.values):
                return RuleViolation(self, last, "wrong value")
            return None
        present = given or ([None] if argv_tools.has(argv, self.flag) else [])
        for value in present:
            if not self.values or (value is not None and any(
                    fnmatch.fnmatchcase(value, pattern) for pattern in self.values)):
                return RuleViolation(self, value, "forbidden")
        return None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return {
            "id": self.id, "models": list(self.models), "engine": self.engine,
            "kind": self.kind, "flag": self.flag, "values": list(self.values),
            "fix": list(self.fix), "prevents": self.prevents, "why": self.why,
            "min_version": self.min_version.raw if self.min_version else None,
            "max_version": self.max_version.raw if self.max_version else None,
            "architectures": list(self.architectures),
            "sources": list(self.sources),
        }


@dataclass(frozen=True)
class RuleViolation:
    """A rule an argv breaks: which, the value found (None: absent) and how."""

    rule: ModelRule
    found: str | None
    how: str
    """``missing``, ``wrong value`` or ``forbidden``."""

    @property
    def message(self) -> str:
        """One line: what is wrong, what it prevents."""
        rule = self.rule
        if self.how == "missing":
            what = f"{rule.flag} is required"
        elif self.how == "wrong value":
            what = f"{rule.flag} {self.found} is not one of {', '.join(rule.values)}"
        else:
            what = f"{rule.flag}{' ' + self.found if self.found else ''} must not be used"
        return f"{what}: without it, {rule.prevents}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return {"rule": self.rule.id, "how": self.how, "found": self.found,
                "message": self.message, "fix": list(self.rule.fix),
                "sources": list(self.rule.sources)}


def _rule(entry: RawEntry) -> ModelRule:
    reader = EntryReader(entry, {"id", "models", "engine", "kind", "flag", "values", "fix",
                                 "prevents", "why", "source", "min_version", "max_version",
                                 "architectures"})
    engine = reader.string("engine")
    engines = serving_engines()
    if engine not in engines:
        raise reader.error("engine", "unknown engine", expected=" | ".join(engines), found=engine)
    kind = reader.string("kind")
    if kind not in ("require", "forbid"):
        raise reader.error("kind", "unknown kind", expected="require | forbid", found=kind)
    flag = reader.string("flag")
    if not flag.startswith("--"):
        raise reader.error("flag", "must be a long flag", expected="--name", found=flag)
    fix = reader.strings("fix", required=False)
    if kind == "require" and not fix:
        raise reader.error("fix", "a required flag needs its fix", expected="an argv list")
    return ModelRule(
        id=reader.string("id"), models=reader.strings("models", non_empty=True), engine=engine,
        kind="require" if kind == "require" else "forbid", flag=flag,
        values=reader.strings("values", required=False), fix=fix,
        prevents=reader.string("prevents"), why=reader.string("why"), sources=reader.sources(),
        min_version=reader.optional_version("min_version"),
        max_version=reader.optional_version("max_version"),
        architectures=reader.strings("architectures", required=False),
    )


@dataclass(frozen=True)
class Pitfall:
    """A known way to fail on a kind of GPU with an engine, and what to do instead."""

    id: str
    title: str
    engines: tuple[str, ...]
    families: tuple[str, ...]
    compute_capabilities: tuple[str, ...]
    not_compute_capabilities: tuple[str, ...]
    libraries: tuple[str, ...]
    when_any: tuple[str, ...]
    """Conditions, any of which makes it apply: ``--flag``, ``--flag=glob`` or ``env:NAME=glob``."""
    unless_at_most: Mapping[str, float]
    """Flags whose value at or below the number avoids it (``--mem-fraction-static``: 0.90)."""
    symptom: str
    advice: str
    sources: tuple[str, ...]
    models: tuple[str, ...] = ()
    """Model families (ids of ``models.toml``) it happens with; empty: any model."""
    since: EngineVersion | None = None
    until: EngineVersion | None = None
    """Engine versions it happens with (since inclusive, until exclusive)."""

    def applies_to(
        self, *, cc: str | None = None, family: str | None = None, engine: str | None = None,
        libraries: Iterable[str] | None = None, model: str | None = None,
        version: EngineVersion | str | None = None, model_known: bool = False,
    ) -> bool:
        """Whether the GPU (by compute capability or family), engine, libraries, model family
        and engine version fit. ``model`` is the family id (``model_known``: the model was
        identified, so a pitfall for other families does not apply even when it is None)."""
        if engine is not None and engine not in self.engines:
            return False
        if self.models and (model_known or model is not None) and model not in self.models:
            return False
        if version is not None and (self.since is not None or self.until is not None):
            at = EngineVersion.coerce(version)
            if self.since is not None and at < self.since:
                return False
            if self.until is not None and not at < self.until:
                return False
        if cc is not None:
            if self.compute_capabilities and cc not in self.compute_capabilities:
                return False
            if cc in self.not_compute_capabilities:
                return False
        if family is not None and self.families and family not in self.families:
            return False
        if libraries is not None and self.libraries:
            return bool(set(self.libraries) & set(libraries))
        return True

    def triggered(self, argv: Sequence[str], env: Mapping[str, str] | None = None) -> bool:
        """Whether ``argv``/``env`` meet a condition and no ``unless_at_most`` avoids it."""
        if self.when_any and not any(self._condition(c, argv, env or {}) for c in self.when_any):
            return False
        for flag, limit in self.unless_at_most.items():
            value = argv_tools.last_value(argv, flag)
            try:
                if value is not None and float(value) <= limit:
                    return False
            except ValueError:
                continue
        return True

    @staticmethod
    def _condition(condition: str, argv: Sequence[str], env: Mapping[str, str]) -> bool:
        if condition.startswith("env:"):
            name, _, pattern = condition[4:].partition("=")
            return name in env and fnmatch.fnmatchcase(env[name], pattern or "*")
        flag, eq, pattern = condition.partition("=")
        if not eq:
            return argv_tools.has(argv, flag)
        return any(value is not None and fnmatch.fnmatchcase(value, pattern)
                   for value in argv_tools.values(argv, flag))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return {
            "id": self.id, "title": self.title, "engines": list(self.engines),
            "families": list(self.families),
            "compute_capabilities": list(self.compute_capabilities),
            "not_compute_capabilities": list(self.not_compute_capabilities),
            "libraries": list(self.libraries), "when_any": list(self.when_any),
            "unless_at_most": dict(self.unless_at_most), "symptom": self.symptom,
            "advice": self.advice, "sources": list(self.sources), "models": list(self.models),
            "since": str(self.since) if self.since else None,
            "until": str(self.until) if self.until else None,
        }


def _pitfall(entry: RawEntry) -> Pitfall:
    reader = EntryReader(entry, {"id", "title", "engines", "families", "compute_capabilities",
                                 "not_compute_capabilities", "libraries", "when_any",
                                 "unless_at_most", "symptom", "advice", "source", "models",
                                 "since", "until"})
    engines = reader.strings("engines", non_empty=True)
    for engine in engines:
        if engine not in serving_engines():
            raise reader.error("engines", "unknown engine",
                               expected=" | ".join(serving_engines()), found=engine)
    for condition in reader.strings("when_any", required=False):
        if not (condition.startswith("--") or condition.startswith("env:")):
            raise reader.error("when_any", "a condition is --flag[=glob] or env:NAME[=glob]",
                               found=condition)
    limits: dict[str, float] = {}
    raw = entry.data.get("unless_at_most", {})
    if not isinstance(raw, dict) or not all(
            isinstance(k, str) and k.startswith("--") and isinstance(v, int | float)
            for k, v in raw.items()):
        raise reader.error("unless_at_most", "must map flags to numbers",
                           expected='{"--mem-fraction-static" = 0.90}', found=repr(raw))
    limits.update({k: float(v) for k, v in raw.items()})
    return Pitfall(
        id=reader.string("id"), title=reader.string("title"), engines=engines,
        families=reader.strings("families", required=False),
        compute_capabilities=reader.strings("compute_capabilities", required=False),
        not_compute_capabilities=reader.strings("not_compute_capabilities", required=False),
        libraries=reader.strings("libraries", required=False),
        when_any=reader.strings("when_any", required=False), unless_at_most=limits,
        symptom=reader.string("symptom"), advice=reader.string("advice"),
        sources=reader.sources(), models=reader.strings("models", required=False),
        since=reader.optional_version("since"), until=reader.optional_version("until"),
    )


def _build_rules(entries: list[RawEntry]) -> tuple[ModelRule, ...]:
    check_unique(entries)
    return tuple(_rule(entry) for entry in entries)


def _build_pitfalls(entries: list[RawEntry]) -> tuple[Pitfall, ...]:
    check_unique(entries)
    return tuple(_pitfall(entry) for entry in entries)


@functools.cache
def _shipped_rules() -> tuple[ModelRule, ...]:
    return _build_rules(list(shipped_entries(RULES_FILE, "rule")))


@functools.cache
def _shipped_pitfalls() -> tuple[Pitfall, ...]:
    return _build_pitfalls(list(shipped_entries(PITFALLS_FILE, "pitfall")))


def load_model_rules(user_dir: Path | None = None) -> tuple[ModelRule, ...]:
    """Every model rule: shipped, with the user's ``model_rules.toml`` merged by id."""
    return load_table(RULES_FILE, "rule", user_dir, _shipped_rules, _build_rules)


def load_pitfalls(user_dir: Path | None = None) -> tuple[Pitfall, ...]:
    """Every pitfall: shipped, with the user's ``pitfalls.toml`` merged by id."""
    return load_table(PITFALLS_FILE, "pitfall", user_dir, _shipped_pitfalls, _build_pitfalls)


def model_rules_for(
    model: str, engine: str, version: EngineVersion | str | None = None, *,
    user_dir: Path | None = None, architectures: Iterable[str] = (),
) -> list[ModelRule]:
    """The rules for ``model`` (or a model of one of ``architectures``) on ``engine`` at
    ``version`` (None: every version)."""
    archs = tuple(architectures)
    return [rule for rule in load_model_rules(user_dir)
            if rule.applies(model, engine, version, archs)]


def check_rules(rules: Iterable[ModelRule], argv: Sequence[str]) -> list[RuleViolation]:
    """The rules ``argv`` breaks."""
    return [violation for rule in rules if (violation := rule.check(argv)) is not None]


def apply_fixes(argv: Sequence[str], violations: Iterable[RuleViolation]) -> list[str]:
    """``argv`` with each violation fixed: required flags set, forbidden ones removed."""
    out = list(argv)
    for violation in violations:
        rule = violation.rule
        out = argv_tools.without(out, rule.flag)
        if rule.kind == "require" or rule.fix:
            out.extend(rule.fix)
    return out


def pitfalls_for(
    *, gpu: Any = None, cc: str | None = None, family: str | None = None,
    engine: str | None = None, libraries: Iterable[str] | None = None,
    argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None,
    user_dir: Path | None = None, model: str | None = None,
    version: EngineVersion | str | None = None, model_known: bool = False,
) -> list[Pitfall]:
    """The pitfalls for a GPU (a ``GpuSpec`` or catalog ``Gpu``, or its compute capability
    such as ``"12.0"`` and family), an engine and the build's libraries (None: unknown, so
    not ruled out), the model family (``model``; ``model_known`` when the model was
    identified) and engine version; with ``argv`` (and ``env``), only those the launch
    triggers."""
    if gpu is not None:
        catalog_gpu = getattr(gpu, "gpu", None) or gpu
        capability = getattr(gpu, "compute_capability", None) or getattr(catalog_gpu, "cc", None)
        cc = cc or (str(capability) if capability is not None else None)
        family = family or getattr(catalog_gpu, "family", None)
    found = []
    for pitfall in load_pitfalls(user_dir):
        if not pitfall.applies_to(cc=cc, family=family, engine=engine, libraries=libraries,
                                  model=model, version=version, model_known=model_known):
            continue
        if argv is not None and not pitfall.triggered(argv, env):
            continue
        found.append(pitfall)
    return found
