"""The tables diagnose reads beside its rules: shared patterns, log facts, phases, attribution.

Each is a TOML file in ``knowledge/data/`` with a source per entry, extended or
overridden by the file of the same name in the user data folder:

``diagnose_patterns.toml``
    ``[[pattern]]``: named regular expressions rules include as ``%{name}``.
``diagnose_facts.toml``
    ``[[fact]]``: values read from anywhere in a log (the memory fraction an
    engine ran with, the GPU's total memory, the port…), a new engine start, a
    deliberate shutdown.
``diagnose_phases.toml``
    ``[[phase]]``: the start-up phases (weight loading, memory profiling, CUDA
    graph capture, serving…), recognised from frame functions and messages, and
    the log lines that mark entering them.
``diagnose_attribution.toml``
    ``[[attribution]]``: which library and layer a source path or a message
    format belongs to, most specific first.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

from servewise.knowledge._load import (
    EntryReader,
    RawEntry,
    check_unique,
    merge_by_id,
    shipped_entries,
    user_data_dir,
    user_entries,
)

LAYERS = (
    "engine_config",
    "engine_runtime",
    "model_loader",
    "kernel_library",
    "jit_compiler",
    "driver",
    "hardware",
    "distributed_comms",
    "orchestration",
    "tokenizer_hub",
    "frontend",
    "host",
    "unknown",
)
"""The layers a failure is attributed to."""

_INCLUDE = re.compile(r"%\{(\w+)\}")
_ID = re.compile(r"^[a-z][a-z0-9_]*$")

REPEAT_LIMIT = 256
"""The most repeats a ``+``, ``*`` or ``{m,}`` of a diagnose regex may take (see :func:`bound`)."""
_OPEN_BOUND = re.compile(r"\{(\d+),\}")


def bound(pattern: str, limit: int = REPEAT_LIMIT) -> str:
    """``pattern`` with every unbounded repeat bounded: ``+`` as ``{1,limit}``, ``*`` as
    ``{0,limit}``, ``{m,}`` as ``{m,limit}`` (lazy ``?`` and possessive ``+`` kept).

    Rules run over text users paste: a line may carry a 64 KB blob (base64, a hex dump, a
    prompt). An unbounded repeat that backtracks tries every start position to the end of
    the blob, which is quadratic; bounded, each start costs at most ``limit`` steps. Engine
    messages have no token, number or quoted part anywhere near 256 characters.
    """
    out: list[str] = []
    index, size = 0, len(pattern)
    in_class = False
    class_start = -1
    while index < size:
        char = pattern[index]
        if char == "\\":
            out.append(pattern[index:index + 2])
            index += 2
            continue
        if in_class:
            out.append(char)
            if char == "]" and index > class_start + 1 and not (
                    index == class_start + 2 and pattern[class_start + 1] == "^"):
                in_class = False
            index += 1
            continue
        if char == "[":
            in_class, class_start = True, index
            out.append(char)
            index += 1
            continue
        if char in "+*":
            out.append(f"{{{1 if char == '+' else 0},{limit}}}")
            index += 1
            if index < size and pattern[index] in "?+":
                out.append(pattern[index])
                index += 1
            continue
        if char == "{":
            found = _OPEN_BOUND.match(pattern, index)
            if found is not None:
                out.append(f"{{{found[1]},{max(limit, int(found[1]))}}}")
                index = found.end()
                continue
        out.append(char)
        index += 1
    return "".join(out)


def written(pattern: str, limit: int = REPEAT_LIMIT) -> str:
    """A pattern :func:`bound` rewrote, as its rule file spells it (for the rule pages)."""
    text = pattern.replace(f"{{1,{limit}}}", "+").replace(f"{{0,{limit}}}", "*")
    return re.sub(r"\{(\d+)," + str(limit) + r"\}", r"{\1,}", text)


def bounded_regex(reader: EntryReader, field: str, text: str, flags: int = 0
                  ) -> re.Pattern[str]:
    """``text`` checked as written, then compiled with its repeats bounded (:func:`bound`)."""
    reader.regex(field, text, flags)
    return reader.regex(field, bound(text), flags)


def bounded_regexes(reader: EntryReader, field: str, flags: int = 0, *,
                    required: bool = True) -> tuple[re.Pattern[str], ...]:
    """A list of regular expressions, each compiled bounded (:func:`bound`)."""
    return tuple(bounded_regex(reader, field, text, flags)
                 for text in reader.strings(field, required=required, non_empty=required))


@dataclass(frozen=True)
class Fact:
    """A value or event read from any line of a log."""

    id: str
    kind: str
    """``value`` (the first named group is the value), ``run_start`` or ``shutdown``."""
    keywords: tuple[str, ...]
    patterns: tuple[re.Pattern[str], ...]
    engine: str | None
    sources: tuple[str, ...]


@dataclass(frozen=True)
class Phase:
    """A phase of engine start-up or serving."""

    id: str
    name: str
    functions: tuple[re.Pattern[str], ...]
    """Frame function names that place a failure in this phase."""
    messages: tuple[re.Pattern[str], ...]
    """Message text that places a failure in this phase."""
    innermost: tuple[re.Pattern[str], ...]
    """Paths of the innermost frame that place a failure here (an allocation inside a kernel
    library is that library's workspace)."""
    markers: tuple[str, ...]
    """Literal log text that marks entering this phase."""
    sources: tuple[str, ...]
    builders: tuple[re.Pattern[str], ...] = ()
    """Paths of model code whose ``__init__`` frames place a failure here (building the model
    allocates its weights)."""
    request_frames: tuple[re.Pattern[str], ...] = ()
    """(serving) Frame paths of the code that answers one request: an error raised there
    failed that request, not the server."""
    request_messages: tuple[re.Pattern[str], ...] = ()
    """(serving) Messages of errors that fail one request (a prompt over the context length)."""
    request_handlers: tuple[re.Pattern[str], ...] = ()
    """(serving) Frame paths of code that only ever runs for a request (a chat handler, a tool
    parser): an error raised there is a failed request even in an excerpt that does not show
    the server coming up."""


@dataclass(frozen=True)
class Attribution:
    """A library and layer recognised from a source path or a message format."""

    id: str
    library: str
    layer: str
    paths: tuple[re.Pattern[str], ...]
    messages: tuple[re.Pattern[str], ...]
    api: re.Pattern[str] | None
    """A regex over the path whose group ``api`` names the API (``/apis/(?P<api>\\w+)\\.hpp``)."""
    generic: bool
    """Frames of this library say nothing of the culprit (stdlib, torch's call plumbing)."""
    engine: str | None
    """The engine this path belongs to, when it is an engine's own code."""
    sources: tuple[str, ...]


@dataclass(frozen=True)
class DiagnoseTables:
    """Everything but the rules: patterns, facts, phases, attribution."""

    patterns: dict[str, str]
    facts: tuple[Fact, ...]
    phases: tuple[Phase, ...]
    attributions: tuple[Attribution, ...]

    def expand(self, text: str, reader: EntryReader | None = None, field: str = "") -> str:
        """``text`` with every ``%{name}`` replaced by that shared pattern."""

        def replace(match: re.Match[str]) -> str:
            name = match[1]
            if name not in self.patterns:
                if reader is not None:
                    raise reader.error(field, f"unknown shared pattern %{{{name}}}",
                                       expected=", ".join(sorted(self.patterns)), found=name)
                raise KeyError(name)
            return self.patterns[name]

        return _INCLUDE.sub(replace, text)


def expanded_regexes(reader: EntryReader, field: str, tables: DiagnoseTables
                     ) -> tuple[re.Pattern[str], ...]:
    """The optional list ``field``, each with its ``%{name}`` patterns expanded, compiled."""
    return tuple(bounded_regex(reader, field, tables.expand(text, reader, field))
                 for text in reader.strings(field, required=False))


def _slug(reader: EntryReader) -> str:
    ident = reader.string("id")
    if _ID.match(ident) is None:
        raise reader.error("id", "must be lower_snake_case", expected="[a-z][a-z0-9_]*",
                           found=ident)
    return ident


def _layer(reader: EntryReader, field: str = "layer") -> str:
    layer = reader.string(field)
    if layer not in LAYERS:
        raise reader.error(field, "unknown layer", expected=", ".join(LAYERS), found=layer)
    return layer


def _entries(filename: str, table: str, user_dir: Path | bool | None) -> list[RawEntry]:
    """Shipped entries, merged with the user folder's unless ``user_dir`` is False."""
    extra = [] if user_dir is False or user_dir is True else user_entries(filename, table,
                                                                          user_dir)
    entries = merge_by_id(shipped_entries(filename, table), extra)
    check_unique(entries)
    return entries


def _load_patterns(user_dir: Path | bool | None) -> dict[str, str]:
    patterns: dict[str, str] = {}
    for entry in _entries("diagnose_patterns.toml", "pattern", user_dir):
        reader = EntryReader(entry, {"id", "regex", "source", "notes"})
        ident = _slug(reader)
        regex = reader.string("regex")
        reader.sources()
        if _INCLUDE.search(regex):
            raise reader.error("regex", "a shared pattern cannot include another", found=regex)
        reader.regex("regex", regex)
        patterns[ident] = regex
    return patterns


_FACT_KINDS = ("value", "run_start", "shutdown")


def _load_facts(user_dir: Path | bool | None) -> tuple[Fact, ...]:
    facts = []
    for entry in _entries("diagnose_facts.toml", "fact", user_dir):
        reader = EntryReader(entry, {"id", "kind", "keywords", "patterns", "engine", "source",
                                     "notes"})
        kind = reader.optional_string("kind", "value")
        if kind not in _FACT_KINDS:
            raise reader.error("kind", "unknown fact kind", expected=", ".join(_FACT_KINDS),
                               found=kind)
        patterns = bounded_regexes(reader, "patterns")
        if kind == "value" and any(not pattern.groupindex for pattern in patterns):
            raise reader.error("patterns", "a value fact needs a named group in every pattern")
        facts.append(Fact(
            id=_slug(reader),
            kind=kind,
            keywords=reader.strings("keywords", non_empty=True),
            patterns=patterns,
            engine=reader.optional_string("engine") or None,
            sources=reader.sources(),
        ))
    return tuple(facts)


def _load_phases(user_dir: Path | bool | None) -> tuple[Phase, ...]:
    phases = []
    for entry in _entries("diagnose_phases.toml", "phase", user_dir):
        reader = EntryReader(entry, {"id", "name", "functions", "messages", "innermost",
                                     "builders", "markers", "request_frames",
                                     "request_messages", "request_handlers", "source",
                                     "notes"})
        phases.append(Phase(
            id=_slug(reader),
            name=reader.string("name"),
            functions=bounded_regexes(reader, "functions", required=False),
            messages=bounded_regexes(reader, "messages", required=False),
            innermost=bounded_regexes(reader, "innermost", required=False),
            markers=reader.strings("markers", required=False),
            sources=reader.sources(),
            builders=bounded_regexes(reader, "builders", required=False),
            request_frames=bounded_regexes(reader, "request_frames", required=False),
            request_messages=bounded_regexes(reader, "request_messages", required=False),
            request_handlers=bounded_regexes(reader, "request_handlers", required=False),
        ))
    return tuple(phases)


def _load_attributions(user_dir: Path | bool | None) -> tuple[Attribution, ...]:
    found = []
    for entry in _entries("diagnose_attribution.toml", "attribution", user_dir):
        reader = EntryReader(entry, {"id", "library", "layer", "paths", "messages", "api",
                                     "generic", "engine", "source", "notes"})
        paths = bounded_regexes(reader, "paths", required=False)
        messages = bounded_regexes(reader, "messages", required=False)
        if not paths and not messages:
            raise reader.error("paths", "set paths, messages or both")
        api_text = reader.optional_string("api")
        api = bounded_regex(reader, "api", api_text) if api_text else None
        if api is not None and "api" not in api.groupindex:
            raise reader.error("api", "needs a named group (?P<api>…)", found=api_text)
        found.append(Attribution(
            id=reader.string("id"),
            library=reader.string("library"),
            layer=_layer(reader),
            paths=paths,
            messages=messages,
            api=api,
            generic=reader.boolean("generic", False),
            engine=reader.optional_string("engine") or None,
            sources=reader.sources(),
        ))
    return tuple(found)


TABLE_FILES = ("diagnose_patterns.toml", "diagnose_facts.toml", "diagnose_phases.toml",
               "diagnose_attribution.toml")


def load_diagnose_tables(user_dir: Path | None = None, *,
                         include_user: bool = True) -> DiagnoseTables:
    """The shipped tables plus the user folder's (``$SERVEWISE_DATA_DIR``) unless not wanted."""
    folder = user_data_dir() if user_dir is None else user_dir
    if not include_user or not any((folder / name).exists() for name in TABLE_FILES):
        return _shipped_tables()
    return _build(folder)


def _build(user_dir: Path | bool) -> DiagnoseTables:
    return DiagnoseTables(
        patterns=_load_patterns(user_dir),
        facts=_load_facts(user_dir),
        phases=_load_phases(user_dir),
        attributions=_load_attributions(user_dir),
    )


@functools.cache
def _shipped_tables() -> DiagnoseTables:
    return _build(False)
