"""Knowledge tables of general failure signals: vendor error codes, errno, exception families.

Rules (``knowledge/data/diagnose/``) recognise one message of one engine. The tables in
``knowledge/data/diagnose_signals/`` hold what every engine's log shares because it comes from
the layers below: CUDA runtime and driver error codes (by number and by name), HIP's, NCCL's
result codes, the operating system's ``errno`` values, Python's exception families, the
Hugging Face Hub's HTTP statuses, compute-capability phrases and the allocators' out-of-memory
messages. Each entry carries the vendor source it was taken from.

One file per table::

    title = "CUDA runtime and driver API errors"
    source = "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html"
    library = "driver"                    # the default culprit of the table's entries
    forms = ['CUDA error {code}\\b']      # how a log names an entry by its number

    [[signal]]
    id = "cuda-802"                       # unique across the tables
    code = 802
    names = ["cudaErrorSystemNotReady", "CUDA_ERROR_SYSTEM_NOT_READY"]
    messages = ["system not yet initialized"]
    category = "fabric_manager_not_running"   # none: the signal explains, it names no cause
    layer = "driver"
    meaning = "…"                         # what the vendor says it means
    fix = ["…"]                           # steps; {field} from a pattern's named groups
    collect = "…"                         # what to collect next
    risk = "…"                            # what the fix can break
    source = "https://…"

An entry matches by any of its ``names`` (as a word), ``messages`` (literal text), its
``code`` in one of the table's ``forms``, or its ``patterns`` (regular expressions whose named
groups become fields; each must contain one of the entry's ``keywords`` or names or messages).
:func:`~servewise.diagnose.ruleset.signal_rule` turns each entry that names a
category into a low-precedence ``cause`` rule: a specific rule of ``knowledge/data/diagnose/``
that matches the same event wins.
An entry without a category only explains an unclassified error (its meaning, what to collect).
"""

from __future__ import annotations

import functools
import re
import string
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from servewise.diagnose.tables import LAYERS, bound
from servewise.knowledge._load import (
    SHIPPED_PACKAGE,
    DataFileError,
    EntryReader,
    RawEntry,
    parse_toml,
)
from servewise.knowledge.patterns import required_literal

__all__ = ["ALWAYS_FIELDS", "SIGNALS_FOLDER", "SIGNAL_PRECEDENCE", "Signal", "SignalTable",
           "load_signal_tables", "template_names"]

SIGNALS_FOLDER = "diagnose_signals"
SIGNAL_PRECEDENCE = -10
"""Below every shipped rule's: a rule written for the message wins over a table's entry."""
_FILE_FIELDS = {"title", "source", "library", "layer", "forms", "culprit", "signal"}
_FIELDS = {"id", "code", "names", "messages", "patterns", "keywords", "category", "library",
           "layer", "phases", "exclude", "evidence_any", "meaning", "fix", "collect", "risk",
           "source", "weak", "culprit"}
_ID = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$")
ALWAYS_FIELDS = {"engine", "library", "category", "layer", "gpu", "model", "phase"}
"""Fields a step may use that every finding has (or shows as a placeholder)."""


def template_names(text: str) -> set[str]:
    return {name.split(".")[0] for _, name, _, _ in string.Formatter().parse(text) if name}


@dataclass(frozen=True)
class Signal:
    """One entry of a knowledge table."""

    id: str
    table: str
    """The table's file stem (``cuda``, ``errno``)."""
    code: int | None
    names: tuple[str, ...]
    messages: tuple[str, ...]
    patterns: tuple[re.Pattern[str], ...]
    """Every pattern that finds it: names, messages, code forms and its own patterns."""
    keywords: tuple[str, ...]
    """Literal text one of which every match holds (the pre-filter's and the rule's keywords)."""
    category: str | None
    library: str
    layer: str
    phases: tuple[str, ...]
    exclude: tuple[re.Pattern[str], ...]
    evidence_any: tuple[re.Pattern[str], ...]
    meaning: str
    fix: tuple[str, ...]
    collect: str
    risk: str
    sources: tuple[str, ...]
    weak: bool
    """Its text is common enough that alone it is weak evidence (``Permission denied``):
    the answer it gives says so, and a specific rule or stronger signal wins."""
    file: str
    culprit: bool = False
    """Its library is the culprit of an error it explains when the log names none (an errno
    is the host's; a cuBLAS status PyTorch's), not only the layer that reported it (a CUDA
    code is the driver's message about someone else's kernel)."""

    @property
    def title(self) -> str:
        """How the answer names it: ``CUDA 802 cudaErrorSystemNotReady``, ``errno 24 EMFILE``,
        else its message or id."""
        label = self.table.upper() if self.table in ("cuda", "hip", "nccl") else self.table
        parts = [label] if self.code is not None or self.names else []
        if self.code is not None:
            parts.append(str(self.code))
        if self.names:
            parts.append(self.names[0])
        if parts:
            return " ".join(parts)
        return f"'{self.messages[0]}'" if self.messages else self.id

    @property
    def summary(self) -> str:
        """One line: the title (when it names a code) and the meaning's first sentence."""
        first = self.meaning.split(". ")[0].rstrip(".")
        named = self.code is not None or bool(self.names)
        return f"{self.title}: {first}" if named else first


@dataclass(frozen=True)
class SignalTable:
    """One table file: its entries and where they come from."""

    name: str
    title: str
    sources: tuple[str, ...]
    signals: tuple[Signal, ...]


def _word(name: str) -> str:
    return r"(?<![\w.])" + re.escape(name) + r"(?!\w)"


def _compile(reader: EntryReader, field: str, text: str) -> re.Pattern[str]:
    reader.regex(field, text)
    return reader.regex(field, bound(text))


def _signal(entry: RawEntry, table: str, defaults: dict[str, object], forms: tuple[str, ...],
            categories: set[str], phase_ids: set[str]) -> Signal:
    reader = EntryReader(entry, _FIELDS)
    ident = reader.string("id")
    if _ID.match(ident) is None:
        raise reader.error("id", "must be kebab-case", expected="cuda-802", found=ident)
    code = entry.data.get("code")
    if code is not None and (isinstance(code, bool) or not isinstance(code, int)):
        raise reader.error("code", "must be an integer", found=repr(code))
    names = reader.strings("names", required=False)
    messages = reader.strings("messages", required=False)
    own = reader.strings("patterns", required=False)
    keywords = reader.strings("keywords", required=False)
    if not (names or messages or own or (code is not None and forms)):
        raise reader.error("names", "an entry needs names, messages, patterns or a code the "
                           "table's forms can find")
    patterns: list[re.Pattern[str]] = [_compile(reader, "names", _word(n)) for n in names]
    patterns += [_compile(reader, "messages", re.escape(m)) for m in messages]
    literals = [*names, *messages, *keywords]
    for form in forms if code is not None else ():
        text = form.replace("{code}", str(code))
        patterns.append(_compile(reader, "code", text))
        literals.append(required_literal(text) or text)
    for text in own:
        expanded = re.sub(r"\\(\W)", r"\1", text)
        if not any(word and word in expanded for word in literals):
            raise reader.error("patterns", "contains none of the entry's names, messages or "
                               "keywords, so the pre-filter would never pass its lines",
                               found=text)
        patterns.append(_compile(reader, "patterns", text))
    category = reader.optional_string("category") or None
    if category is not None and category not in categories:
        raise reader.error("category", "not in diagnose_categories.toml", found=category)
    library = reader.optional_string("library") or str(defaults.get("library") or "")
    if not library:
        raise reader.error("library", "missing (and the table has no default library)")
    layer = reader.optional_string("layer") or str(defaults.get("layer") or "")
    if layer not in LAYERS:
        raise reader.error("layer", "unknown layer", expected=", ".join(LAYERS), found=layer)
    phases = reader.strings("phases", required=False)
    for phase in phases:
        if phase not in phase_ids:
            raise reader.error("phases", "unknown phase", found=phase)
    fix = reader.strings("fix", required=category is not None,
                         non_empty=category is not None)
    sources = reader.sources()
    shipped = entry.file.startswith(f"servewise/knowledge/data/{SIGNALS_FOLDER}/")
    if not sources or (shipped and not all(s.startswith("https://") for s in sources)):
        raise reader.error("source", "every shipped entry names its vendor's page (a URL)",
                           found=repr(sources))
    fields = {name for pattern in patterns for name in pattern.groupindex}
    templates = [template_names(step) for step in fix]
    for used in templates:
        unknown = used - fields - ALWAYS_FIELDS
        if unknown:
            raise reader.error("fix", f"uses {sorted(unknown)}, which no pattern of the entry "
                               "reads", found=", ".join(fix))
    if fix and all(templates):
        raise reader.error("fix", "one step must need no field (for a message cut before "
                           "its values)")
    return Signal(
        id=ident, table=table, code=code, names=names, messages=messages,
        patterns=tuple(patterns), keywords=tuple(dict.fromkeys(w for w in literals if w)),
        category=category, library=library, layer=layer, phases=phases,
        exclude=tuple(_compile(reader, "exclude", t)
                      for t in reader.strings("exclude", required=False)),
        evidence_any=tuple(_compile(reader, "evidence_any", t)
                           for t in reader.strings("evidence_any", required=False)),
        meaning=reader.string("meaning"), fix=fix, collect=reader.string("collect"),
        risk=reader.optional_string("risk"), sources=sources,
        weak=reader.boolean("weak", False), file=entry.file,
        culprit=reader.boolean("culprit", bool(defaults.get("culprit", False))),
    )


def _table(name: str, file: str, text: str, categories: set[str],
           phase_ids: set[str]) -> SignalTable:
    document = parse_toml(text, file)
    unknown = sorted(set(document) - _FILE_FIELDS)
    if unknown:
        raise DataFileError(f"unknown top-level key(s) {', '.join(unknown)}", file=file)
    title = document.get("title")
    if not isinstance(title, str) or not title.strip():
        raise DataFileError("a table needs a title", file=file, field="title")
    forms = document.get("forms", [])
    if not isinstance(forms, list) or not all(isinstance(f, str) and "{code}" in f
                                              for f in forms):
        raise DataFileError("forms must be strings that hold {code}", file=file,
                            field="forms")
    items = document.get("signal", [])
    if not isinstance(items, list) or not items or not all(isinstance(i, dict) for i in items):
        raise DataFileError("a table needs [[signal]] entries", file=file, field="signal")
    source = document.get("source", [])
    sources = (source,) if isinstance(source, str) else tuple(source)
    signals = tuple(_signal(RawEntry(item, file, index, False), name, document, tuple(forms),
                            categories, phase_ids)
                    for index, item in enumerate(items))
    return SignalTable(name, title.strip(), sources, signals)


def _folder_tables(files: list[tuple[str, str, str]], categories: set[str],
                   phase_ids: set[str]) -> tuple[SignalTable, ...]:
    tables = tuple(_table(name, file, text, categories, phase_ids)
                   for name, file, text in files)
    seen: dict[str, str] = {}
    for table in tables:
        for signal in table.signals:
            if signal.id in seen:
                raise DataFileError(f"id {signal.id!r} is also used in {seen[signal.id]}",
                                    file=signal.file, entry=signal.id, field="id")
            seen[signal.id] = signal.file
    return tables


def _shipped_files() -> list[tuple[str, str, str]]:
    folder = resources.files(SHIPPED_PACKAGE).joinpath("data", SIGNALS_FOLDER)
    return [(item.name[:-5], f"servewise/knowledge/data/{SIGNALS_FOLDER}/{item.name}",
             item.read_text("utf-8"))
            for item in sorted(folder.iterdir(), key=lambda i: i.name)
            if item.name.endswith(".toml")]


@functools.cache
def _shipped(categories: frozenset[str], phase_ids: frozenset[str]
             ) -> tuple[SignalTable, ...]:
    return _folder_tables(_shipped_files(), set(categories), set(phase_ids))


def load_signal_tables(categories: set[str], phase_ids: set[str],
                       user_dir: Path | None = None) -> tuple[SignalTable, ...]:
    """The shipped tables, validated against the taxonomy's categories and the phases; a
    user folder's ``diagnose_signals/NAME.toml`` replaces the shipped table ``NAME``."""
    shipped = _shipped(frozenset(categories), frozenset(phase_ids))
    folder = None if user_dir is None else user_dir / SIGNALS_FOLDER
    if folder is None or not folder.is_dir():
        return shipped
    files = {name: (name, file, text) for name, file, text in _shipped_files()}
    for path in sorted(folder.glob("*.toml")):
        try:
            files[path.stem] = (path.stem, str(path), path.read_text("utf-8"))
        except OSError as exc:
            raise DataFileError(f"cannot read: {exc}", file=str(path)) from exc
    return _folder_tables(list(files.values()), categories, phase_ids)
