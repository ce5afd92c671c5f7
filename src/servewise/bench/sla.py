"""SLA search: the largest concurrency (or request rate) whose latency percentiles meet limits.

``servewise bench URL ... --sla "ttft_p99<=500ms,tpot_p99<=40ms"`` runs one benchmark per
load value and keeps every run. The values come from :class:`SlaStrategy`, in two phases:

1. **Bracket.** From the start value, each run's *ratio* (the largest measured/limit over the
   limits, so a run meets the SLA when it is at most 1) is extrapolated to where it reaches
   1, from the last two passing runs (a straight line through them), aiming a little past the
   crossing so that the next run fails and closes the bracket; with one run, the value is
   multiplied by 1/ratio (at least 2x, at most 8x). The growth is capped at 8x a step.
2. **Bisect.** Between the largest passing and the smallest failing value, the next value is
   where the straight line between them crosses 1 (regula falsi; on the logarithm of the
   ratio when the failing end is more than twice the limit, as a queue's latency), kept at
   least one step inside the interval; an end that stays put while the other moves again
   pulls with half its weight each time (the Illinois variant), so a curved latency curve
   cannot stall it.
   It ends when the two ends are one step apart (concurrency: 1; rate: 5 % unless
   ``--sla-step`` says), or after ``max_runs``.

A run in which any request failed does not meet the SLA, whatever its latencies.
:func:`run_sla_search` drives real runs through :func:`~servewise.bench.run.run_bench`;
the strategy itself is pure, so it is tested against known curves without a server.
"""

from __future__ import annotations

import math
import re
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from servewise.bench.load import LevelProgress, LoadLevel
from servewise.bench.run import BenchConfig, BenchResult, run_bench
from servewise.errors import ServewiseError, UsageError

__all__ = [
    "Limit", "LoadProbe", "SlaOptions", "SlaResult", "SlaStrategy", "judge", "parse_sla",
    "run_sla_search",
]

#: The metrics a limit may name, and their key in a result entry.
METRICS = {"ttft": "ttft_ms", "tpot": "tpot_ms", "itl": "itl_ms", "e2e": "e2e_ms"}
STATS = ("mean", "p50", "p90", "p99")
MAX_RUNS = 8
#: The largest growth of the load between two bracketing runs.
MAX_GROWTH = 8.0
#: How far past the predicted crossing a bracketing run aims (so that it fails).
OVERSHOOT = 1.15
_LIMIT = re.compile(r"^\s*(ttft|tpot|itl|e2e)_(mean|p50|p90|p99)\s*(<=|<)\s*"
                    r"([0-9]*\.?[0-9]+)\s*(ms|s)?\s*$", re.IGNORECASE)
Kind = Literal["concurrency", "rate"]


@dataclass(frozen=True)
class Limit:
    """One latency limit: ``ttft_p99 <= 500 ms``."""

    metric: str
    stat: str
    max_ms: float

    @property
    def key(self) -> str:
        """``ttft_p99``."""
        return f"{self.metric}_{self.stat}"

    def text(self) -> str:
        """``ttft_p99<=500ms``."""
        return f"{self.key}<={self.max_ms:g}ms"

    def measured(self, entry: dict[str, Any]) -> float | None:
        """The entry's figure for this limit (ms), None when it has none."""
        figures = entry.get(METRICS[self.metric])
        value = figures.get(self.stat) if isinstance(figures, dict) else None
        return float(value) if isinstance(value, int | float) else None


def parse_sla(text: str) -> tuple[Limit, ...]:
    """``"ttft_p99<=500ms,tpot_p99<=40ms"`` as limits; a bad item is a :class:`UsageError`."""
    limits: list[Limit] = []
    for item in text.split(","):
        if not item.strip():
            continue
        found = _LIMIT.match(item)
        value = float(found.group(4)) if found else 0.0
        if found is None or value <= 0:
            raise UsageError(
                f"--sla takes METRIC_STAT<=VALUE items separated by commas, found {item.strip()!r}",
                hint="METRIC is ttft, tpot, itl or e2e; STAT mean, p50, p90 or p99; VALUE in ms "
                "(or s): e.g. --sla \"ttft_p99<=500ms,tpot_p99<=40ms\"", found=item.strip())
        metric, stat, unit = found.group(1).lower(), found.group(2).lower(), found.group(5)
        scale = 1000.0 if unit is not None and unit.lower() == "s" else 1.0
        limits.append(Limit(metric, stat, value * scale))
    if not limits:
        raise UsageError("--sla names no limit",
                         hint="e.g. --sla \"ttft_p99<=500ms,tpot_p99<=40ms\"")
    return tuple(limits)


def judge(entry: dict[str, Any], limits: Sequence[Limit]
          ) -> tuple[bool, float, dict[str, float | None], list[str]]:
    """Whether a result entry meets every limit: ``(meets, ratio, figures, violations)``.

    ``ratio`` is the largest measured/limit (above 1: the SLA is missed); a figure the entry
    does not have (no completed request) counts as missed, and so does any failed request.
    """
    figures: dict[str, float | None] = {}
    violations: list[str] = []
    ratio = 0.0
    for limit in limits:
        value = limit.measured(entry)
        figures[limit.key] = value
        if value is None:
            violations.append(f"{limit.key}: no figure (no request completed)")
            ratio = max(ratio, math.inf)
            continue
        ratio = max(ratio, value / limit.max_ms)
        if value > limit.max_ms:
            violations.append(f"{limit.key} {value:.1f} ms > {limit.max_ms:g} ms")
    failed = int(entry.get("failed") or 0)
    if failed:
        violations.append(f"{failed} request(s) failed")
    return not violations, ratio, figures, violations


@dataclass(frozen=True)
class SlaOptions:
    """What to search: the load variable, where to start and stop."""

    kind: Kind = "concurrency"
    start: float = 1.0
    maximum: float = 4096.0
    minimum: float = 1.0
    step: float | None = None
    """The answer's resolution (None: 1 for concurrency, 5 % of the answer for rate)."""
    max_runs: int = MAX_RUNS
    method: Literal["bracket", "doubling"] = "bracket"
    """``doubling``: the plain baseline, doubling until a run fails, then halving the
    interval (no use of the measured figures), for comparison."""

    def resolution(self, low: float) -> float:
        """How close the passing and failing ends must be to stop."""
        if self.step is not None:
            return self.step
        return 1.0 if self.kind == "concurrency" else max(low * 0.05, 1e-3)

    def snap(self, value: float) -> float:
        """A value the load can take: whole requests, or a rate of 3 significant digits."""
        value = min(max(value, self.minimum), self.maximum)
        if self.kind == "concurrency":
            grid = self.step or 1.0
            return max(self.minimum, math.floor(value / grid) * grid)
        digits = 3 - math.floor(math.log10(value)) - 1 if value > 0 else 3
        return round(value, max(digits, 0))


@dataclass(frozen=True)
class LoadProbe:
    """One benchmark run of the search."""

    value: float
    meets: bool
    ratio: float
    run_id: str | None
    figures: dict[str, float | None] = field(default_factory=dict)
    violations: tuple[str, ...] = ()
    completed: int = 0
    failed: int = 0

    def to_dict(self) -> dict[str, Any]:
        """An element of ``sla.runs``."""
        return {"value": _plain(self.value), "meets": self.meets,
                "ratio": None if math.isinf(self.ratio) else round(self.ratio, 4),
                "run_id": self.run_id, "figures": self.figures,
                "violations": list(self.violations), "completed": self.completed,
                "failed": self.failed}


def _plain(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value


class SlaStrategy:
    """Which load to run next, from the runs so far (see the module's docstring)."""

    def __init__(self, options: SlaOptions) -> None:
        self.options = options
        self.probes: list[LoadProbe] = []
        self._moves: list[str] = []
        self.status = "running"

    @property
    def best(self) -> LoadProbe | None:
        """The passing run of the largest load."""
        passing = [p for p in self.probes if p.meets]
        return max(passing, key=lambda p: p.value) if passing else None

    @property
    def failing(self) -> LoadProbe | None:
        """The failing run of the smallest load above the best."""
        best = self.best
        above = [p for p in self.probes if not p.meets and (best is None or p.value > best.value)]
        return min(above, key=lambda p: p.value) if above else None

    def record(self, probe: LoadProbe) -> None:
        """Take a finished run into account."""
        if self.probes:
            self._moves.append("low" if probe.meets else "high")
        self.probes.append(probe)

    def next_value(self) -> float | None:
        """The next load to run, or None when the search is over (``status`` says why)."""
        o = self.options
        if not self.probes:
            return o.snap(o.start)
        best, failing = self.best, self.failing
        if best is not None and failing is not None and (
                failing.value - best.value <= o.resolution(best.value) + 1e-9):
            self.status = "done"
            return None
        if len(self.probes) >= o.max_runs:
            self.status = "maximum" if best is not None and best.value >= o.maximum else "runs"
            return None
        if best is None:
            assert failing is not None
            if failing.value <= o.minimum:
                self.status = "none"
                return None
            return self._fresh(o.snap(max(o.minimum, failing.value / 4)), failing.value)
        if failing is None:
            if best.value >= o.maximum:
                self.status = "maximum"
                return None
            return self._fresh(o.snap(self._extrapolate(best)), None)
        if failing.value - best.value <= o.resolution(best.value) + 1e-9:
            self.status = "done"
            return None
        return self._fresh(self._interpolate(best, failing), failing.value)

    def _fresh(self, value: float, ceiling: float | None) -> float | None:
        """``value``, or the nearest untried one strictly inside the open bracket."""
        o = self.options
        best = self.best
        low = best.value if best is not None else None
        tried = {p.value for p in self.probes}
        step = o.resolution(low or value) if o.kind == "rate" else (o.step or 1.0)
        candidate = value
        for _ in range(4):
            if candidate not in tried and (low is None or candidate > low) and (
                    ceiling is None or candidate < ceiling):
                return candidate
            candidate = o.snap(candidate + step)
        self.status = "done"
        return None

    def _extrapolate(self, best: LoadProbe) -> float:
        """Past the best passing run, toward where its ratio would reach 1."""
        passing = sorted((p for p in self.probes if p.meets), key=lambda p: p.value)
        value = best.value
        if self.options.method == "doubling":
            return min(value * 2, self.options.maximum)
        growth = MAX_GROWTH if best.ratio <= 0 else 1.0 / best.ratio
        if len(passing) >= 2:
            a, b = passing[-2], passing[-1]
            slope = (b.ratio - a.ratio) / (b.value - a.value) if b.value > a.value else 0.0
            if slope > 0:
                crossing = b.value + (1.0 - b.ratio) / slope
                growth = crossing * OVERSHOOT / value
            else:  # flat or noisy: the ratio says nothing of where the limit is
                growth = max(growth, 4.0)
        growth = min(max(growth, 2.0 if len(passing) < 2 else 1.0), MAX_GROWTH)
        target = max(value * growth, value + self.options.resolution(value))
        return min(target, self.options.maximum)

    def _interpolate(self, best: LoadProbe, failing: LoadProbe) -> float:
        """Where the line between the bracket's ends crosses 1 (Illinois' regula falsi)."""
        o = self.options
        low, high = best.value, failing.value
        if o.method == "doubling" or math.isinf(failing.ratio) or failing.ratio <= max(
                best.ratio, 1.0):
            target = (low + high) / 2
        else:
            # Far past the limit, in log(ratio): latency that grows like a queue's
            # (a + b / (1 - load / capacity)) is closer to a line there.
            if failing.ratio > 2.0:
                below, above = math.log(max(best.ratio, 1e-6)), math.log(failing.ratio)
            else:
                below, above = best.ratio - 1.0, failing.ratio - 1.0
            # An end left in place by the last runs pulls less each time (Illinois), so a
            # curved latency curve cannot make the same end move run after run.
            stale = _repeats(self._moves)
            if stale and self._moves[-1] == "low":
                above /= 2.0 ** stale
            elif stale:
                below /= 2.0 ** stale
            target = low + (-below) * (high - low) / (above - below)
        step = o.resolution(low)
        target = min(max(target, low + step), high - step)
        snapped = o.snap(target)
        if snapped <= low:
            snapped = o.snap(low + step)
        return snapped


def _repeats(moves: Sequence[str]) -> int:
    """How many times the last move repeats the one before it (0: it does not)."""
    count = 0
    for index in range(len(moves) - 1, 0, -1):
        if moves[index] != moves[index - 1]:
            break
        count += 1
    return count


@dataclass
class SlaResult:
    """The answer and every run it took."""

    search_id: str
    limits: tuple[Limit, ...]
    options: SlaOptions
    probes: list[LoadProbe] = field(default_factory=list)
    runs: list[BenchResult] = field(default_factory=list)
    status: str = "running"
    message: str = ""
    elapsed_s: float = 0.0

    @property
    def best(self) -> LoadProbe | None:
        """The passing run of the largest load (None: none passed)."""
        passing = [p for p in self.probes if p.meets]
        return max(passing, key=lambda p: p.value) if passing else None

    @property
    def exit_status(self) -> int:
        """0 an answer was found, 130 interrupted, 1 otherwise."""
        if self.status == "interrupted":
            return 130
        return 0 if self.best is not None and self.status in ("done", "maximum", "runs") else 1

    def sla_block(self) -> dict[str, Any]:
        """The ``sla`` object of the JSON: ``best``, ``runs`` and how the search went."""
        best = self.best
        failing = [p for p in self.probes if not p.meets and (best is None or
                                                              p.value > best.value)]
        return {
            "search_id": self.search_id,
            "variable": self.options.kind,
            "limits": [limit.text() for limit in self.limits],
            "best": _plain(best.value) if best is not None else None,
            "best_run_id": best.run_id if best is not None else None,
            "best_figures": best.figures if best is not None else None,
            "smallest_failing": _plain(min(p.value for p in failing)) if failing else None,
            "status": self.status,
            "message": self.message,
            "start": _plain(self.options.start), "maximum": _plain(self.options.maximum),
            "max_runs": self.options.max_runs,
            "elapsed_s": round(self.elapsed_s, 3),
            "runs": [probe.to_dict() for probe in self.probes],
        }

    def document(self) -> dict[str, Any]:
        """The whole ``bench --sla --json`` document: the last run's fields, every run's
        result entry (by load), and ``sla``."""
        base: dict[str, Any] = dict(self.runs[-1].document) if self.runs else {}
        entries = sorted(((r.document["results"][0], p.value) for r, p in
                          zip(self.runs, self.probes, strict=False)
                          if r.document.get("results")), key=lambda pair: pair[1])
        base.update({"run_id": self.search_id, "results": [entry for entry, _ in entries],
                     "run_ids": [r.run_id for r in self.runs], "sla": self.sla_block()})
        return base


_MESSAGES = {
    "done": "the boundary lies between {best} (meets) and {fail} (does not)",
    "maximum": "the limits still hold at the largest load allowed ({best}); raise --sla-max",
    "none": "even the smallest load ({fail}) misses the limits",
    "runs": "stopped after {runs} runs; {best} is the largest load that met the limits",
}


def run_sla_search(config: BenchConfig, limits: Sequence[Limit], options: SlaOptions, *,
                   burstiness: float = 1.0,
                   progress: Callable[[LevelProgress], None] | None = None,
                   on_run: Callable[[BenchResult, LoadProbe], None] | None = None) -> SlaResult:
    """Search (see the module's docstring); ``on_run`` gets each run as it ends (to store it).

    A :class:`ServewiseError` on the first run is raised (a bad URL, an unknown model); on a
    later one it ends the search with ``status`` ``error``, the runs so far kept. Ctrl-C ends
    it with ``interrupted``.
    """
    if options.max_runs < 2:
        raise UsageError("an SLA search needs at least 2 runs", hint="pass --sla-runs 8")
    if not options.minimum <= options.start <= options.maximum:
        raise UsageError(f"the start {options.start:g} is outside {options.minimum:g}.."
                         f"{options.maximum:g}", hint="lower the start or raise --sla-max")
    strategy = SlaStrategy(options)
    result = SlaResult(time.strftime("sla-%Y%m%d-%H%M%S-") + secrets.token_hex(3),
                       tuple(limits), options)
    started = time.monotonic()
    try:
        while (value := strategy.next_value()) is not None:
            level = LoadLevel(options.kind, value, burstiness)
            try:
                run = run_bench(replace(config, levels=(level,)), progress)
            except ServewiseError as error:
                if not result.probes:
                    raise
                result.status, result.message = "error", f"the run at {value:g}: {error.message}"
                break
            entries = run.document.get("results") or []
            if not entries:
                result.status = "error"
                result.message = f"the run at {value:g} ended without a result (" + str(
                    run.document.get("stopped") or "no level finished") + ")"
                break
            meets, ratio, figures, violations = judge(entries[0], limits)
            probe = LoadProbe(value, meets, ratio, run.run_id, figures, tuple(violations),
                          int(entries[0].get("completed") or 0),
                          int(entries[0].get("failed") or 0))
            strategy.record(probe)
            result.probes.append(probe)
            result.runs.append(run)
            if on_run is not None:
                on_run(run, probe)
        else:
            result.status = strategy.status
    except KeyboardInterrupt:
        result.status, result.message = "interrupted", "interrupted; the finished runs are kept"
    result.elapsed_s = time.monotonic() - started
    if not result.message:
        best = result.best
        failing = [p.value for p in result.probes if not p.meets and (
            best is None or p.value > best.value)]
        result.message = _MESSAGES.get(result.status, result.status).format(
            best=f"{best.value:g}" if best else "none",
            fail=f"{min(failing):g}" if failing else "none", runs=len(result.probes))
    return result
