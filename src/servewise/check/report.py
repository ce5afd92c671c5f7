"""What ``servewise check`` answers: will this deployment start, why, and what to run.

A :class:`CheckReport` gathers one finding per part (build, recipe, model rules, memory,
pitfalls) and the final command. A :class:`CheckItem` that ``blocks`` makes the answer "it
will not start" (exit 1) and carries what to change.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from servewise.knowledge.gpus import GpuSpec
    from servewise.plan.startup import Startup

GIB = 2**30

PARTS = ("build", "recipe", "rules", "settings", "memory", "pitfalls")
"""The parts of a check, in report order."""


@dataclass(frozen=True)
class CheckItem:
    """One thing the check found: which part, how bad, what it means, what to change."""

    part: str
    """One of :data:`PARTS`."""
    level: str
    """``ok``, ``note``, ``warning`` or ``error`` (an error blocks the start)."""
    message: str
    fix: str | None = None
    source: str | None = None
    """Where the fact comes from (a rule's or pitfall's source, a recipe's provenance)."""
    quote: str | None = None
    """The engine's own words for this failure (the error it would raise), quoted once beside
    ``message``, which says it in servewise's words."""

    @property
    def blocks(self) -> bool:
        """Whether this finding means the deployment will not start as given."""
        return self.level == "error"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return {"part": self.part, "level": self.level, "message": self.message,
                "fix": self.fix, "source": self.source, "quote": self.quote}


@dataclass(frozen=True)
class CheckReport:
    """The whole answer of ``servewise check``."""

    model: str
    """The model as the engine loads it (Hub id or folder)."""
    gpu: dict[str, Any]
    engine: str
    engine_version: str | None
    engine_version_from: str
    """Where the version comes from: ``--engine-version``, ``build``, ``recipe`` or ``none``."""
    findings: tuple[CheckItem, ...]
    settings: dict[str, Any]
    """The engine settings of the final command, by setting id."""
    command: dict[str, Any]
    """The final launch: ``format``, ``argv``, ``shell`` and, for some formats, more."""
    recipe: dict[str, Any] | None = None
    """The recipe used (id, status, reasons, provenance), or None."""
    gate: dict[str, Any] | None = None
    """The kernel gate's result for ``--build``, or None with advice in the findings."""
    plan: dict[str, Any] | None = None
    """The memory plan at the final settings (``startup`` and ``recommendation``)."""
    other_recipes: tuple[dict[str, Any], ...] = field(default=())

    @property
    def will_start(self) -> bool:
        """No finding blocks the start."""
        return not any(finding.blocks for finding in self.findings)

    @property
    def exit_code(self) -> int:
        """0 when it will start, 1 when something will fail."""
        return 0 if self.will_start else 1

    def to_dict(self) -> dict[str, Any]:
        """The JSON of ``servewise check --json``."""
        return {
            "will_start": self.will_start,
            "model": self.model,
            "gpu": self.gpu,
            "engine": self.engine,
            "engine_version": self.engine_version,
            "engine_version_from": self.engine_version_from,
            "findings": [finding.to_dict() for finding in self.findings],
            "problems": [finding.to_dict() for finding in self.findings if finding.blocks],
            "recipe": self.recipe,
            "other_recipes": list(self.other_recipes),
            "gate": self.gate,
            "plan": self.plan,
            "settings": self.settings,
            "command": self.command,
        }


def memory_failure(gpu: GpuSpec, engine: str, startup: Startup, fix: str) -> CheckItem:
    """A failed memory plan in servewise's words, short; the engine's own error (often
    several hundred characters) quoted once beside it (``quote``), not run into the line."""
    error = startup.error or "the plan does not fit"
    if gpu.memory_bytes and startup.weights_bytes_per_gpu > gpu.memory_bytes:
        return CheckItem("memory", "error", f"will not start: the weights take "
                       f"{startup.weights_bytes_per_gpu / GIB:.1f} GiB per GPU, more than the "
                       f"{gpu.memory_bytes / GIB:.2f} GiB of one {gpu.name}", fix=fix)
    if startup.breakdown.get("error_from_engine") is False:
        # servewise's own verdict (SGLang starts with a pool shorter than one request and
        # raises nothing): said as ours, never quoted as the engine's
        return CheckItem("memory", "error", f"will not start: {error}", fix=fix)
    if startup.kv_cache_tokens < startup.max_model_len:
        message = (f"will not start: one request of {startup.max_model_len:,} tokens does not "
                   f"fit the KV cache left beside the weights ({startup.kv_cache_tokens:,} "
                   f"tokens, {startup.kv_cache_bytes / GIB:.2f} GiB per GPU)")
    else:
        message = f"will not start: {engine} refuses these settings at start-up"
    return CheckItem("memory", "error", message, fix=fix, quote=error)


def computed_weights(notes: tuple[str, ...], tensor_bytes: int) -> CheckItem | None:
    """A note when the model's weights were computed from config.json (its ``notes`` say
    so), with how far such estimates are from the bundled cards' tensor lists."""
    from servewise.plan.config_weights import COMPUTED_NOTE, MEASURED_MISS

    if COMPUTED_NOTE not in notes:
        return None
    rest = "".join(f"; {note}" for note in notes if note != COMPUTED_NOTE)
    return CheckItem("memory", "note", f"{COMPUTED_NOTE}: {tensor_bytes / GIB:.1f} GiB; "
                   f"{MEASURED_MISS}{rest}", fix="give the checkpoint's *.safetensors files "
                   "(their headers are enough) for the exact figure")


_PART_ORDER = {part: index for index, part in enumerate(PARTS)}
_LEVEL_ORDER = {"error": 0, "warning": 1, "note": 2, "ok": 3}


def finding_order(finding: CheckItem) -> tuple[int, int]:
    """The report's order: by part, then the worst first."""
    return (_PART_ORDER.get(finding.part, 9), _LEVEL_ORDER.get(finding.level, 9))
