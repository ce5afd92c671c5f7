"""The diagnose rule database: one TOML file per rule in ``knowledge/data/diagnose/``.

In the spirit of ruff's rules, each rule has a stable ``id`` (``MEM004``), a
``name`` that states the condition (``workspace-allocation-out-of-memory``), a
``status`` (stable, preview, deprecated), the engines and versions it applies
to, and everything needed to recognise the failure and say what to do:

* ``signatures``: regular expressions (named groups extract fields), with the
  ``keywords`` (literal text) the fast pre-filter looks for;
* conditions: ``phases`` the failure must be in, ``evidence_any`` (one must match
  the message, a frame's function or a frame's path), ``evidence_facts`` (or a fact
  of the run, read from any line before the failure, matches), ``exclude`` (none may match);
* ``extract`` (more patterns for fields), ``facts`` (values from elsewhere in the
  log), ``advice`` (a computation: ``memory_fraction`` or ``max_model_len``);
* the ``category`` (from ``diagnose_categories.toml``), ``layer``, culprit
  ``library`` (a name, a template such as ``{engine}-config``, or ``auto`` for
  attribution from paths), an ``explanation``, ``fix`` steps that use the
  extracted values, ``related`` servewise commands, ``source`` and an ``example``.

``kind`` says how the rule takes part in root-cause selection: ``cause`` (a
specific cause), ``symptom`` (real when alone, but yields to any cause),
``wrapper`` (a consequence that never wins; its ``inner`` group is classified
again), ``noise`` (shutdown chatter, never a failure) and ``fallback`` (the two
built-in outcomes ``unclassified`` and ``root_cause_missing``).

A ``diagnose/`` folder in the user data folder adds rules or overrides shipped
ones by ``id``, field by field.
"""

from __future__ import annotations

import functools
import re
import string
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from servewise.diagnose import signals as sig
from servewise.diagnose.tables import (
    LAYERS,
    DiagnoseTables,
    bounded_regex,
    expanded_regexes,
    load_diagnose_tables,
)
from servewise.errors import UsageError
from servewise.knowledge._load import (
    SHIPPED_PACKAGE,
    DataFileError,
    EntryReader,
    RawEntry,
    check_unique,
    merge_by_id,
    parse_toml,
    shipped_entries,
    user_data_dir,
    user_entries,
)
from servewise.knowledge.libraries import specificity
from servewise.knowledge.patterns import compiled_literals

RULES_FOLDER = "diagnose"
KINDS = ("cause", "symptom", "wrapper", "noise", "fallback")
STATUSES = ("stable", "preview", "deprecated")
ALWAYS_FIELDS = frozenset(
    {"engine", "engine_runtime", "library", "category", "layer", "gpu", "gpu_id", "gpu_count",
     "model"}
)
"""Fields every fix step may use without listing them in ``when`` (a placeholder such as
``NAME`` stands in for an unknown GPU or model)."""
ENGINE_RUNTIME = {"vllm": "torch", "sglang": "torch", "tgi": "torch",
                  "tensorrt_llm": "tensorrt_llm", "llama.cpp": "ggml"}
"""The library each engine allocates GPU memory and runs kernels through (``engine_runtime``):
an out-of-memory error in vLLM, SGLang or TGI is PyTorch's caching allocator's, in
TensorRT-LLM its own runtime's (also in its PyTorch backend, as its issues label it:
NVIDIA/TensorRT-LLM#6281), in llama.cpp ggml's backend's."""

FIX_ENGINES = (*ENGINE_RUNTIME, "unknown")
"""What a fix step's ``engines`` may name: an engine, or ``unknown`` (a log that names none)."""

CONTEXT_FIELDS = frozenset({"api", "caller", "phase", "engine_version"})
"""Fields the diagnosis adds when it knows them (attribution, phase, version)."""

FIELDS = frozenset({
    "id", "name", "summary", "category", "kind", "status", "engines", "layer", "library",
    "precedence", "keywords", "signature", "phases", "evidence_any", "evidence_facts", "exclude",
    "extract",
    "facts", "advice", "phase", "fix", "related", "explanation", "source", "example", "notes",
    "defers_to", "cut",
})
_SIGNATURE_FIELDS = {"pattern", "library", "engine"}
_FIX_FIELDS = {"text", "when", "unless", "flags", "env", "engines"}
_ID = re.compile(r"^[A-Z]{3}\d{3}$")
_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_ENGINE = re.compile(r"^[a-z][\w.-]*?(?:(?:==|>=|<=|<|>|!=)[\w.*+-]+(?:,(?:==|>=|<=|<|>|!=)"
                     r"[\w.*+-]+)*)?$")
_UNESCAPE = re.compile(r"\\(\W)")


@dataclass(frozen=True)
class Signature:
    """One regular expression of a rule."""

    pattern: re.Pattern[str]
    library: str | None
    """The culprit library when this signature matches (overrides the rule's)."""
    engine: str | None
    """The engine this message belongs to, when the signature says so."""
    literal: int
    """How specific it is: the least number of literal characters a match needs."""
    required: tuple[str, ...] = ()
    """Literal texts of which every match contains one (the longest run every match holds, or
    an alternation's branches; () unknown): where none is present, the regex is not tried (a
    pattern that starts with a run of words tries every character otherwise)."""


@dataclass(frozen=True)
class FixStep:
    """One step of a fix, shown when its ``when`` fields are known and ``unless`` ones are not,
    and, when it names ``engines``, only for a log of one of them (a setting each engine spells
    its own way and that the engine-flag table does not hold)."""

    text: str
    when: tuple[str, ...]
    unless: tuple[str, ...]
    flags: tuple[tuple[str, str], ...]
    env: tuple[tuple[str, str], ...]
    engines: tuple[str, ...] = ()


@dataclass(frozen=True)
class Rule:
    """A diagnose rule, validated."""

    id: str
    name: str
    summary: str
    category: str | None
    kind: str
    status: str
    engines: tuple[str, ...]
    layer: str
    library: str
    precedence: int
    defers_to: tuple[str, ...]
    """Categories whose cause, found a few lines below this one's, is the root cause instead
    (a generic message followed by the specific one that explains it)."""
    cut: bool
    """Whether a message cut right after one of its keywords still names this rule (False when
    the keyword is generic and what follows it tells the rules apart: ``No module named``)."""
    keywords: tuple[str, ...]
    signatures: tuple[Signature, ...]
    phases: tuple[str, ...]
    evidence_any: tuple[re.Pattern[str], ...]
    evidence_facts: tuple[tuple[str, re.Pattern[str]], ...]
    """Facts of the run (id, pattern its value must match) that count as evidence too: the
    log said earlier what the failing event does not (``--kv-cache-dtype fp8`` at start-up)."""
    exclude: tuple[re.Pattern[str], ...]
    extract: tuple[re.Pattern[str], ...]
    facts: tuple[str, ...]
    advice: str | None
    phase: str | None
    fixes: tuple[FixStep, ...]
    related: tuple[str, ...]
    explanation: str
    sources: tuple[str, ...]
    example: str
    file: str
    table: str = ""
    """The knowledge table a signal rule was made from ('' for a rule file's rule)."""
    collect: str = ""
    """What to collect next when this rule names the cause ('' : the layer's default)."""
    risk: str = ""
    """What the fix can break ('' : the layer's default)."""
    weak: bool = False
    """Its evidence is common text: alone it gives a located, unclassified answer."""

    @property
    def fields(self) -> tuple[str, ...]:
        """Every field the rule can extract: named groups of its patterns, then facts."""
        names: dict[str, None] = {}
        for pattern in (*(s.pattern for s in self.signatures), *self.extract):
            for group in pattern.groupindex:
                if group != "inner":
                    names[group] = None
        for fact in self.facts:
            names[fact] = None
        return tuple(names)


@dataclass(frozen=True)
class Category:
    """A failure category of the taxonomy (``research/diagnose.md`` §4)."""

    id: str
    title: str
    section: str
    new: bool
    """Not in the research taxonomy: added here, documented in ``notes``."""
    notes: str
    sources: tuple[str, ...]
    has_rule: bool = True
    """False for a label of the corpus's measure-only part that no rule was written for yet."""


class RuleSet:
    """The rules and the tables they use, looked up by id, name or category."""

    def __init__(self, rules: Iterable[Rule], tables: DiagnoseTables,
                 categories: Iterable[Category], signals: Iterable[sig.SignalTable] = ()) -> None:
        self.rules = tuple(rules)
        self.tables = tables
        self.categories = {category.id: category for category in categories}
        self.signal_tables = tuple(signals)
        """The knowledge tables (``knowledge/data/diagnose_signals/``)."""
        self.signals = {s.id: s for table in self.signal_tables for s in table.signals}
        self.signal_rules = tuple(signal_rule(s) for s in self.signals.values() if s.category)
        """The tables' entries that name a category, as low-precedence cause rules."""
        self._by_id = {rule.id: rule for rule in self.rules}
        self._by_name = {rule.name: rule for rule in self.rules}

    def __iter__(self) -> Iterable[Rule]:
        return iter(self.rules)

    def __len__(self) -> int:
        return len(self.rules)

    def get(self, key: str) -> Rule | None:
        """The rule with this id (any case) or name, or the first of this category."""
        text = key.strip()
        rule = self._by_id.get(text.upper()) or self._by_name.get(text.lower()) or next(
            (r for r in self.signal_rules if r.id == text.lower()), None)
        if rule is None:
            rule = next((r for r in self.rules if r.category == text.lower()), None)
        return rule

    def find(self, key: str) -> Rule:
        """Like :meth:`get`; an unknown key raises :class:`UsageError` with close matches."""
        rule = self.get(key)
        if rule is not None:
            return rule
        import difflib

        names = [*self._by_id, *self._by_name, *self.categories]
        close = difflib.get_close_matches(key.strip(), names, n=5, cutoff=0.6)
        raise UsageError(
            f"unknown diagnose rule {key!r}" + (f"; did you mean {', '.join(close)}?"
                                               if close else ""),
            hint="`servewise diagnose rules` lists every rule id and name",
            found=key,
            close_matches=close,
        )

    def by_kind(self, *kinds: str) -> tuple[Rule, ...]:
        """The rules of these kinds, in id order."""
        return tuple(rule for rule in self.rules if rule.kind in kinds)

    def fallback(self, category: str) -> Rule:
        """The built-in fallback rule of ``unknown`` or ``root_cause_missing``."""
        return next(r for r in self.rules if r.kind == "fallback" and r.category == category)


def template_names(text: str) -> set[str]:
    """The field names a fix or library template uses (``{flag_dtype}`` → ``flag_dtype``)."""
    names = set()
    for _, name, _, _ in string.Formatter().parse(text):
        if name:
            names.add(name.split(".")[0].split("[")[0])
    return names


def _pairs(reader: EntryReader, data: object, field: str) -> tuple[tuple[str, str], ...]:
    if data is None:
        return ()
    if not isinstance(data, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in data.items()
    ):
        raise reader.error(field, "must be a table of strings", found=repr(data))
    return tuple(data.items())


def _fix_steps(reader: EntryReader, available: set[str]) -> tuple[FixStep, ...]:
    raw = reader.entry.data.get("fix")
    if not isinstance(raw, list) or not raw or not all(isinstance(i, dict) for i in raw):
        raise reader.error("fix", "must be a non-empty array of tables ([[fix]])")
    steps = []
    for index, item in enumerate(raw):
        unknown = set(item) - _FIX_FIELDS
        if unknown:
            raise reader.error("fix", f"step {index + 1}: unknown field(s) {sorted(unknown)}")
        text = item.get("text")
        if not isinstance(text, str) or not text.strip():
            raise reader.error("fix", f"step {index + 1}: text must be a non-empty string")
        when = item.get("when", [])
        unless = item.get("unless", [])
        for name, value in (("when", when), ("unless", unless)):
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise reader.error("fix", f"step {index + 1}: {name} must be a list of strings")
        flags = _pairs(reader, item.get("flags"), "fix")
        env = _pairs(reader, item.get("env"), "fix")
        used = template_names(text)
        for key, value in (*flags, *env):
            used |= template_names(value) | template_names(key)
        missing = used - set(when) - ALWAYS_FIELDS - _flag_fields()
        if missing:
            raise reader.error("fix", f"step {index + 1} uses {sorted(missing)} without "
                               "listing them in `when`")
        for name in (*when, *unless):
            if available and name not in available:
                raise reader.error("fix", f"step {index + 1}: {name!r} is not a field of this "
                                   "rule", expected=", ".join(sorted(available)), found=name)
        engines = item.get("engines", [])
        if not isinstance(engines, list) or not all(e in FIX_ENGINES for e in engines):
            raise reader.error("fix", f"step {index + 1}: engines must be a list of engines",
                               expected=", ".join(FIX_ENGINES), found=str(engines))
        steps.append(FixStep(text.strip(), tuple(when), tuple(unless), flags, env,
                             tuple(engines)))
    return tuple(steps)


def _evidence_facts(reader: EntryReader, fact_ids: set[str]
                    ) -> tuple[tuple[str, re.Pattern[str]], ...]:
    """``evidence_facts = { fact = "regex" }``: known facts and the values that count."""
    table = reader.entry.data.get("evidence_facts", {})
    if not isinstance(table, dict):
        raise reader.error("evidence_facts", "must be a table of fact = regex",
                           expected='{ kv_cache_dtype = "(?i)fp8" }', found=repr(table))
    found: list[tuple[str, re.Pattern[str]]] = []
    for fact, pattern in table.items():
        if fact not in fact_ids:
            raise reader.error("evidence_facts", "unknown fact",
                               expected=", ".join(sorted(fact_ids)), found=fact)
        if not isinstance(pattern, str):
            raise reader.error("evidence_facts", "a fact's value pattern must be a string",
                               found=repr(pattern))
        found.append((fact, reader.regex("evidence_facts", pattern)))
    return tuple(found)


def _signatures(reader: EntryReader, tables: DiagnoseTables,
                keywords: tuple[str, ...]) -> tuple[Signature, ...]:
    raw = reader.entry.data.get("signature")
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(item, dict) for item in raw):
        raise reader.error("signature", "must be an array of tables ([[signature]])")
    signatures = []
    for index, item in enumerate(raw):
        unknown = set(item) - _SIGNATURE_FIELDS
        if unknown:
            raise reader.error("signature", f"#{index + 1}: unknown field(s) {sorted(unknown)}")
        text = item.get("pattern")
        if not isinstance(text, str) or not text.strip():
            raise reader.error("signature", f"#{index + 1}: pattern must be a non-empty string")
        expanded = tables.expand(text, reader, "signature")
        pattern = bounded_regex(reader, "signature", expanded)
        literal_text = _UNESCAPE.sub(r"\1", expanded)
        if not any(keyword in literal_text for keyword in keywords):
            raise reader.error(
                "signature", f"#{index + 1}: contains none of the rule's keywords, so the "
                "pre-filter would never pass its lines", expected=", ".join(keywords), found=text)
        for key in ("library", "engine"):
            if key in item and (not isinstance(item[key], str) or not item[key].strip()):
                raise reader.error("signature", f"#{index + 1}: {key} must be a string")
        taken = sorted(name for name in pattern.groupindex if name.startswith("flag_"))
        if taken:
            raise reader.error(
                "signature", f"#{index + 1}: group(s) {taken} take the flag_ prefix, which "
                "names the engine's flag spellings in fix templates", found=text)
        signatures.append(Signature(pattern, item.get("library"), item.get("engine"),
                                    specificity(expanded), compiled_literals(pattern)))
    return tuple(signatures)


def rule_from_entry(entry: RawEntry, tables: DiagnoseTables, categories: set[str]) -> Rule:
    """Validate one rule file and build its :class:`Rule`."""
    reader = EntryReader(entry, FIELDS)
    ident = reader.string("id")
    if _ID.match(ident) is None:
        raise reader.error("id", "must be three capitals and three digits", expected="MEM004",
                           found=ident)
    name = reader.string("name")
    if _NAME.match(name) is None:
        raise reader.error("name", "must be kebab-case", expected="kv-cache-too-small",
                           found=name)
    kind = reader.string("kind")
    if kind not in KINDS:
        raise reader.error("kind", "unknown kind", expected=", ".join(KINDS), found=kind)
    status = reader.string("status")
    if status not in STATUSES:
        raise reader.error("status", "unknown status", expected=", ".join(STATUSES), found=status)
    category = reader.optional_string("category") or None
    if kind in ("cause", "symptom", "fallback"):
        if category is None:
            raise reader.error("category", f"a {kind} rule needs a category")
        if category not in categories:
            raise reader.error("category", "not in diagnose_categories.toml",
                               expected=", ".join(sorted(categories)), found=category)
    elif category is not None:
        raise reader.error("category", f"a {kind} rule has no category (it never is a finding)")
    engines = reader.strings("engines", non_empty=True)
    for engine in engines:
        if _ENGINE.match(engine) is None:
            raise reader.error("engines", "must be a name with an optional version specifier",
                               expected="vllm, vllm>=0.6, sglang>=0.4,<0.6", found=engine)
    layer = reader.string("layer")
    if layer not in LAYERS:
        raise reader.error("layer", "unknown layer", expected=", ".join(LAYERS), found=layer)
    keywords = reader.strings("keywords", required=kind != "fallback", non_empty=kind != "fallback")
    signatures = _signatures(reader, tables, keywords)
    if kind != "fallback" and not signatures:
        raise reader.error("signature", f"a {kind} rule needs at least one [[signature]]")
    if kind == "fallback" and signatures:
        raise reader.error("signature", "a fallback rule matches nothing itself")
    phase_ids = {phase.id for phase in tables.phases}
    phases = reader.strings("phases", required=False)
    for phase in phases:
        if phase not in phase_ids:
            raise reader.error("phases", "unknown phase", expected=", ".join(sorted(phase_ids)),
                               found=phase)
    implied_phase = reader.optional_string("phase") or None
    if implied_phase is not None and (kind != "wrapper" or implied_phase not in phase_ids):
        raise reader.error("phase", "only a wrapper names the phase its inner message is in, "
                           "and it must be a known phase", found=implied_phase)
    fact_ids = {fact.id for fact in tables.facts if fact.kind == "value"}
    facts = reader.strings("facts", required=False)
    for fact in facts:
        if fact not in fact_ids:
            raise reader.error("facts", "unknown fact", expected=", ".join(sorted(fact_ids)),
                               found=fact)
    evidence_facts = _evidence_facts(reader, fact_ids)
    advice = reader.optional_string("advice") or None
    if advice is not None and advice not in _advice_names():
        raise reader.error("advice", "unknown advice", expected=", ".join(_advice_names()),
                           found=advice)
    extract = expanded_regexes(reader, "extract", tables)
    precedence = reader.entry.data.get("precedence", 0)
    if isinstance(precedence, bool) or not isinstance(precedence, int):
        raise reader.error("precedence", "must be an integer", found=repr(precedence))
    defers_to = reader.strings("defers_to", required=False)
    cut = reader.entry.data.get("cut", True)
    if not isinstance(cut, bool):
        raise reader.error("cut", "must be true or false", found=repr(cut))
    library = reader.string("library")
    if library.startswith("auto") and library not in ("auto",) and not library.startswith(
            "auto:"):
        raise reader.error("library", "auto takes an optional fallback as auto:NAME",
                           found=library)
    rule = Rule(
        id=ident, name=name, summary=reader.string("summary"), category=category, kind=kind,
        status=status, engines=engines, layer=layer, library=library, precedence=precedence,
        defers_to=defers_to, cut=cut, keywords=keywords, signatures=signatures, phases=phases,
        evidence_any=expanded_regexes(reader, "evidence_any", tables),
        evidence_facts=evidence_facts, exclude=expanded_regexes(reader, "exclude", tables),
        extract=extract, facts=facts, advice=advice, phase=implied_phase, fixes=(),
        related=reader.strings("related", required=False),
        explanation=reader.string("explanation"), sources=reader.sources(),
        example=reader.optional_string("example"), file=entry.file,
    )
    available = (set(rule.fields) | ALWAYS_FIELDS | CONTEXT_FIELDS | _flag_fields()
                 | set(_advice_fields(advice)))
    if kind == "fallback":
        available = set()  # its values come from the wrappers and errors it reports
    unknown_library = template_names(library) - (available or ALWAYS_FIELDS)
    if unknown_library:
        raise reader.error("library", f"uses unknown field(s) {sorted(unknown_library)}",
                           found=library)
    for command in rule.related:
        if not command.startswith("servewise "):
            raise reader.error("related", "must be servewise commands", found=command)
    if kind not in ("fallback", "noise") and not rule.example:
        raise reader.error("example", "every matching rule needs an example log excerpt")
    from dataclasses import replace

    return replace(rule, fixes=_fix_steps(reader, available))


def _flag_fields() -> frozenset[str]:
    from servewise.diagnose.advice_figures import flag_fields

    return flag_fields()


def _advice_names() -> tuple[str, ...]:
    """The advice a rule may name: those :data:`ADVICE_FIELDS` describes."""
    from servewise.diagnose.advice_figures import ADVICE_FIELDS

    return tuple(ADVICE_FIELDS)


def _advice_fields(advice: str | None) -> tuple[str, ...]:
    from servewise.diagnose.advice_figures import ADVICE_FIELDS

    return ADVICE_FIELDS.get(advice or "", ())


def _load_categories(folder: Path | None) -> tuple[Category, ...]:
    extra = [] if folder is None else user_entries("diagnose_categories.toml", "category", folder)
    entries = merge_by_id(shipped_entries("diagnose_categories.toml", "category"), extra)
    check_unique(entries)
    categories = []
    for entry in entries:
        reader = EntryReader(entry, {"id", "title", "section", "new", "notes", "source",
                                     "has_rule"})
        categories.append(Category(
            id=reader.string("id"), title=reader.string("title"),
            section=reader.string("section"), new=reader.boolean("new", False),
            notes=reader.optional_string("notes"), sources=reader.sources(),
            has_rule=reader.boolean("has_rule", True),
        ))
        if categories[-1].new and not categories[-1].notes:
            raise reader.error("notes", "a new category says why no taxonomy id fits")
    return tuple(categories)


def _shipped_rule_entries() -> list[RawEntry]:
    folder = resources.files(SHIPPED_PACKAGE).joinpath("data", RULES_FOLDER)
    entries = []
    for item in sorted(folder.iterdir(), key=lambda i: i.name):
        if item.name.endswith(".toml"):
            file = f"servewise/knowledge/data/{RULES_FOLDER}/{item.name}"
            entries.append(RawEntry(parse_toml(item.read_text("utf-8"), file), file, 0, False))
    return entries


def _user_rule_entries(user_dir: Path) -> list[RawEntry]:
    folder = user_dir / RULES_FOLDER
    if not folder.is_dir():
        return []
    entries = []
    for path in sorted(folder.glob("*.toml")):
        try:
            text = path.read_text("utf-8")
        except OSError as exc:
            raise DataFileError(f"cannot read: {exc}", file=str(path)) from exc
        data = parse_toml(text, str(path))
        data.setdefault("source", path.resolve().as_uri())
        entries.append(RawEntry(data, str(path), 0, True))
    return entries


def _build(folder: Path | None) -> RuleSet:
    """The shipped rules, with the user folder's files when ``folder`` is given."""
    if folder is None:
        tables = load_diagnose_tables(include_user=False)
    else:
        tables = load_diagnose_tables(folder)
    categories = _load_categories(folder)
    category_ids = {category.id for category in categories}
    extra = [] if folder is None else _user_rule_entries(folder)
    entries = merge_by_id(_shipped_rule_entries(), extra)
    check_unique(entries)
    rules = sorted((rule_from_entry(entry, tables, category_ids) for entry in entries),
                   key=lambda rule: rule.id)
    names: dict[str, str] = {}
    for rule in rules:
        if rule.name in names:
            raise DataFileError(f"name {rule.name!r} is also used by {names[rule.name]}",
                                file=rule.file, entry=rule.id, field="name")
        names[rule.name] = rule.id
    for category in ("unclassified", "root_cause_missing"):
        if not any(r.kind == "fallback" and r.category == category for r in rules):
            raise DataFileError(f"no fallback rule for {category!r}",
                                file=f"servewise/knowledge/data/{RULES_FOLDER}")
    signals = sig.load_signal_tables(category_ids, {phase.id for phase in tables.phases}, folder)
    return RuleSet(rules, tables, categories, signals)


@functools.cache
def _shipped_rules() -> RuleSet:
    return _build(None)


def load_rules(user_dir: Path | None = None) -> RuleSet:
    """The shipped rules plus the user folder's ``diagnose/*.toml`` (``$SERVEWISE_DATA_DIR``)."""
    from servewise.diagnose.tables import TABLE_FILES

    folder = user_data_dir() if user_dir is None else user_dir
    names = ("diagnose_categories.toml", *TABLE_FILES)
    folders = (folder / RULES_FOLDER, folder / sig.SIGNALS_FOLDER)
    if not any(f.is_dir() for f in folders) and not any((folder / n).exists() for n in names):
        return _shipped_rules()
    return _build(folder)


def signal_rule(signal: sig.Signal) -> Rule:
    """The low-precedence ``cause`` rule of a signal that names a category (a step without
    fields is for a message cut before its values: shown only when no other is)."""
    assert signal.category is not None
    needs = [tuple(sorted(sig.template_names(text) - sig.ALWAYS_FIELDS))
             for text in signal.fix]
    used = tuple(sorted({name for fields in needs for name in fields}))
    return Rule(
        id=signal.id, name=signal.id, summary=signal.summary, category=signal.category,
        kind="cause", status="stable", layer=signal.layer, library=signal.library,
        engines=("vllm", "sglang", "tgi", "tensorrt_llm", "llama.cpp"), weak=signal.weak,
        precedence=sig.SIGNAL_PRECEDENCE, defers_to=(), cut=False, keywords=signal.keywords,
        signatures=tuple(Signature(p, None, None, specificity(p.pattern), compiled_literals(p))
                         for p in signal.patterns),
        phases=signal.phases, evidence_any=signal.evidence_any, evidence_facts=(),
        exclude=signal.exclude, extract=(), facts=(), advice=None, phase=None, related=(),
        fixes=tuple(FixStep(text, fields, () if fields else used, (), ())
                    for text, fields in zip(signal.fix, needs, strict=True)),
        explanation=signal.meaning, sources=signal.sources, example="", file=signal.file,
        table=signal.table, collect=signal.collect, risk=signal.risk)
