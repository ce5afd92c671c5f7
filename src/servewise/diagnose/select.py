"""Root-cause selection: wrappers and consequences never win over a cause above them.

:class:`Collector` takes the :class:`~servewise.diagnose.classify.Match` of
every event, keeps a bounded summary per engine run (one aggregate per rule,
a few wrappers and unclassified errors), and :meth:`Collector.result` picks, in
the last run that shows a failure:

1. the earliest *cause* (error-level lines before info/warning ones);
2. else the earliest *symptom*, unless an unclassified error came before it (a
   watchdog timeout after another rank's crash, a ``Killed`` after an assertion);
3. else the earliest error nothing names, as the located ``unclassified`` answer
   with its library attributed from paths;
4. else, when only wrappers remain, ``root_cause_missing``.

Wrappers after a deliberate shutdown (SIGTERM, Ctrl-C) are shutdown noise.
Findings are built by :mod:`servewise.diagnose.findings`.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import replace

from servewise.diagnose.classify import Classifier, Match
from servewise.diagnose.findings import Aggregate, Builder, RunData, first_text
from servewise.diagnose.result import Diagnosis, EvidenceLine, Finding
from servewise.diagnose.ruleset import RuleSet
from servewise.diagnose.triage import with_triage

__all__ = ["Collector"]

MAX_RUNS = 4
MAX_WRAPPERS = 8
NEAR_LINES = 5
"""Causes this many lines apart or less belong to one message block (see root selection)."""


def _tier(match: Match) -> int:
    event = match.event
    if event.kind in ("traceback", "exception") or event.level in (None, "error", "critical",
                                                                   "fatal"):
        return 0
    return 1


_CAUGHT = re.compile(r"\b[Ff]ailed to import [^\n]{1,120}? with [A-Z]\w*(?:Error|Exception)\(")
"""A failed import the engine caught and logged as a warning, quoting the exception (vLLM's
'Failed to import from vllm._C with ImportError(...)')."""
_IMPORT_FAILED = re.compile(r"(?:^|\.)(?:ImportError|ModuleNotFoundError)$")


def _import_chain(causes: list[Aggregate], best: Aggregate) -> Aggregate:
    """A warning's caught import failure above an import error is that error's cause: the
    package's own import broke first (an extension that does not load), and what failed to
    import after it is the consequence. Not when the run went on past its imports (an error of
    another kind later is its own failure)."""
    if _IMPORT_FAILED.search(best.first.event.exception or "") is None:
        return best
    caught = [a for a in causes if a.tier > best.tier and a.first_line < best.first_line
              and _CAUGHT.search(a.first.event.text) is not None]
    return min(caught, key=lambda a: a.first_line) if caught else best


_ERRORISH = re.compile(r"\b(?:[Ee]rror|ERROR|[Ff]ailed|FAILED|[Ee]xception|[Ff]atal|FATAL|"
                       r"[Aa]ssert(?:ion)?|[Aa]borted|[Kk]illed|[Tt]imed out|[Tt]imeout)\b")
MAX_HINTS = 3


class Collector:
    """Bounded summaries of what each engine run showed."""

    def __init__(self, rules: RuleSet) -> None:
        self.rules = rules
        self._runs: OrderedDict[int, RunData] = OrderedDict()

    def _data(self, run: int) -> RunData:
        data = self._runs.get(run)
        if data is None:
            data = self._runs[run] = RunData()
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
                if inner.kind == "error":
                    data.add_error(inner)
                elif inner.kind != "wrapper":  # a quoted wrapper: the cause is still missing
                    self._cause(data, inner)
            return True
        if match.kind == "error":
            if match.shutdown:
                return False
            self._data(match.run).add_error(match)
            return True
        self._cause(self._data(match.run), match)
        return True

    @staticmethod
    def _cause(data: RunData, match: Match) -> None:
        assert match.rule is not None
        key = match.rule.id
        aggregate = data.causes.get(key)
        if aggregate is None:
            aggregate = data.causes[key] = Aggregate(match.rule, match, match.event.match_line,
                                                      _tier(match))
        aggregate.add(match)

    # -- result ------------------------------------------------------------------

    def result(self, classifier: Classifier, *, gpu_total_gib: float | None = None,
               gpu_name: str | None = None, lines: int = 0, ended: bool = False) -> Diagnosis:
        """The diagnosis of everything added so far, its root cause with the triage contract;
        ``ended``: the log is complete (a start that stopped mid-way with no error is only a
        finding then, never while it streams)."""
        diagnosis = self._result(classifier, gpu_total_gib=gpu_total_gib, gpu_name=gpu_name,
                                 lines=lines, ended=ended)
        failing = [data for data in self._runs.values() if data.failed]
        wrappers = [w.rule.name for w in failing[-1].wrappers
                    if w.rule is not None] if failing else []
        return with_triage(diagnosis, self.rules, wrappers)

    def _result(self, classifier: Classifier, *, gpu_total_gib: float | None,
                gpu_name: str | None, lines: int, ended: bool) -> Diagnosis:
        engine = classifier.engine()
        failing = [(run, data) for run, data in self._runs.items() if data.failed]
        if not failing:
            last = next(reversed(self._runs.items()), None)
            if last is not None and last[1].hints and classifier.serving_line(last[0]) is None:
                # Error-like lines no rule knows, and the server never came up: not a healthy
                # log, an excerpt without its cause.
                hinted = Builder(self.rules, classifier, gpu_total_gib, gpu_name, last[1])
                cut = hinted.missing(hints=last[1].hints)
                return Diagnosis(cut, (cut,), lines=lines, engine=engine,
                                 runs=classifier.run_count)
            # A complete log that started and stopped mid-way, or that shows no error, no
            # start and no running server, or only a server already up (an excerpt that
            # left the failure out).
            phase = classifier.stalled() if ended else None
            up_only = ended and classifier.seen_up_only()
            if phase is not None or up_only or (ended and lines and not classifier.came_up()):
                builder = Builder(self.rules, classifier, gpu_total_gib, gpu_name,
                                  last[1] if last is not None else RunData())
                found = (builder.stalled(phase) if phase is not None
                         else builder.quiet(up=up_only))
                return Diagnosis(found, (found,), lines=lines, engine=engine,
                                 runs=classifier.run_count)
            return Diagnosis(None, (), lines=lines, engine=engine, runs=classifier.run_count)
        run, data = failing[-1]
        builder = Builder(self.rules, classifier, gpu_total_gib, gpu_name, data)
        serving = classifier.serving_line(run)
        # A request refused by a server that is up (a prompt over its context, no chat
        # template): a finding with the rule's fix, not the root cause of a failed start.
        served = [a for a in data.causes.values() if a.rule.category == "request_error"
                  and serving is not None and a.first_line > serving]
        causes = [a for a in data.causes.values() if a.rule.kind == "cause" and a not in served]
        symptoms = [a for a in data.causes.values() if a.rule.kind == "symptom"]
        requests: list[Match] = []
        errors: list[Match] = []
        for error in data.errors:
            (requests if classifier.request_error(error) else errors).append(error)
        # A traceback cut before its exception, inside code that answers a request, is part
        # of that request's failure (and, right below a logged request error, its traceback).
        cut_requests = [w for w in data.wrappers
                        if w.rule is None and classifier.request_error(w)]
        request_findings = [replace(builder.finding(a), kind="finding") for a in served] + [
            builder.request(error, _traceback_of(error, cut_requests))
            for error in _distinct(requests, [a.first for a in served])]
        wrappers = [w for w in data.wrappers if w not in cut_requests]
        if cut_requests and not requests:
            requests = cut_requests[:1]
            request_findings.append(builder.request(cut_requests[0]))
        if not causes and not symptoms and not wrappers and not errors and (
                requests or served):
            # A running server that failed some requests: findings, not a failed start. An
            # excerpt that shows only the failed request (not the server coming up) has it as
            # its answer.
            return Diagnosis(request_findings[0] if serving is None else None,
                             tuple(request_findings), lines=lines, engine=engine,
                             runs=classifier.run_count)
        findings = [builder.finding(a) for a in sorted(causes + symptoms,
                                                        key=lambda a: a.first_line)]
        root: Finding | None = None
        if causes:
            best = _import_chain(causes, min(causes, key=lambda a: (a.tier, a.first_line)))
            # A more specific cause a few lines below, in the same message block, says what
            # the first one only named (NCCL's 'unhandled system error', then its 'Last
            # error:' line): the first rule defers to it.
            deferred = [a for a in causes if a.rule.category in best.rule.defers_to
                        and 0 < a.first_line - best.first_line <= NEAR_LINES]
            if deferred:
                best = min(deferred, key=lambda a: a.first_line)
            root = next(f for f in findings if f.rule == best.rule.id)
            lead = _lead_in(data.hints, best)
            if lead is not None:
                cited = replace(root, evidence=(root.evidence[0], lead, *root.evidence[1:]))
                findings = [cited if f is root else f for f in findings]
                root = cited
        elif symptoms:
            best = min(symptoms, key=lambda a: (a.tier, a.first_line))
            earlier = [e for e in errors if e.event.match_line < best.first_line
                       and not _announces(e)]
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


LEAD_LINES = 2
"""How far above a cause an error-like line of the same process still starts the same failure."""


def _lead_in(hints: list[Match], best: Aggregate) -> EvidenceLine | None:
    """An error-like line no rule names, written by the same process just above the cause's
    line: the first record of the same failure (ggml's ``cudaMalloc failed: out of memory``
    above the loader's ``unable to allocate CUDA0 buffer``), cited with it."""
    first = best.first.event
    for hint in hints:
        gap = best.first_line - hint.event.match_line
        if 0 < gap <= LEAD_LINES and hint.event.process == first.process:
            return EvidenceLine(hint.event.match_line, first_text(hint), hint.event.process,
                                "context")
    return None


_HEADER = re.compile(r"(?:^|\.|\s)ValidationError: \d+ validation errors? for [\w.]+\s*$")
"""An exception line that only announces the errors listed below it (pydantic's ``1 validation
error for ModelConfig``): what it validated is the next lines' message."""


def _announces(error: Match) -> bool:
    """Whether ``error`` is only a header whose detail was logged below it as its own event
    (a paste that kept the detail's process prefix and lost the header's)."""
    return _HEADER.search(error.event.text.strip()) is not None


def _distinct(errors: list[Match], others: list[Match] | None = None) -> list[Match]:
    """Errors without the record that only introduced the traceback after it (one of the
    errors, or of ``others``)."""
    headers = {(e.event.process, e.event.header) for e in [*errors, *(others or [])]
               if e.event.header}
    return [e for e in errors if not (e.event.kind == "record"
                                      and (e.event.process, e.event.text.strip()) in headers)]


def _traceback_of(error: Match, cut: list[Match]) -> Match | None:
    """The cut traceback logged right below ``error`` (``logger.exception``'s message, then its
    traceback), if there is one."""
    return next((w for w in cut
                 if 0 <= w.event.first_line - error.event.last_line <= 2), None)
