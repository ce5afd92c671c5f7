"""Serving engines and how they name their builds: packages, image repositories, tag conventions.

Two shipped tables: ``knowledge/data/engines.toml`` (``[[engine]]``: the engine's
packages, image repositories and version scheme) and
``knowledge/data/image_tags.toml`` (``[[tag]]``: what a tag such as
``nightly-<commit>`` or ``v0.5.2-cu126`` says). Files of the same names in the
user data folder add entries or override shipped ones by ``id``::

    engines = load_engine_table()
    engines.for_image("vllm/vllm-openai").id          # "vllm"
    engines.tag("vllm", "nightly").floating            # True
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath

from servewise.knowledge._load import (
    EntryReader,
    RawEntry,
    check_unique,
    merge_by_id,
    shipped_entries,
    user_entries,
)
from servewise.knowledge.patterns import normalize_package

ENGINES_FILE = "engines.toml"
TAGS_FILE = "image_tags.toml"

ENGINE_FIELDS = frozenset(
    {"id", "name", "packages", "images", "repository", "version_scheme", "serves", "port",
     "entry_points", "notes", "source"}
)
"""Fields an ``[[engine]]`` entry may set."""

TAG_FIELDS = frozenset(
    {"id", "engine", "pattern", "kind", "floating", "meaning", "examples", "source"}
)
"""Fields a ``[[tag]]`` entry may set."""

SCHEMES = frozenset({"setuptools-scm", "date-dev", "static"})
"""Accepted ``version_scheme`` values."""

TAG_KINDS = frozenset({"release", "pre-release", "nightly", "commit", "monthly", "floating"})
"""Accepted ``kind`` values of a tag convention."""

_GROUPS = frozenset({"version", "commit", "date", "year", "month", "cuda", "platform"})


def normalize_repository(reference: str) -> str:
    """An image repository as Docker resolves it: no ``docker.io/``, no ``library/``, lower case.

    ``docker.io/vllm/vllm-openai`` → ``vllm/vllm-openai``; ``index.docker.io/library/ubuntu``
    → ``ubuntu``.
    """
    text = reference.strip().lower()
    for prefix in ("https://", "http://"):
        text = text.removeprefix(prefix)
    for registry in ("docker.io/", "index.docker.io/", "registry-1.docker.io/"):
        if text.startswith(registry):
            text = text[len(registry):]
            break
    return text.removeprefix("library/")


@dataclass(frozen=True)
class Engine:
    """One serving engine."""

    id: str
    name: str
    packages: tuple[str, ...]
    images: tuple[str, ...]
    repository: str
    version_scheme: str
    notes: str
    sources: tuple[str, ...]
    serves: bool = False
    """Whether servewise plans, checks and launches this engine (vLLM, SGLang)."""
    port: int | None = None
    """Where its OpenAI-compatible server listens unless told otherwise."""
    entry_points: tuple[str, ...] = ()
    """``PROGRAM SUBCOMMAND`` (``vllm serve``) or a module run with ``-m``."""


@dataclass(frozen=True)
class TagConvention:
    """What tags of one shape say about the build behind them."""

    id: str
    engine: str
    """An engine id, or ``any``."""
    pattern: re.Pattern[str]
    kind: str
    floating: bool
    meaning: str
    examples: tuple[str, ...]
    sources: tuple[str, ...]


class EngineTable:
    """The known engines and their tag conventions."""

    def __init__(self, engines: tuple[Engine, ...], tags: tuple[TagConvention, ...]) -> None:
        self.engines = engines
        self.tags = tags

    def get(self, ident: str) -> Engine | None:
        """The engine with id ``ident``."""
        return next((engine for engine in self.engines if engine.id == ident), None)

    def for_package(self, name: str) -> Engine | None:
        """The engine a distribution belongs to (``vllm``, ``sglang-kernel`` …), if any."""
        wanted = normalize_package(name)
        for engine in self.engines:
            if wanted in (normalize_package(p) for p in engine.packages):
                return engine
        return None

    def for_image(self, repository: str) -> Engine | None:
        """The engine an image repository publishes, if it is one the table knows."""
        wanted = normalize_repository(repository)
        for engine in self.engines:
            if wanted in (normalize_repository(image) for image in engine.images):
                return engine
        return None

    def tag(self, engine: str | None, tag: str) -> tuple[TagConvention, re.Match[str]] | None:
        """The convention a tag follows: the engine's own first, then the shared ones.

        With no engine (a bare tag) every engine's conventions are tried, in table order.
        """
        order = [t for t in self.tags if t.engine != "any" and engine in (None, t.engine)]
        order += [t for t in self.tags if t.engine == "any"]
        for convention in order:
            match = convention.pattern.fullmatch(tag)
            if match is not None:
                return convention, match
        return None


def engine_from_entry(entry: RawEntry) -> Engine:
    """Validate one ``[[engine]]`` entry."""
    reader = EntryReader(entry, ENGINE_FIELDS)
    scheme = reader.string("version_scheme")
    if scheme not in SCHEMES:
        raise reader.error("version_scheme", "unknown scheme",
                           expected=", ".join(sorted(SCHEMES)), found=scheme)
    return Engine(
        id=reader.string("id"),
        name=reader.string("name"),
        packages=reader.strings("packages", non_empty=True),
        images=reader.strings("images", required=False),
        repository=reader.string("repository"),
        version_scheme=scheme,
        notes=reader.optional_string("notes"),
        sources=reader.sources(),
        serves=reader.boolean("serves", default=False),
        port=reader.positive_int("port") if reader.has("port") else None,
        entry_points=reader.strings("entry_points", required=False),
    )


def tag_from_entry(entry: RawEntry, engines: set[str]) -> TagConvention:
    """Validate one ``[[tag]]`` entry (its engine must be known, its groups understood)."""
    reader = EntryReader(entry, TAG_FIELDS)
    engine = reader.string("engine")
    if engine != "any" and engine not in engines:
        raise reader.error("engine", "unknown engine id",
                           expected="an id from engines.toml or any", found=engine)
    kind = reader.string("kind")
    if kind not in TAG_KINDS:
        raise reader.error("kind", "unknown tag kind",
                           expected=", ".join(sorted(TAG_KINDS)), found=kind)
    pattern = reader.regex("pattern", reader.string("pattern"))
    unknown = set(pattern.groupindex) - _GROUPS
    if unknown:
        raise reader.error("pattern", "unknown named group",
                           expected=", ".join(sorted(_GROUPS)), found=", ".join(sorted(unknown)))
    examples = reader.strings("examples", required=False)
    for example in examples:
        if pattern.fullmatch(example) is None:
            raise reader.error("examples", "an example the pattern does not match",
                               found=example)
    return TagConvention(
        id=reader.string("id"),
        engine=engine,
        pattern=pattern,
        kind=kind,
        floating=reader.boolean("floating", default=False),
        meaning=reader.string("meaning"),
        examples=examples,
        sources=reader.sources(),
    )


def _build(engine_entries: list[RawEntry], tag_entries: list[RawEntry]) -> EngineTable:
    check_unique(engine_entries)
    check_unique(tag_entries)
    engines = tuple(engine_from_entry(entry) for entry in engine_entries)
    ids = {engine.id for engine in engines}
    return EngineTable(engines, tuple(tag_from_entry(entry, ids) for entry in tag_entries))


@functools.cache
def _shipped() -> EngineTable:
    return _build(list(shipped_entries(ENGINES_FILE, "engine")),
                  list(shipped_entries(TAGS_FILE, "tag")))


def load_engine_table(user_dir: Path | None = None) -> EngineTable:
    """The shipped engines and tag conventions plus the user data folder's files."""
    extra_engines = user_entries(ENGINES_FILE, "engine", user_dir)
    extra_tags = user_entries(TAGS_FILE, "tag", user_dir)
    if not extra_engines and not extra_tags:
        return _shipped()
    return _build(merge_by_id(shipped_entries(ENGINES_FILE, "engine"), extra_engines),
                  merge_by_id(shipped_entries(TAGS_FILE, "tag"), extra_tags))


def serving_engines() -> tuple[str, ...]:
    """The engines servewise plans, checks and launches (``serves = true``), in table order."""
    return tuple(engine.id for engine in _shipped().engines if engine.serves)


def display_name(engine: str) -> str:
    """How people write an engine's name (``vLLM``, ``SGLang``); the id when unknown."""
    found = _shipped().get(engine)
    return found.name if found is not None else engine


def default_port(engine: str) -> int:
    """Where ``engine``'s server listens unless told otherwise (vLLM 8000, SGLang 30000)."""
    found = _shipped().get(engine)
    if found is None or found.port is None:
        raise KeyError(engine)
    return found.port


def _entry(argv: Sequence[str], index: int, engine: Engine) -> int | None:
    """How many words the engine's entry point takes at ``argv[index]``, or None."""
    token = argv[index]
    for entry in engine.entry_points:
        program, _, sub = entry.partition(" ")
        if sub and PurePath(token).name == program and argv[index + 1:index + 2] == [sub]:
            return 2
        if not sub and token == entry:
            return 1
    return None


def engine_of(argv: Sequence[str]) -> str | None:
    """The serving engine ``argv`` starts (``vllm serve …``, ``python -m
    sglang.launch_server …``), or None for another program."""
    engines = [engine for engine in _shipped().engines if engine.serves]
    for index in range(len(argv)):
        for engine in engines:
            if _entry(argv, index, engine) is not None:
                return engine.id
    return None


def engine_args(argv: Sequence[str], engine: str | None) -> list[str]:
    """The arguments after the engine's entry point (all but the program when unknown)."""
    found = _shipped().get(engine) if engine else None
    if found is not None:
        for index in range(len(argv)):
            words = _entry(argv, index, found)
            if words is not None:
                return list(argv[index + words:])
    return list(argv[1:])
