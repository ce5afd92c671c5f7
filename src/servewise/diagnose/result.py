"""What a diagnosis returns: findings with evidence, and the one chosen as the root cause.

The JSON document (:meth:`Diagnosis.to_dict`) is stable::

    {"root_cause": FINDING | null, "findings": [FINDING, ...]}

    FINDING = {"category", "kind", "library", "layer", "rule", "rule_name", "summary",
               "evidence": [{"line", "process", "role", "text"}], "extracted": {...},
               "fix": {"steps": [...], "flags": {...}, "env": {...}}, "related": [...],
               "explanation", "confidence", "why": [...], "occurrences", "processes",
               "triage": TRIAGE | null}

    TRIAGE = {"problem_class", "category", "named", "root_line", "signal": {"line", "text"},
              "evidence_lines": [...], "ruled_out": [...], "fix": [...], "collect", "risk"}

The root cause always carries its ``triage`` (the contract a person acts on); other findings
carry ``null``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Diagnosis", "EvidenceLine", "Finding", "Fix", "Triage"]

FieldValue = str | int | float | bool | list[str] | list[int] | list[float]


@dataclass(frozen=True)
class EvidenceLine:
    """One log line that supports a finding."""

    line: int
    """1-based line number in the log."""
    text: str
    """The line's message, prefixes removed (cut at 400 characters)."""
    process: str
    """The process that wrote it ('' when the log does not say)."""
    role: str
    """``match`` (the line the rule matched), ``quoted`` (the cause as a wrapper quotes it),
    ``frame`` (the traceback frame that names the culprit), ``wrapper`` (a wrapper or
    consequence line), ``context`` (a line a value was read from, the error-like line just
    above the match that starts the same failure, or where a traceback cut before its exception
    stops)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data."""
        return {"line": self.line, "process": self.process, "role": self.role,
                "text": self.text}


@dataclass(frozen=True)
class Fix:
    """What to do: steps in order, and the flags and environment they set."""

    steps: tuple[str, ...]
    flags: tuple[tuple[str, str], ...] = ()
    env: tuple[tuple[str, str], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data."""
        return {"steps": list(self.steps), "flags": dict(self.flags), "env": dict(self.env)}


@dataclass(frozen=True)
class Triage:
    """The triage contract of a root cause: what it is, where, what was ruled out, what to do,
    what to collect next and what the fix can break."""

    problem_class: str
    """The category's title (or, unclassified, the error's own type)."""
    category: str
    named: bool
    """Whether a specific category was named (False: unclassified or the cause is missing)."""
    root_line: int
    """The line the answer rests on (0 only for an empty log)."""
    signal: str
    """That line's text: the strongest signal."""
    evidence_lines: tuple[int, ...]
    """Every line the answer cites, the root line first."""
    ruled_out: tuple[str, ...]
    """What else the log showed and why it is not the root cause."""
    fix: tuple[str, ...]
    """The fix's steps, with the log's numbers filled in."""
    collect: str
    """The next thing to collect."""
    risk: str
    """What the fix can break."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data."""
        return {
            "problem_class": self.problem_class, "category": self.category,
            "named": self.named, "root_line": self.root_line,
            "signal": {"line": self.root_line, "text": self.signal},
            "evidence_lines": list(self.evidence_lines), "ruled_out": list(self.ruled_out),
            "fix": list(self.fix), "collect": self.collect, "risk": self.risk,
        }


@dataclass(frozen=True)
class Finding:
    """A failure found in the log, with its category, culprit, evidence and fix."""

    category: str
    """An id of the taxonomy (``oom_workspace_alloc``), ``unclassified`` or
    ``root_cause_missing``."""
    kind: str
    """``cause``, ``symptom`` or ``fallback``."""
    library: str | None
    """The culprit: a package (``deep_gemm``), ``driver``, a tool (``nvcc``), or
    ``<engine>-<part>`` (``vllm-config``); None when nothing names it."""
    layer: str
    """Where it failed: engine_config, model_loader, kernel_library, jit_compiler, driver, …"""
    rule: str
    """The rule id (``MEM004``)."""
    rule_name: str
    """The rule's name (``workspace-allocation-out-of-memory``)."""
    summary: str
    """One line saying what happened."""
    explanation: str
    """Why it happens."""
    evidence: tuple[EvidenceLine, ...]
    """The lines it rests on, the matched line first."""
    extracted: dict[str, FieldValue]
    """Values read from the log and computed from them, keys with units (``requested_gib``)."""
    fix: Fix
    """What to do, with the extracted values filled in."""
    related: tuple[str, ...]
    """servewise commands that help (``servewise gate IMAGE --gpu rtx-pro-6000``)."""
    confidence: float
    """0 to 1, computed from the evidence (see docs/diagnose.md)."""
    occurrences: int = 1
    """How many times it was seen (ranks, repeats)."""
    processes: tuple[str, ...] = ()
    """The processes that reported it."""
    first_line: int = 0
    """Line of its first occurrence in the run it was chosen from."""
    why: tuple[str, ...] = ()
    """Why the confidence is what it is: the evidence that raised or lowered it."""
    triage: Triage | None = None
    """The triage contract (the root cause only)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data, keys as documented in the module."""
        return {
            "category": self.category,
            "kind": self.kind,
            "library": self.library,
            "layer": self.layer,
            "rule": self.rule,
            "rule_name": self.rule_name,
            "summary": self.summary,
            "evidence": [item.to_dict() for item in self.evidence],
            "extracted": dict(self.extracted),
            "fix": self.fix.to_dict(),
            "related": list(self.related),
            "explanation": self.explanation,
            "confidence": self.confidence,
            "why": list(self.why),
            "occurrences": self.occurrences,
            "processes": list(self.processes),
            "triage": self.triage.to_dict() if self.triage is not None else None,
        }


@dataclass(frozen=True)
class Diagnosis:
    """The result: the root cause (None when the log shows no failure) and every finding."""

    root_cause: Finding | None
    findings: tuple[Finding, ...]
    lines: int = 0
    """Physical lines read."""
    engine: str | None = None
    """The engine the log came from, when recognised."""
    runs: int = 0
    """Engine starts seen in the log."""

    @property
    def failed(self) -> bool:
        """Whether the log shows a failure (a cause, ``unclassified`` or ``root_cause_missing``)."""
        return self.root_cause is not None

    @property
    def exit_code(self) -> int:
        """1 when the log shows a failure, 0 when it shows none."""
        return 1 if self.failed else 0

    def to_dict(self) -> dict[str, Any]:
        """The stable JSON document: ``{"root_cause": …, "findings": […]}``."""
        return {
            "root_cause": self.root_cause.to_dict() if self.root_cause else None,
            "findings": [finding.to_dict() for finding in self.findings],
        }
