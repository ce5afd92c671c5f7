"""The root cause of a failed launch, as a typed result.

A launch keeps the diagnosis of its log as the JSON document ``servewise diagnose --json``
writes; :class:`RootCause` is what the rest of servewise reads from it (the category, the
library, the summary, the fix's steps, the numbers the rule extracted), so that callers do
not read a dict by string keys.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


@dataclass(frozen=True)
class RootCause:
    """What diagnose named as the cause of a launch's failure."""

    category: str | None
    library: str | None
    layer: str | None
    summary: str | None
    fix_steps: tuple[str, ...] = ()
    extracted: Mapping[str, Any] = field(default_factory=dict)
    """Numbers and names the rule read from the log (``estimated_max_len``...)."""
    document: Mapping[str, Any] = field(default_factory=dict)
    """The finding as ``servewise diagnose --json`` writes it."""

    @classmethod
    def from_finding(cls, finding: Mapping[str, Any]) -> RootCause:
        """The root cause of a diagnosis's ``root_cause`` finding (JSON)."""
        fix = finding.get("fix")
        steps = fix.get("steps") if isinstance(fix, Mapping) else None
        extracted = finding.get("extracted")
        return cls(
            category=_text(finding.get("category")), library=_text(finding.get("library")),
            layer=_text(finding.get("layer")), summary=_text(finding.get("summary")),
            fix_steps=tuple(s for s in steps if isinstance(s, str)) if isinstance(
                steps, list) else (),
            extracted=dict(extracted) if isinstance(extracted, Mapping) else {},
            document=dict(finding))

    def extracted_int(self, *keys: str) -> int | None:
        """The first of ``keys`` the rule extracted as a whole number."""
        for key in keys:
            value = self.extracted.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
        return None

    def brief(self) -> dict[str, Any]:
        """Category, library, summary and fix: what a search or sweep records."""
        return {key: self.document.get(key) for key in ("category", "library", "summary",
                                                        "fix")}

    def to_dict(self) -> dict[str, Any]:
        """The finding as ``servewise diagnose --json`` wrote it."""
        return dict(self.document)
