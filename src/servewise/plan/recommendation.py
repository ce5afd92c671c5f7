"""What a plan recommends, as a typed result: the fraction, the headroom, the longest context.

:class:`Recommendation` is what other packages read from a plan (``check`` takes the
fraction to write and the workspaces to keep free, ``launch search`` its prior); its
:meth:`Recommendation.to_dict` is the ``recommendation`` object of ``servewise plan --json``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Workspace:
    """Memory an engine allocates after sizing the KV pool, which must stay free."""

    name: str
    bytes: int
    source: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data."""
        return {"name": self.name, "bytes": self.bytes, "source": self.source}


@dataclass(frozen=True)
class Recommendation:
    """The settings a plan recommends and what they leave."""

    layout: str
    """The parallel layout planned (``TP2``, ``DP8 EP8``)."""
    workspaces: tuple[Workspace, ...]
    """What must stay free besides the KV pool."""
    safety_bytes: int
    """Headroom kept besides the named workspaces."""
    verdict: Mapping[str, Any]
    """How safe the fits / does-not-fit verdict is (margin, risk, note)."""
    gpu_memory_utilization: float | None = None
    """vLLM: the utilization to pass."""
    fraction_window: Mapping[str, Any] | None = None
    """SGLang: the ``--mem-fraction-static`` advice, default and bounds (one rule decides the
    verdict and the advice)."""
    headroom_bytes: int | None = None
    """What the recommended fraction leaves outside the engine's share."""
    note: str | None = None
    """Why there is no fraction to choose (the CPU backend)."""
    startup: Mapping[str, Any] | None = None
    """The startup with the recommended fraction, when the user gave none."""
    largest_context_tokens: int | None = None
    """The longest context one request can have with these settings."""
    context_tokens: int | None = None
    concurrency_at_context: float | None = None
    """How many requests of ``context_tokens`` fit at once (``plan --context``)."""

    @property
    def mem_fraction_static(self) -> float | None:
        """SGLang: the ``--mem-fraction-static`` to pass."""
        value = (self.fraction_window or {}).get("mem_fraction_static")
        return None if value is None else float(value)

    def fraction(self, setting_id: str) -> float | None:
        """The recommended ``gpu_memory_utilization`` or ``mem_fraction_static``."""
        if setting_id == "mem_fraction_static":
            return self.mem_fraction_static
        if setting_id == "gpu_memory_utilization":
            return self.gpu_memory_utilization
        raise KeyError(setting_id)

    @property
    def highest_fraction_with_headroom(self) -> float | None:
        """The highest fraction that still leaves the workspaces their room (SGLang's window
        says it; for vLLM it is the recommended utilization)."""
        value = (self.fraction_window or {}).get("highest_fraction_with_headroom")
        if value is None:
            return self.gpu_memory_utilization
        return float(value)

    @property
    def workspace_bytes(self) -> int:
        """The named workspaces together."""
        return sum(workspace.bytes for workspace in self.workspaces)

    def to_dict(self) -> dict[str, Any]:
        """The ``recommendation`` object of ``servewise plan --json``."""
        out: dict[str, Any] = {"workspaces": [w.to_dict() for w in self.workspaces],
                               "safety_bytes": self.safety_bytes}
        if self.note is not None:
            out["note"] = self.note
        if self.fraction_window is not None:
            out.update(self.fraction_window)
        if self.gpu_memory_utilization is not None:
            out["gpu_memory_utilization"] = self.gpu_memory_utilization
        if self.headroom_bytes is not None:
            out["headroom_bytes"] = self.headroom_bytes
        out["layout"] = self.layout
        if self.startup is not None:
            out["startup"] = dict(self.startup)
        if self.largest_context_tokens is not None:
            out["largest_context_tokens"] = self.largest_context_tokens
        if self.context_tokens is not None:
            out["context_tokens"] = self.context_tokens
            out["concurrency_at_context"] = self.concurrency_at_context
        out["verdict"] = dict(self.verdict)
        return out
