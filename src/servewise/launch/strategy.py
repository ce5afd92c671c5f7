"""Where a search tries next (pure): the planner's prior, the engine's hints, doubling, bisection.

:class:`Bounds` keeps what the attempts have shown -- the largest value that started, the
smallest that was too large, the largest that was too small (a memory fraction can fail
both ways) -- and :func:`next_value` picks the next value to try, or None when the answer
is known to the resolution. The search is for the *largest* value that starts.

The order of preference: the engine's own figure from a failure (vLLM's "estimated maximum
model length", the KV capacity SGLang logs), then one step above a prior that worked, then
growth (an integer doubles; a fraction goes halfway to ``--max``), then bisection.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from servewise.errors import UsageError

__all__ = [
    "PARAMS", "TOO_HIGH_CATEGORIES", "TOO_LOW_CATEGORIES", "Bounds", "Param", "next_value",
    "snap", "verdict",
]


@dataclass(frozen=True)
class Param:
    """A parameter the search can vary."""

    name: str
    """As the user writes it: ``max-model-len``."""
    setting: str
    """The :class:`~servewise.knowledge.flags.EngineSettings` id."""
    integer: bool
    minimum: float
    maximum: float
    resolution: float
    start: float


    @property
    def hard_limits(self) -> tuple[float, float]:
        """The values an engine could ever take: tokens or sequences from 1 to 2^30, a
        memory fraction above 0 and at most 1."""
        return (1.0, float(2**30)) if self.integer else (1e-6, 1.0)

    def check(self, minimum: float, maximum: float, resolution: float,
              start: float | None) -> None:
        """Raise :class:`UsageError` for bounds no engine takes (nan, 0, 1e308...),
        saying what is expected, before anything is launched with them."""
        low, high = self.hard_limits
        expected = (f"a whole number from {low:.0f} to {high:.0f}" if self.integer
                    else f"a fraction above 0 and at most {high:g}")
        for option, value in (("--min", minimum), ("--max", maximum), ("--start", start)):
            if value is not None and not (math.isfinite(value) and low <= value <= high):
                raise UsageError(f"{option} {value:g} is not a value of --param {self.name}",
                                 found=f"{value:g}", expected=expected,
                                 hint=f"give {option} as {expected}")
        if not (math.isfinite(resolution) and 0 < resolution <= high - low):
            raise UsageError(f"--resolution {resolution:g} cannot end a search of {self.name}",
                             found=f"{resolution:g}", expected=f"above 0 and at most "
                             f"{high - low:g}", hint=f"e.g. --resolution {self.resolution:g} "
                             "(the default)")


PARAMS: dict[str, Param] = {
    "max-model-len": Param("max-model-len", "max_model_len", True, 256, 1_048_576, 256, 8192),
    "max-num-seqs": Param("max-num-seqs", "max_num_seqs", True, 1, 4096, 1, 64),
    "gpu-memory-utilization": Param("gpu-memory-utilization", "gpu_memory_utilization", False,
                                    0.3, 0.98, 0.01, 0.9),
    "mem-fraction-static": Param("mem-fraction-static", "mem_fraction_static", False, 0.3,
                                 0.98, 0.01, 0.85),
}
"""Defaults per parameter: bounds, resolution and a start without a prior (vLLM's own
default utilization 0.9; the seed's doubling began at 8k)."""

TOO_HIGH_CATEGORIES = frozenset({
    "oom_weight_load", "oom_profile_run", "oom_cudagraph_capture", "oom_workspace_alloc",
    "oom_runtime", "oom_other", "kv_cache_insufficient", "startup_free_memory_low",
    "host_oom_killed", "max_model_len_exceeds_derived",
})
"""Diagnosis categories that mean "the value was too large" (memory ran out)."""
TOO_LOW_CATEGORIES = frozenset({"kv_cache_no_memory"})
"""Categories that mean "too small" for a memory fraction (the KV cache got nothing)."""


def verdict(param: Param, outcome: str, category: str | None, exit_code: int | None) -> str:
    """``ok``, ``too_high``, ``too_low`` or ``other`` (the value is not why it failed)."""
    if outcome == "ready":
        return "ok"
    fraction = not param.integer
    if category in TOO_LOW_CATEGORIES and fraction:
        return "too_low"
    if category == "kv_cache_insufficient" and fraction:
        return "too_low"  # a larger share gives the cache more room
    if category in TOO_HIGH_CATEGORIES:
        return "too_high"
    if outcome == "failed" and exit_code == -9:
        return "too_high"  # the OOM killer (or another SIGKILL): treated as memory
    return "other"


@dataclass
class Bounds:
    """What the attempts showed so far."""

    param: Param
    minimum: float
    maximum: float
    resolution: float
    ok: float | None = None
    """The largest value that started."""
    too_high: float | None = None
    """The smallest value that was too large (or just above the engine's stated limit)."""
    too_low: float | None = None
    """The largest value that was too small (fractions)."""
    hint: float | None = None
    """A value the engine named that has not been tried yet."""
    prior: float | None = None
    """The planner's prediction (tried first); after it works, one step above is next."""
    tried: tuple[float, ...] = ()

    def record(self, value: float, result: str, hint: float | None = None) -> None:
        """Take an attempt's verdict and the engine's figure (the largest that fits)."""
        self.tried = (*self.tried, value)
        if result == "ok":
            self.ok = value if self.ok is None else max(self.ok, value)
        elif result == "too_high":
            self.too_high = value if self.too_high is None else min(self.too_high, value)
        elif result == "too_low":
            self.too_low = value if self.too_low is None else max(self.too_low, value)
        if hint is not None and result == "too_high" and hint < value:
            # vLLM names the largest length that fits: everything above it fails.
            step = 1 if self.param.integer else self.resolution / 10
            self.too_high = min(self.too_high or math.inf, hint + step)
            self.hint = hint
        elif hint is not None and result == "too_low" and hint > value:
            self.too_low = max(self.too_low or -math.inf, value)
            self.hint = hint

    def best(self) -> float | None:
        """The answer so far: the largest value that started."""
        return self.ok

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data."""
        return {"ok": self.ok, "too_high": self.too_high, "too_low": self.too_low,
                "minimum": self.minimum, "maximum": self.maximum,
                "resolution": self.resolution}


def snap(bounds: Bounds, value: float) -> float:
    """``value`` clamped to the bounds, as an int (integers) or rounded to the resolution."""
    value = min(max(value, bounds.minimum), bounds.maximum)
    if bounds.param.integer:
        return float(int(value))
    digits = max(0, -math.floor(math.log10(bounds.resolution)))
    return round(round(value / bounds.resolution) * bounds.resolution, digits)


def _open(bounds: Bounds, value: float) -> bool:
    """Whether ``value`` lies strictly between what worked (or was too small) and too large."""
    low = max(x for x in (bounds.ok, bounds.too_low, -math.inf) if x is not None)
    high = bounds.too_high if bounds.too_high is not None else math.inf
    return low < value < high and value not in bounds.tried


def next_value(bounds: Bounds) -> float | None:
    """The next value to try, or None when the answer is known to the resolution."""
    b = bounds
    if not b.tried:
        return snap(b, b.prior if b.prior is not None else b.param.start)
    if b.hint is not None:
        hint, b.hint = snap(b, b.hint), None
        if _open(b, hint):
            return hint
    low = max(x for x in (b.ok, b.too_low) if x is not None) if (
        b.ok is not None or b.too_low is not None) else None
    high = b.too_high
    if b.ok is not None and b.ok >= b.maximum:
        return None
    if high is not None and high <= b.minimum:
        return None
    if low is not None and high is not None and high - low <= b.resolution:
        return None
    if low is None:
        assert high is not None
        candidate = snap(b, high / 2 if b.param.integer else (high + b.minimum) / 2)
        return candidate if _open(b, candidate) else None
    if high is None:
        if b.prior is not None and b.ok == b.prior:
            candidate = snap(b, low + b.resolution)  # the planner was right? one step above
        elif b.param.integer:
            candidate = snap(b, low * 2)
        else:
            candidate = snap(b, (low + b.maximum) / 2)
        if candidate <= low:
            return None
        return candidate
    middle = low + (high - low) / 2
    if b.param.integer:
        middle = low + max(b.resolution, math.floor((middle - low) / b.resolution)
                           * b.resolution)
    candidate = snap(b, middle)
    return candidate if _open(b, candidate) else None
