"""Root-cause selection: wrappers and consequences never win over a cause above them.

:class:`Collector` takes the :class:`~servewise.diagnose.classify.Match` of
every event, keeps a bounded summary per engine run (one aggregate per rule,
a few wrappers and unclassified errors), and :meth:`Collector.result` picks, in
the last run that shows a failure:

1. the earliest *cause* (error-level lines before info/warning ones);
2. else the earliest *symptom*, unless an unclassified error of another process
   came before it (a watchdog timeout after another rank's crash);
3. else the earliest unclassified error, reported as ``unknown`` with its library
   attributed from paths;
4. else, when only wrappers remain, ``root_cause_missing``.

Wrappers after a deliberate shutdown (SIGTERM, Ctrl-C) are shutdown noise.
Confidence is computed per finding from the evidence (see :func:`confidence`).
"""

from __future__ import annotations

import functools
import re
from collections import OrderedDict
from dataclasses import dataclass, field

from servewise.diagnose.advice import compute_advice
from servewise.diagnose.attribute import Culprit, attribute, attribute_path
from servewise.diagnose.classify import Classifier, Match, engine_name
from servewise.diagnose.fields import known, render
from servewise.diagnose.result import Diagnosis, Evidence, FieldValue, Finding, Fix
from servewise.knowledge.diagnose_advice import flag_values
from servewise.knowledge.diagnose_rules import Rule, RuleSet

__all__ = ["Collector", "confidence"]

MAX_RUNS = 4
MAX_EVIDENCE = 6
MAX_WRAPPERS = 8
MAX_ERRORS = 5
MAX_PROCESSES = 16
TEXT_LIMIT = 400
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


def _first_text(match: Match) -> str:
    event = match.event
    text = event.text if not match.quoted else event.message
    lines = [line for line in text.splitlines() if line.strip()]
    first = lines[0].strip() if lines else ""
    if not first and event.frames:  # a traceback cut before its exception: its last frame
        frame = event.frames[-1]
        first = f'File "{frame.path}", line {frame.line}, in {frame.function} (cut here)'
    return first[:TEXT_LIMIT]


def _tier(match: Match) -> int:
    event = match.event
    if event.kind in ("traceback", "exception") or event.level in (None, "error", "critical",
                                                                   "fatal"):
        return 0
    return 1


@dataclass
class _Aggregate:
    rule: Rule
    first: Match
    first_line: int
    tier: int
    count: int = 0
    own: bool = False
    wrapped: bool = False
    phase_evidence: bool = False
    processes: list[str] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)
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
            item = Evidence(match.event.match_line, _first_text(match), process, role)
            if all(e.line != item.line or e.text != item.text for e in self.evidence):
                self.evidence.append(item)


_ERRORISH = re.compile(r"\b(?:[Ee]rror|ERROR|[Ff]ailed|FAILED|[Ee]xception|[Ff]atal|FATAL|"
                       r"[Aa]ssert(?:ion)?|[Aa]borted|[Kk]illed|[Tt]imed out|[Tt]imeout)\b")
MAX_HINTS = 3


@dataclass
class _RunData:
    causes: OrderedDict[str, _Aggregate] = field(default_factory=OrderedDict)
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


class Collector:
    """Bounded summaries of what each engine run showed."""

    def __init__(self, rules: RuleSet) -> None:
        self.rules = rules
        self._runs: OrderedDict[int, _RunData] = OrderedDict()

    def _data(self, run: int) -> _RunData:
        data = self._runs.get(run)
        if data is None:
            data = self._runs[run] = _RunData()
            while len(self._runs) > MAX_RUNS:
                self._runs.popitem(last=False)
        return data

    def add(self, match: Match) -> bool:
        """Record one match; True when it shows a failure."""
        if match.kind == "none" and not match.shutdown and match.event.level not in (
                "debug", "info") and _ERRORISH.search(match.event.text) is not None:
            data = self._data(match.run)
            if len(data.hints) < MAX_HINTS:
                data.hints.append(match)
            return False
        if match.kind in ("none", "noise"):
            return False
        if match.kind == "wrapper":
            if match.shutdown:
                return False
            data = self._data(match.run)
            data.wrapper_count += 1
            if len(data.wrappers) < MAX_WRAPPERS:
                data.wrappers.append(match)
            for aggregate in data.causes.values():
                aggregate.wrapped = True
            for inner in match.inner:
                self._cause(data, inner)
            return True
        if match.kind == "error":
            if match.shutdown:
                return False
            data = self._data(match.run)
            data.error_count += 1
            if len(data.errors) < MAX_ERRORS:
                data.errors.append(match)
            return True
        self._cause(self._data(match.run), match)
        return True

    @staticmethod
    def _cause(data: _RunData, match: Match) -> None:
        assert match.rule is not None
        key = match.rule.id
        aggregate = data.causes.get(key)
        if aggregate is None:
            aggregate = data.causes[key] = _Aggregate(match.rule, match, match.event.match_line,
                                                      _tier(match))
        aggregate.add(match)

    # -- result ------------------------------------------------------------------

    def result(self, classifier: Classifier, *, gpu_total_gib: float | None = None,
               gpu_name: str | None = None, lines: int = 0, ended: bool = False) -> Diagnosis:
        """The diagnosis of everything added so far; ``ended``: the log is complete (a start
        that stopped mid-way with no error is only a finding then, never while it streams)."""
        engine = classifier.engine()
        failing = [(run, data) for run, data in self._runs.items() if data.failed]
        if not failing:
            last = next(reversed(self._runs.items()), None)
            if last is not None and last[1].hints and classifier.serving_line(last[0]) is None:
                # Error-like lines no rule knows, and the server never came up: not a healthy
                # log, an excerpt without its cause.
                hinted = _Builder(self.rules, classifier, gpu_total_gib, gpu_name, last[1])
                cut = hinted.missing(hints=last[1].hints)
                return Diagnosis(cut, (cut,), lines=lines, engine=engine,
                                 runs=classifier.run_count)
            phase = classifier.stalled() if ended else None
            if phase is not None:
                builder = _Builder(self.rules, classifier, gpu_total_gib, gpu_name,
                                   last[1] if last is not None else _RunData())
                stuck = builder.stalled(phase)
                return Diagnosis(stuck, (stuck,), lines=lines, engine=engine,
                                 runs=classifier.run_count)
            if ended and lines and not classifier.came_up():
                # No error, no start, no running server: an excerpt that left the failure out.
                builder = _Builder(self.rules, classifier, gpu_total_gib, gpu_name,
                                   last[1] if last is not None else _RunData())
                quiet = builder.quiet()
                return Diagnosis(quiet, (quiet,), lines=lines, engine=engine,
                                 runs=classifier.run_count)
            return Diagnosis(None, (), lines=lines, engine=engine, runs=classifier.run_count)
        _, data = failing[-1]
        builder = _Builder(self.rules, classifier, gpu_total_gib, gpu_name, data)
        causes = [a for a in data.causes.values() if a.rule.kind == "cause"]
        symptoms = [a for a in data.causes.values() if a.rule.kind == "symptom"]
        requests = [e for e in data.errors if classifier.request_error(e)]
        errors = [e for e in data.errors if not classifier.request_error(e)]
        request_findings = [builder.request(error) for error in _distinct(requests)]
        if not causes and not symptoms and not data.wrappers and not errors and requests:
            # A running server that failed some requests: findings, not a failed start.
            return Diagnosis(None, tuple(request_findings), lines=lines, engine=engine,
                             runs=classifier.run_count)
        findings = [builder.finding(a) for a in sorted(causes + symptoms,
                                                        key=lambda a: a.first_line)]
        root: Finding | None = None
        if causes:
            best = min(causes, key=lambda a: (a.tier, a.first_line))
            root = next(f for f in findings if f.rule == best.rule.id)
        elif symptoms:
            best = min(symptoms, key=lambda a: (a.tier, a.first_line))
            earlier = [e for e in errors if e.event.match_line < best.first_line
                       and e.event.process not in best.processes]
            if earlier:
                root = builder.unknown(earlier[0], data.error_count)
                findings.insert(0, root)
            else:
                root = next(f for f in findings if f.rule == best.rule.id)
        elif errors:
            root = builder.unknown(errors[0], data.error_count)
            findings.append(root)
        else:
            root = builder.missing()
            findings.append(root)
        findings.extend(request_findings)
        return Diagnosis(root, tuple(findings), lines=lines,
                         engine=classifier.engine(), runs=classifier.run_count)


def confidence(*, kind: str, literal: int, phase_evidence: bool, wrapped: bool, count: int,
               processes: int, complete: bool, own: bool, status: str) -> float:
    """How sure a finding is, from its evidence.

    A cause starts at 0.55 (a symptom at 0.40), plus up to 0.25 for how specific
    the matched signature is (literal characters, 40 or more counts fully), 0.08
    when the event itself showed the phase or evidence the rule asks for, 0.07
    when wrappers agree (one quotes it, or wrappers follow it), 0.05 when more
    than one process or occurrence reported it, 0.05 when every value the fix
    needs was read; minus 0.15 when it was seen only quoted inside a wrapper and
    0.05 for a preview rule. The result is kept within 0.05 and 0.97.
    """
    value = 0.55 if kind == "cause" else 0.40
    value += 0.25 * min(1.0, literal / 40)
    value += 0.08 if phase_evidence else 0.0
    value += 0.07 if wrapped else 0.0
    value += 0.05 if count > 1 or processes > 1 else 0.0
    value += 0.05 if complete else 0.0
    value -= 0.15 if not own else 0.0
    value -= 0.05 if status == "preview" else 0.0
    return round(min(0.97, max(0.05, value)), 2)


class _Builder:
    """Findings from aggregates: culprit, values, advice, fix, confidence."""

    def __init__(self, rules: RuleSet, classifier: Classifier, gpu_total_gib: float | None,
                 gpu_name: str | None, data: _RunData) -> None:
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

    def _fix(self, rule: Rule, known_values: dict[str, FieldValue]) -> tuple[Fix, bool]:
        values: dict[str, FieldValue] = {**_PLACEHOLDERS, **known_values}
        steps: list[str] = []
        flags: dict[str, str] = {}
        env: dict[str, str] = {}
        complete = True
        for step in rule.fixes:
            if any(known(values, name) for name in step.unless):
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

    def finding(self, aggregate: _Aggregate) -> Finding:
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
        fix, complete = self._fix(rule, values)
        evidence = list(aggregate.evidence)
        if culprit is not None and culprit.frame is not None:
            frame = culprit.frame
            evidence.append(Evidence(frame.number, f'File "{frame.path}", line {frame.line}, '
                                     f"in {frame.function}", match.event.process, "frame"))
        evidence.extend(self._wrapper_evidence(after=aggregate.first_line))
        extracted = _extracted(values, engine)
        return Finding(
            category=rule.category or "unknown", kind=rule.kind, library=library,
            layer=rule.layer, rule=rule.id, rule_name=rule.name, summary=rule.summary,
            explanation=rule.explanation, evidence=tuple(evidence), extracted=extracted,
            fix=fix, related=self._related(rule, values),
            confidence=confidence(
                kind=rule.kind, literal=match.signature.literal if match.signature else 0,
                phase_evidence=aggregate.phase_evidence, wrapped=aggregate.wrapped,
                count=aggregate.count, processes=len(aggregate.processes), complete=complete,
                own=aggregate.own, status=rule.status),
            occurrences=max(aggregate.count, 1), processes=tuple(aggregate.processes),
            first_line=aggregate.first_line,
        )

    def _wrapper_evidence(self, after: int = 0, limit: int = 3) -> list[Evidence]:
        items: list[Evidence] = []
        for wrapper in self.data.wrappers:
            if wrapper.event.match_line >= after and len(items) < limit:
                items.append(Evidence(wrapper.event.match_line, _first_text(wrapper),
                                      wrapper.event.process, "wrapper"))
        return items

    def unknown(self, match: Match, count: int) -> Finding:
        """The ``unknown`` finding of an unclassified error."""
        rule = self.rules.fallback("unknown")
        culprit = attribute(match.event, self.rules.tables)
        engine = self._engine(match, culprit, rule)
        values = self._values(rule, match, {}, engine)
        values["error"] = _first_text(match)
        if match.event.exception:
            values["exception"] = match.event.exception
        library = culprit.library if culprit else None
        if library:
            values["library"] = library
        if culprit is not None and culprit.api:
            values["api"] = culprit.api
        fix, _ = self._fix(rule, values)
        evidence = [Evidence(match.event.match_line, _first_text(match), match.event.process,
                             "match")]
        if culprit is not None and culprit.frame is not None:
            frame = culprit.frame
            evidence.append(Evidence(frame.number, f'File "{frame.path}", line {frame.line}, '
                                     f"in {frame.function}", match.event.process, "frame"))
        evidence.extend(self._wrapper_evidence(after=match.event.match_line))
        score = 0.2 + (0.1 if culprit else 0.0) + (0.05 if match.event.frames else 0.0)
        return Finding(
            category="unknown", kind="fallback", library=library,
            layer=culprit.layer if culprit else "unknown", rule=rule.id, rule_name=rule.name,
            summary=rule.summary, explanation=rule.explanation, evidence=tuple(evidence),
            extracted=_extracted(values, engine), fix=fix,
            related=self._related(rule, values), confidence=round(score, 2), occurrences=count,
            processes=(match.event.process,), first_line=match.event.match_line,
        )

    def request(self, match: Match) -> Finding:
        """A ``request_error`` finding: one request failed, the server kept serving."""
        finding = self.unknown(match, 1)
        from dataclasses import replace

        return replace(finding, category="request_error", kind="finding", fix=Fix((
            "The server is up: this error failed one request (a client sent something the "
            "server refused). Fix the request, or the limit it hit (for a prompt over the "
            "context length: a shorter prompt, or a larger --max-model-len if memory allows).",
        )), summary="A request failed; the server kept serving")

    def stalled(self, phase: str) -> Finding:
        """The ``root_cause_missing`` finding of a start that ended in ``phase`` with no error."""
        rule = self.rules.fallback("root_cause_missing")
        name = next((p.name for p in self.rules.tables.phases if p.id == phase), phase)
        values: dict[str, FieldValue] = {"engine": self.classifier.engine() or "the engine",
                                         "phase": phase, "stalled_phase": name}
        fix, _ = self._fix(rule, values)
        return Finding(
            category="root_cause_missing", kind="fallback", library=None, layer="unknown",
            rule=rule.id, rule_name=rule.name, summary="The log stops during start-up with no "
            "error: a start that hangs there, or a log cut before its failure",
            explanation=rule.explanation, evidence=(), extracted=dict(values), fix=fix,
            related=self._related(rule, values), confidence=0.3, occurrences=1,
            processes=(), first_line=0,
        )

    def quiet(self) -> Finding:
        """The ``root_cause_missing`` finding of a log that shows no error, no start-up and no
        running server: what was pasted is not the part that failed."""
        rule = self.rules.fallback("root_cause_missing")
        # Nothing is read from the log: not even the engine (found only on the lines a
        # keyword brought in, so a guess here would depend on the pre-filter).
        values: dict[str, FieldValue] = {}
        fix, _ = self._fix(rule, values)
        return Finding(
            category="root_cause_missing", kind="fallback", library=None, layer="unknown",
            rule=rule.id, rule_name=rule.name, summary="No error and no running server in this "
            "log: if the deployment failed, the lines that show how are not in it",
            explanation=rule.explanation, evidence=(), extracted=dict(values), fix=fix,
            related=self._related(rule, values), confidence=0.2, occurrences=1,
            processes=(), first_line=0,
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
        evidence = tuple(Evidence(w.event.match_line, _first_text(w), w.event.process, "wrapper")
                         for w in self.data.wrappers[:MAX_EVIDENCE])
        return Finding(
            category="root_cause_missing", kind="fallback", library=None, layer="unknown",
            rule=rule.id, rule_name=rule.name, summary=rule.summary,
            explanation=rule.explanation, evidence=evidence,
            extracted={k: v for k, v in values.items()}, fix=fix,
            related=self._related(rule, values),
            confidence=round(0.3 + 0.05 * min(4, len(distinct)), 2),
            occurrences=self.data.wrapper_count,
            processes=tuple(dict.fromkeys(w.event.process for w in self.data.wrappers)),
            first_line=first.event.match_line,
        )


def _distinct(errors: list[Match]) -> list[Match]:
    """Errors without the record that only introduced the traceback after it."""
    headers = {(e.event.process, e.event.header) for e in errors if e.event.header}
    return [e for e in errors if not (e.event.kind == "record"
                                      and (e.event.process, e.event.text.strip()) in headers)]


def _extracted(values: dict[str, FieldValue], engine: tuple[str, bool]) -> dict[str, FieldValue]:
    """The values a finding reports: not the library (a field of its own), nor a guessed engine,
    nor the engine's flag spellings the fix templates write with (``flag_*``: not read from
    the log)."""
    return {k: v for k, v in values.items()
            if k != "library" and (k != "engine" or engine[1]) and not k.startswith("flag_")}


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
