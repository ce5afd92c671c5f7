"""The triage contract of a diagnosis, and the located answer for an error nothing names.

Every root cause carries a :class:`~servewise.diagnose.result.Triage`: the problem class, the
strongest signal (its line), every line the answer cites, what else the log showed and why it
is not the root cause, the fix with the log's numbers, the next thing to collect, and what the
fix can break. What to collect and the risk come from the knowledge-table entry that named the
cause, else from ``knowledge/data/diagnose_triage.toml`` by the failure's layer.

:func:`explaining_signal` finds the knowledge-table entry that explains an unclassified error
(a CUDA error that names no cause by itself, an NCCL result code): the answer stays
unclassified, and says what the code means and what to collect next.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Sequence
from dataclasses import dataclass, replace

from servewise.diagnose.fields import render
from servewise.diagnose.result import Diagnosis, Finding, Triage
from servewise.diagnose.ruleset import RuleSet
from servewise.diagnose.signals import Signal
from servewise.diagnose.tables import LAYERS
from servewise.knowledge._load import EntryReader, check_unique, shipped_entries

__all__ = ["UNNAMED", "TriageDefault", "explaining_signal", "triage_defaults", "with_triage"]

UNNAMED = frozenset({"unclassified", "root_cause_missing"})
"""Categories that name no cause: the answer locates the failure without classifying it."""
_TEXT_LIMIT = 400
_PLACES = {"module": "MODULE", "package": "PACKAGE", "path": "PATH"}
"""What a collect template shows for a value the log did not give."""


@dataclass(frozen=True)
class TriageDefault:
    """What to collect next and what a fix can break, for one layer."""

    layer: str
    collect: str
    risk: str
    sources: tuple[str, ...]


@functools.cache
def triage_defaults() -> dict[str, TriageDefault]:
    """Every layer's defaults, validated: one entry per layer of :data:`LAYERS`."""
    entries = shipped_entries("diagnose_triage.toml", "triage")
    check_unique(entries)
    found: dict[str, TriageDefault] = {}
    for entry in entries:
        reader = EntryReader(entry, {"id", "collect", "risk", "source"})
        layer = reader.string("id")
        if layer not in LAYERS:
            raise reader.error("id", "not a layer", expected=", ".join(LAYERS), found=layer)
        found[layer] = TriageDefault(layer, reader.string("collect"), reader.string("risk"),
                                     reader.sources())
    missing = sorted(set(LAYERS) - set(found))
    if missing:
        raise reader.error("id", f"no entry for layer(s) {missing}")
    return found


def explaining_signal(rules: RuleSet, text: str) -> Signal | None:
    """The first knowledge-table entry whose pattern is in ``text`` (entries that name no
    category first: they exist to explain), or None."""
    ordered = sorted(rules.signals.values(), key=lambda s: s.category is not None)
    for signal in ordered:
        if any(p.search(text) for p in signal.patterns) and not any(
                p.search(text) for p in signal.exclude):
            return signal
    return None


def _problem_class(root: Finding, rules: RuleSet) -> str:
    if root.category == "unclassified":
        kind = root.extracted.get("exception")
        signal = root.extracted.get("signal")
        what = signal or kind or "an error"
        return f"unclassified: {what} (no rule or knowledge table names its cause)"
    category = rules.categories.get(root.category)
    return category.title if category is not None else root.category


def _ruled_out(root: Finding, findings: Sequence[Finding], wrappers: Sequence[str]) -> list[str]:
    out: list[str] = []
    for other in findings:
        if other is root or other.kind == "finding":
            continue
        where = f"line {other.first_line}" if other.first_line else "the log"
        if other.kind == "symptom" and root.kind == "cause":
            reason = "a symptom: it follows from a cause and yields to one"
        elif other.first_line > root.first_line:
            reason = "logged after the root cause: a consequence of it"
        else:
            reason = "logged earlier at a lower level, or less specific than the root cause"
        out.append(f"{other.category} at {where} ({other.rule}): {reason}")
    if wrappers:
        names = ", ".join(dict.fromkeys(wrappers))
        out.append(f"{len(wrappers)} wrapper line(s) ({names}): they report the failure, "
                   "they do not cause it")
    if root.category == "unclassified":
        out.append("every rule and knowledge table: none names this message's cause")
    requests = [f for f in findings if f.kind == "finding"]
    if requests:
        out.append(f"{len(requests)} failed request(s): the server kept serving them")
    return out


def _contract(root: Finding, findings: Sequence[Finding], rules: RuleSet,
              wrappers: Sequence[str]) -> Triage:
    rule = rules.get(root.rule)
    defaults = triage_defaults()
    layer = defaults.get(root.layer) or defaults["unknown"]
    collect = str(root.extracted.get("collect_next") or "") or (
        rule.collect if rule is not None and rule.collect else "") or layer.collect
    with contextlib.suppress(KeyError, ValueError, IndexError):  # unfillable: as written
        collect = render(collect, {**_PLACES, **root.extracted})
    risk = (rule.risk if rule is not None and rule.risk else "") or layer.risk
    lines = tuple(dict.fromkeys(item.line for item in root.evidence if item.line))
    first = root.evidence[0] if root.evidence else None
    return Triage(
        problem_class=_problem_class(root, rules), category=root.category,
        named=root.category not in UNNAMED, root_line=lines[0] if lines else root.first_line,
        signal=(first.text if first is not None else root.summary)[:_TEXT_LIMIT],
        evidence_lines=lines, ruled_out=tuple(_ruled_out(root, findings, wrappers)),
        fix=root.fix.steps, collect=collect, risk=risk,
    )


def with_triage(diagnosis: Diagnosis, rules: RuleSet, wrappers: Sequence[str] = ()) -> Diagnosis:
    """``diagnosis`` with the triage contract on its root cause (the same finding in the
    findings list too); a diagnosis without a root cause is returned as it is."""
    root = diagnosis.root_cause
    if root is None:
        return diagnosis
    contracted = replace(root, triage=_contract(root, diagnosis.findings, rules, wrappers))
    findings = tuple(contracted if f is root else f for f in diagnosis.findings)
    return replace(diagnosis, root_cause=contracted, findings=findings)
