"""Findings from what root-cause selection kept: culprit, values, advice, fix, confidence.

:class:`Builder` turns one rule's aggregate (or an unclassified error, a stalled start, a log
that shows nothing) into a :class:`~servewise.diagnose.result.Finding`: the library from the
rule or from attribution, the values read from the log and its facts, the fix steps whose
fields are known, and how sure it is (:func:`confidence`).
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from dataclasses import dataclass, field, replace

from servewise.diagnose.advice import compute_advice
from servewise.diagnose.advice_figures import flag_values
from servewise.diagnose.attribute import Culprit, attribute, attribute_path
from servewise.diagnose.classify import Classifier, Match, engine_name
from servewise.diagnose.fields import known, render
from servewise.diagnose.result import EvidenceLine, FieldValue, Finding, Fix
from servewise.diagnose.ruleset import CONTEXT_FIELDS, ENGINE_RUNTIME, Rule, RuleSet
from servewise.diagnose.triage import explaining_signal
from servewise.formats.logevents import Frame

__all__ = ["MAX_EVIDENCE", "Aggregate", "Builder", "RunData", "catalog_id", "confidence",
           "confidence_why", "first_text"]

MAX_EVIDENCE = 6
MAX_ERRORS = 5
MAX_PROCESSES = 16
TEXT_LIMIT = 400
_SIGNAL_TEXT = 4096
"""How much of an unclassified error's text is searched for a knowledge-table entry."""

_CALLER_LAYERS = ("engine_config", "engine_runtime", "frontend", "model_loader", "orchestration")
_PLACEHOLDERS: dict[str, FieldValue] = {
    "gpu": "NAME", "gpu_id": "NAME", "gpu_count": "COUNT", "model": "MODEL", "image": "IMAGE",
}


@functools.cache
def catalog_id(name: str) -> str | None:
    """The GPU catalog's id for a GPU name as a log or ``--gpu`` spells it (``None``: unknown).

    Related commands use it, so that they run as printed (``--gpu h200``, not a display name).
    """
    from servewise.errors import ServewiseError
    from servewise.knowledge.gpus import load_gpu_catalog

    try:
        return load_gpu_catalog().find(name).id
    except ServewiseError:
        return None


def first_text(match: Match) -> str:
    """The first line of what a match found (its last frame when the message was cut)."""
    event = match.event
    text = event.text if not match.quoted else event.message
    lines = [line for line in text.splitlines() if line.strip()]
    first = lines[0].strip() if lines else ""
    if not first and event.frames:  # a traceback cut before its exception: its last frame
        first = f"{_frame_text(event.frames[-1])} (cut here)"
    return first[:TEXT_LIMIT]


def cited(match: Match) -> tuple[int, str]:
    """The line a match stands on and its text: in a message of several lines, the line its
    signature matched on (a library's path on the line below ``Failed to import``), else the
    event's own line."""
    event, text = match.event, first_text(match)
    if match.signature is None or match.quoted or "\n" not in event.text:
        return event.match_line, text
    found = match.signature.pattern.search(event.text)
    before = event.text.count("\n", 0, found.start()) if found is not None else 0
    lines = event.text.splitlines()
    if before == 0 or before >= len(lines) or not lines[before].strip():
        return event.match_line, text
    return min(event.match_line + before, event.last_line), lines[before].strip()[:TEXT_LIMIT]


def _frame_text(frame: Frame) -> str:
    return f'File "{frame.path}", line {frame.line}, in {frame.function}'


def _frame_evidence(match: Match, culprit: Culprit | None) -> list[EvidenceLine]:
    """The frame attribution read the culprit from, as evidence (none when it was not a frame)."""
    if culprit is None or culprit.frame is None:
        return []
    frame = culprit.frame
    return [EvidenceLine(frame.number, _frame_text(frame), match.event.process, "frame")]


def confidence(*, kind: str, literal: int, phase_evidence: bool, wrapped: bool, count: int,
               processes: int, complete: bool, own: bool, status: str, table: str = "",
               cut: bool = False) -> float:
    """How sure a finding is, from its evidence (:func:`confidence_why` says why)."""
    return confidence_why(kind=kind, literal=literal, phase_evidence=phase_evidence,
                          wrapped=wrapped, count=count, processes=processes, complete=complete,
                          own=own, status=status, table=table, cut=cut)[0]


def confidence_why(*, kind: str, literal: int, phase_evidence: bool, wrapped: bool, count: int,
                   processes: int, complete: bool, own: bool, status: str, table: str = "",
                   cut: bool = False) -> tuple[float, tuple[str, ...]]:
    """How sure a finding is, and the reasons, from its evidence.

    A cause starts at 0.55 (a symptom at 0.40), plus up to 0.25 for how specific
    the matched signature is (literal characters, 40 or more counts fully), 0.08
    when the event itself showed the phase or evidence the rule asks for, 0.07
    when wrappers agree (one quotes it, or wrappers follow it), 0.05 when more
    than one process or occurrence reported it, 0.05 when every value the fix
    needs was read; minus 0.15 when it was seen only quoted inside a wrapper,
    0.05 for a preview rule and 0.05 for a knowledge table's general entry (not a
    rule written for the message). The result is kept within 0.05 and 0.97.
    """
    why = [("a cause" if kind == "cause" else "a symptom (it yields to any cause)")
           + (f", named by the {table} knowledge table" if table else ", named by a rule")]
    value = 0.55 if kind == "cause" else 0.40
    value += 0.25 * min(1.0, literal / 40)
    if cut:
        why.append("only a distinctive keyword at the end of a message cut short matched")
    elif literal:
        why.append(f"its signature matched {literal} literal characters"
                   + (" (fully specific)" if literal >= 40 else ""))
    if phase_evidence:
        value += 0.08
        why.append("the failing event itself shows the phase or evidence the rule asks for")
    if wrapped:
        value += 0.07
        why.append("the engine's wrappers agree (one quotes it, or they follow it)")
    if count > 1 or processes > 1:
        value += 0.05
        why.append(f"reported {max(count, processes)} times")
    if complete:
        value += 0.05
        why.append("every value the fix needs was read from the log")
    if not own:
        value -= 0.15
        why.append("seen only inside a wrapper's quote (-0.15)")
    if status == "preview":
        value -= 0.05
        why.append("a preview rule (-0.05)")
    if table:
        value -= 0.05
        why.append("a general signal, not a rule written for this message (-0.05)")
    return round(min(0.97, max(0.05, value)), 2), tuple(why)


class Builder:
    """Findings from aggregates: culprit, values, advice, fix, confidence."""

    def __init__(self, rules: RuleSet, classifier: Classifier, gpu_total_gib: float | None,
                 gpu_name: str | None, data: RunData) -> None:
        self.rules = rules
        self.classifier = classifier
        self.gpu_total_gib = gpu_total_gib
        self.gpu_name = gpu_name
        self.data = data

    def _engine(self, match: Match, culprit: Culprit | None, rule: Rule) -> tuple[str, bool]:
        """The engine a finding belongs to, and whether the log said so (or it is a guess)."""
        if match.signature is not None and match.signature.engine:
            return match.signature.engine, True
        if culprit is not None and culprit.engine:
            return culprit.engine, True
        for frame in reversed(match.event.frames):
            found = attribute_path(frame.path, self.rules.tables, include_generic=True)
            if found is not None and found[0].engine:
                return found[0].engine, True
        detected = self.classifier.engine()
        if detected:
            return detected, True
        return engine_name(rule.engines[0]), False

    def _values(self, rule: Rule, match: Match, fields: dict[str, FieldValue],
                engine: tuple[str, bool]) -> dict[str, FieldValue]:
        facts = self.classifier.facts(match.event.first_line)
        values: dict[str, FieldValue] = dict(fields)
        for name in rule.facts:
            if name in facts and name not in values:
                values[name] = facts[name]
        gpu = self.gpu_name or facts.get("gpu_name")
        if isinstance(gpu, str):
            values.setdefault("gpu", gpu)
            gpu_id = catalog_id(gpu)
            if gpu_id is not None:
                values.setdefault("gpu_id", gpu_id)
        tensor_parallel = facts.get("tensor_parallel_size")
        if isinstance(tensor_parallel, int | float) and tensor_parallel >= 1:
            values.setdefault("gpu_count", int(tensor_parallel))
        if match.phases:
            own = [phase for phase in match.phases if phase in rule.phases]
            values.setdefault("phase", (own or list(match.phases))[0])
        values["engine"] = engine[0]
        values["engine_runtime"] = ENGINE_RUNTIME.get(engine[0], "torch")
        version = facts.get("engine_version")
        if version is not None:
            values.setdefault("engine_version", version)
        # Flags are spelled through the engine-flag table, for this engine and version.
        for name, flag in flag_values(engine[0], version if isinstance(version, str)
                                      else None).items():
            values.setdefault(name, flag)
        values.update(compute_advice(rule.advice, values, engine[0] if engine[1] else None,
                                     self.gpu_total_gib))
        return values

    def _fix(self, rule: Rule, known_values: dict[str, FieldValue],
             engine_known: bool = True) -> tuple[Fix, bool]:
        """The fix steps whose fields are known; a step for some engines only shows for a log
        of one of them (``unknown``: a log that does not name its engine)."""
        values: dict[str, FieldValue] = {**_PLACEHOLDERS, **known_values}
        engine = str(values.get("engine")) if engine_known else "unknown"
        fix, complete = self._steps(rule, values, set(), engine)
        if not fix.steps:
            # What attribution added (the API, the caller, the phase) only refines a step: a
            # step it ruled out is still better than no fix at all.
            fix, complete = self._steps(rule, values, CONTEXT_FIELDS, engine)
        return fix, complete

    @staticmethod
    def _steps(rule: Rule, values: dict[str, FieldValue],
               ignored: set[str] | frozenset[str], engine: str) -> tuple[Fix, bool]:
        steps: list[str] = []
        flags: dict[str, str] = {}
        env: dict[str, str] = {}
        complete = True
        for step in rule.fixes:
            if step.engines and engine not in step.engines:
                continue
            if any(known(values, name) for name in step.unless if name not in ignored):
                continue
            if not all(known(values, name) for name in step.when):
                complete = complete and not any(
                    name.endswith(("_max", "_fit", "_needed")) for name in step.when)
                continue
            try:
                steps.append(render(step.text, values))
                for key, value in step.flags:
                    flags.setdefault(render(key, values), render(value, values))
                for key, value in step.env:
                    env.setdefault(render(key, values), render(value, values))
            except (KeyError, ValueError, IndexError):
                continue
        return Fix(tuple(steps), tuple(flags.items()), tuple(env.items())), complete

    def _related(self, rule: Rule, values: dict[str, FieldValue]) -> tuple[str, ...]:
        filled = {**_PLACEHOLDERS, **values}
        out = []
        for command in rule.related:
            try:
                out.append(render(command, filled))
            except (KeyError, ValueError, IndexError):
                out.append(command)
        return tuple(out)

    def finding(self, aggregate: Aggregate) -> Finding:
        """The finding of a cause or symptom aggregate."""
        rule = aggregate.rule
        match = aggregate.first
        culprit = attribute(match.event, self.rules.tables)
        engine = self._engine(match, culprit, rule)
        values = self._values(rule, match, aggregate.fields, engine)
        if culprit is not None and culprit.api:
            values.setdefault("api", culprit.api)
        library_template = (match.signature.library if match.signature and
                            match.signature.library else rule.library)
        if library_template.startswith("auto"):
            fallback = library_template.partition(":")[2] or engine[0]
            if "{" in fallback:
                try:
                    fallback = render(fallback, values)
                except (KeyError, ValueError, IndexError):
                    fallback = engine[0]
            library = culprit.library if culprit else fallback
            if (culprit is not None and culprit.frame is not None
                    and culprit.layer in _CALLER_LAYERS and library_template.startswith("auto:")):
                # The engine's own frames only show who called: for a failure the rule
                # pins on a library (auto:torch), the engine is not the culprit.
                library = fallback
            caller = _caller(match, culprit)
            if caller:
                values.setdefault("caller", caller)
        else:
            try:
                library = render(library_template, values)
            except (KeyError, ValueError, IndexError):
                library = engine[0]
        values["library"] = library
        fix, complete = self._fix(rule, values, engine[1])
        evidence = [*aggregate.evidence, *_frame_evidence(match, culprit)]
        evidence.extend(self._wrapper_evidence(after=aggregate.first_line))
        extracted = _extracted(values, engine)
        score, why = confidence_why(
            kind=rule.kind, literal=match.signature.literal if match.signature else 0,
            phase_evidence=aggregate.phase_evidence, wrapped=aggregate.wrapped,
            count=aggregate.count, processes=len(aggregate.processes), complete=complete,
            own=aggregate.own, status=rule.status, table=rule.table, cut=match.cut)
        return Finding(
            category=rule.category or "unclassified", kind=rule.kind, library=library,
            layer=rule.layer, rule=rule.id, rule_name=rule.name, summary=rule.summary,
            explanation=rule.explanation, evidence=tuple(evidence), extracted=extracted,
            fix=fix, related=self._related(rule, values), confidence=score, why=why,
            occurrences=max(aggregate.count, 1), processes=tuple(aggregate.processes),
            first_line=aggregate.first_line,
        )

    def _wrapper_evidence(self, after: int = 0, limit: int = 3) -> list[EvidenceLine]:
        items: list[EvidenceLine] = []
        for wrapper in self.data.wrappers:
            if wrapper.event.match_line >= after and len(items) < limit:
                items.append(EvidenceLine(wrapper.event.match_line, first_text(wrapper),
                                      wrapper.event.process, "wrapper"))
        return items

    def unknown(self, match: Match, count: int, traceback: Match | None = None) -> Finding:
        """The located, ``unclassified`` finding of an error no rule or table names: its line,
        exception type, library (read from ``traceback``, its own traceback cut short, when
        the error itself names none), phase, and what to collect next (a knowledge-table
        entry that explains its code, else its layer's default)."""
        rule = self.rules.fallback("unclassified")
        culprit = attribute(match.event, self.rules.tables)
        if culprit is None and traceback is not None:
            culprit = attribute(traceback.event, self.rules.tables)
        engine = self._engine(match, culprit, rule)
        values = self._values(rule, match, {}, engine)
        values["error"] = first_text(match)
        line = match.event.match_line
        if match.event.exception:
            values["exception"] = match.event.exception
        if "phase" not in values:
            stage = self.classifier.stage(line)
            if stage:
                values["phase"] = stage
        library = culprit.library if culprit else None
        if library:
            values["library"] = library
        if culprit is not None and culprit.api:
            values["api"] = culprit.api
        fix, _ = self._fix(rule, values)
        signal = explaining_signal(self.rules, match.event.text[:_SIGNAL_TEXT])
        why = ["no rule or knowledge table names this error's cause: it is located, not "
               "classified"]
        if signal is not None and library is None and signal.culprit:
            library = values["library"] = signal.library
            why.append(f"its library ({library}) is the one the {signal.table} knowledge "
                       f"table's entry ({signal.id}) points at")
        if signal is not None:
            values["signal"] = signal.title
            values["signal_meaning"] = signal.meaning
            values["collect_next"] = signal.collect
            fix = replace(fix, steps=(f"{signal.title}: {signal.meaning}", *fix.steps))
            why.append(f"the {signal.table} knowledge table explains its code ({signal.id}) "
                       "without naming a cause")
        evidence = [EvidenceLine(line, first_text(match), match.event.process,
                             "quoted" if match.quoted else "match"),
                    *_frame_evidence(match, culprit)]
        evidence.extend(self._wrapper_evidence(after=line))
        score = 0.2 + (0.1 if culprit else 0.0) + (0.05 if match.event.frames else 0.0)
        if culprit:
            why.append(f"its library ({culprit.library}) is read from {culprit.evidence}")
        what = values.get("exception") or "an error"
        where = ", ".join(part for part in (
            f"from {library}" if library else "",
            f"during {values['phase']}" if values.get("phase") else "") if part)
        summary = f"Unclassified: {what} at line {line}" + (f" ({where})" if where else "")
        layer = culprit.layer if culprit else (
            signal.layer if signal is not None and signal.culprit and library else "unknown")
        return Finding(
            category="unclassified", kind="fallback", library=library,
            layer=layer, rule=rule.id, rule_name=rule.name,
            summary=summary, explanation=rule.explanation, evidence=tuple(evidence),
            extracted=_extracted(values, engine), fix=fix,
            related=self._related(rule, values), confidence=round(score, 2), why=tuple(why),
            occurrences=count, processes=(match.event.process,), first_line=line,
        )

    def request(self, match: Match, traceback: Match | None = None) -> Finding:
        """A ``request_error`` finding: one request failed, the server kept serving."""
        finding = self.unknown(match, 1, traceback)
        return replace(finding, category="request_error", kind="finding", fix=Fix((
            "The server is up: this error failed one request (a client sent something the "
            "server refused). Fix the request, or the limit it hit (for a prompt over the "
            "context length: a shorter prompt, or a larger --max-model-len if memory allows).",
        )), summary="A request failed; the server kept serving")

    def stalled(self, phase: str) -> Finding:
        """The ``root_cause_missing`` finding of a start that ended in ``phase`` with no error."""
        name = next((p.name for p in self.rules.tables.phases if p.id == phase), phase)
        return self._nothing_shown(
            {"engine": self.classifier.engine() or "the engine", "phase": phase,
             "stalled_phase": name},
            "The log stops during start-up with no error: a start that hangs there, or a log "
            "cut before its failure", confidence=0.3)

    def quiet(self, *, up: bool = False) -> Finding:
        """The ``root_cause_missing`` finding of a log that shows no error, no start-up and no
        running server (or, ``up``, only a server already up): what was pasted is not the part
        that failed."""
        # Nothing is read from the log: not even the engine (found only on the lines a
        # keyword brought in, so a guess here would depend on the pre-filter).
        summary = ("No error in this excerpt, which starts with the server already up: if the "
                   "deployment failed, the lines that show how are not in it" if up else
                   "No error and no running server in this log: if the deployment failed, the "
                   "lines that show how are not in it")
        return self._nothing_shown({}, summary, confidence=0.2)

    def _nothing_shown(self, values: dict[str, FieldValue], summary: str, *,
                       confidence: float) -> Finding:
        """A ``root_cause_missing`` finding with no error line: located at the last start-up
        milestone (a start that stopped there) and the last line the log shows."""
        rule = self.rules.fallback("root_cause_missing")
        fix, _ = self._fix(rule, values)
        evidence: list[EvidenceLine] = []
        places = [self.classifier.milestone] if "stalled_phase" in values else []
        for place in (*places, self.classifier.last_line):
            if place is not None and all(e.line != place[0] for e in evidence):
                evidence.append(EvidenceLine(place[0], place[1].strip()[:TEXT_LIMIT], "",
                                         "context"))
        return Finding(
            category="root_cause_missing", kind="fallback", library=None, layer="unknown",
            rule=rule.id, rule_name=rule.name, summary=summary, explanation=rule.explanation,
            evidence=tuple(evidence), extracted=dict(values), fix=fix,
            related=self._related(rule, values), confidence=confidence, why=(
                "no error line in the log: located where it stops",), occurrences=1,
            processes=(), first_line=evidence[0].line if evidence else 0,
        )

    def missing(self, hints: list[Match] | None = None) -> Finding:
        """The ``root_cause_missing`` finding when only wrappers (or, with ``hints``, only
        error-like lines no rule knows) are in the log."""
        rule = self.rules.fallback("root_cause_missing")
        if hints:
            self.data.wrappers = list(hints)
        first = self.data.wrappers[0]
        values: dict[str, FieldValue] = {"engine": self.classifier.engine() or "the engine"}
        for wrapper in self.data.wrappers:
            for name, value in wrapper.fields.items():
                values.setdefault(name, value)
        values["wrappers"] = [w.rule.name for w in self.data.wrappers if w.rule is not None]
        fix, _ = self._fix(rule, values)
        distinct = {w.rule.id for w in self.data.wrappers if w.rule is not None}
        cited: list[EvidenceLine] = []
        for w in self.data.wrappers[:MAX_EVIDENCE]:
            cited.append(EvidenceLine(w.event.match_line, first_text(w), w.event.process,
                                      "wrapper"))
            if w.rule is None and w.event.last_line > w.event.match_line:
                # A traceback cut before its exception: where the paste stops is the place the
                # error would have been.
                end = w.event.text.rstrip().rsplit("\n", 1)[-1].strip()[:TEXT_LIMIT]
                cited.append(EvidenceLine(w.event.last_line, end, w.event.process, "context"))
        evidence = tuple(cited)
        return Finding(
            category="root_cause_missing", kind="fallback", library=None, layer="unknown",
            rule=rule.id, rule_name=rule.name, summary=rule.summary,
            explanation=rule.explanation, evidence=evidence,
            extracted={k: v for k, v in values.items()}, fix=fix,
            related=self._related(rule, values),
            confidence=round(0.3 + 0.05 * min(4, len(distinct)), 2),
            why=("only consequences (wrappers) in the log: the error that caused them is not in "
                 "it",),
            occurrences=self.data.wrapper_count,
            processes=tuple(dict.fromkeys(w.event.process for w in self.data.wrappers)),
            first_line=first.event.match_line,
        )


def _extracted(values: dict[str, FieldValue], engine: tuple[str, bool]) -> dict[str, FieldValue]:
    """The values a finding reports: not the library (a field of its own), nor a guessed engine,
    nor the engine's runtime library, nor the engine's flag spellings the fix templates write
    with (``flag_*``: not read from the log)."""
    return {k: v for k, v in values.items()
            if k not in ("library", "engine_runtime") and (k != "engine" or engine[1])
            and not k.startswith("flag_")}


def _caller(match: Match, culprit: Culprit | None) -> str | None:
    """The innermost frame outside the culprit library: the code that called into it."""
    if culprit is None or not match.event.frames or culprit.layer not in (
            "kernel_library", "jit_compiler"):
        return None
    inside = False
    for frame in reversed(match.event.frames):
        in_library = culprit.library.replace("_", "") in frame.path.replace("_", "")
        if in_library:
            inside = True
        elif inside and frame.function and not frame.function.startswith("<"):
            return frame.function
    return None


@dataclass
class Aggregate:
    """What one rule matched in one engine run: its first match, counts, evidence, values."""

    rule: Rule
    first: Match
    first_line: int
    tier: int
    count: int = 0
    own: bool = False
    wrapped: bool = False
    phase_evidence: bool = False
    processes: list[str] = field(default_factory=list)
    evidence: list[EvidenceLine] = field(default_factory=list)
    fields: dict[str, FieldValue] = field(default_factory=dict)

    def add(self, match: Match) -> None:
        if not match.quoted:
            self.count += match.event.repeated
        if not match.quoted:
            if not self.own:
                self.first = match  # an own event says more than a wrapper's quote
            self.own = True
        else:
            self.wrapped = True
        self.phase_evidence = self.phase_evidence or match.phase_evidence
        process = match.event.process
        if not match.quoted and process not in self.processes and len(
                self.processes) < MAX_PROCESSES:
            self.processes.append(process)
        for name, value in match.fields.items():
            self.fields.setdefault(name, value)
        if len(self.evidence) < MAX_EVIDENCE:
            role = "quoted" if match.quoted else "match"
            item = EvidenceLine(*cited(match), process, role)
            if all(e.line != item.line or e.text != item.text for e in self.evidence):
                self.evidence.append(item)


@dataclass
class RunData:
    """The bounded summary of one engine run: causes by rule, hints, wrappers, errors."""

    causes: OrderedDict[str, Aggregate] = field(default_factory=OrderedDict)
    hints: list[Match] = field(default_factory=list)
    """Lines that read like errors but matched nothing and were not error-level (an excerpt
    cut around the failure): if the log shows nothing else, the cause is missing from it."""
    wrappers: list[Match] = field(default_factory=list)
    wrapper_count: int = 0
    errors: list[Match] = field(default_factory=list)
    error_count: int = 0

    @property
    def failed(self) -> bool:
        return bool(self.causes or self.wrappers or self.errors)

    def add_error(self, match: Match) -> None:
        """Count an error no rule knows; keep the first few."""
        self.error_count += 1
        if len(self.errors) < MAX_ERRORS:
            self.errors.append(match)
