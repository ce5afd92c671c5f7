"""Helpers of the diagnose tests: run a log through the scanner and keep every match."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from servewise.diagnose import Diagnosis, new_scanner
from servewise.diagnose.classify import Match
from support.paths import ROOT, SAMPLES

RULE_FIXTURES = ROOT / "tests" / "data" / "diagnose" / "rules"
LOG_FIXTURES = ROOT / "tests" / "data" / "diagnose" / "logs"
SGLANG_SAMPLE = SAMPLES / "sglang_h200_moe_workspace.log"
"""The seed's SGLang H200 failure, shipped as a sample for the README's examples."""


@dataclass
class Run:
    """A diagnosis with every classified event of the log."""

    diagnosis: Diagnosis
    matches: list[Match] = field(default_factory=list)

    def fired(self, rule_id: str) -> bool:
        """Whether rule ``rule_id`` matched an event (or a wrapper's quoted message), other than
        as shutdown noise after a deliberate stop."""
        for match in self.matches:
            if match.shutdown:
                continue
            if match.rule is not None and match.rule.id == rule_id:
                return True
            if any(inner.rule is not None and inner.rule.id == rule_id for inner in match.inner):
                return True
        return False


def run_text(text: str, *, prefilter: bool = True, chunk: int | None = None,
             matcher: str | None = None) -> Run:
    """Diagnose ``text``, fed in chunks of ``chunk`` bytes (all at once by default)."""
    matches: list[Match] = []
    scanner = new_scanner(prefilter=prefilter, matcher=matcher)
    scanner.on_match = matches.append
    data = text.encode()
    step = chunk or max(len(data), 1)
    for start in range(0, len(data), step):
        scanner.feed(data[start:start + step])
    return Run(scanner.finish(), matches)


def run_file(path: Path, **kwargs: object) -> Run:
    """Diagnose a log file."""
    return run_text(path.read_text("utf-8"), **kwargs)  # type: ignore[arg-type]
