"""``servewise bisect``: find the build where support for a GPU was lost (or gained).

A *series* is an ordered list of builds: a repository's tags by created date, a
package's versions on an index by version order, or files in the order given. The
*predicate* judges one build: the kernel gate for ``--gpu`` (with ``--require`` and
``--model``), or, with ``--jit-arch``, whether the JIT libraries dispatch to an arch
(the seed's ``strings | grep sm120_`` check). Both ends are judged, then the middle
of the remaining range, until two neighbours differ: at most ``ceil(log2(n - 1)) + 2``
builds are read. Layers and files shared by builds are read once (the store, and a
memory cache when there is no store); the result counts what was read and what was
served from cache.

The evidence compares the two neighbours library by library: which arch each one
lost or gained (SASS, PTX, JIT dispatch, as ``servewise diff`` computes it) and the
library's provenance in both.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from servewise.archs import Arch
from servewise.errors import UsageError
from servewise.inspect.diff import diff_library, pair_libraries
from servewise.inspect.engine_version import engine_version
from servewise.inspect.gate import GateResult, gate, is_jit, matches_require
from servewise.inspect.report import BuildReport, LibraryReport
from servewise.inspect.scan import scan_build
from servewise.knowledge.gpus import Gpu
from servewise.knowledge.libraries import load_library_table
from servewise.sources import Source, SourceOptions
from servewise.store import Store


@dataclass(frozen=True)
class Candidate:
    """One build of a series."""

    label: str
    """Tag, version or path, as the user knows it."""
    ref: str
    """A REF that names exactly this build (``repo@digest``, ``pypi:NAME==V``, a path)."""
    created: str | None = None
    aliases: tuple[str, ...] = ()
    """Other labels of the same build (tags pointing at the same digest)."""
    open: Callable[[], Source] | None = field(default=None, compare=False, repr=False)
    """How to open it without resolving ``ref`` again; ``None``: open ``ref``."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"label": self.label, "ref": self.ref, "created": self.created,
                "aliases": list(self.aliases)}


@dataclass(frozen=True)
class Predicate:
    """What makes a build good."""

    gpu: Gpu | None = None
    require: tuple[str, ...] = ()
    model: str | None = None
    jit_arch: str | None = None

    def __post_init__(self) -> None:
        if self.gpu is None and self.jit_arch is None:
            raise UsageError("bisect needs --gpu NAME (the gate) or --jit-arch ARCH",
                             hint="e.g. --gpu rtx-pro-6000, or --jit-arch sm_120")
        if self.jit_arch is not None:
            Arch.parse(self.jit_arch)

    @property
    def arch(self) -> str | None:
        """``sm_NNN`` of ``--jit-arch``."""
        return Arch.parse(self.jit_arch).sass_name if self.jit_arch else None

    def describe(self) -> str:
        """One line for people."""
        if self.jit_arch is not None:
            which = ", ".join(self.require) if self.require else "every JIT library"
            return f"{which} dispatches to {self.arch}"
        assert self.gpu is not None
        extra = "".join(f" --require {r}" for r in self.require)
        extra += f" --model {self.model}" if self.model else ""
        return f"gate --gpu {self.gpu.id}{extra} passes"

    def judge(self, report: BuildReport) -> tuple[bool, str, GateResult | None]:
        """``(good, why, gate result)`` for one build."""
        if self.jit_arch is not None:
            return (*self._judge_jit(report), None)
        assert self.gpu is not None
        result = gate(report, self.gpu, require=self.require, model=self.model)
        if result.passed:
            return True, f"every required library supports {self.gpu.name}", result
        gaps = [f"{v.library_id or v.path}: {v.reason}" for v in result.verdicts
                if v.status == "error"]
        gaps += [f"{name}: not in the build ({why})" for name, why in result.absent]
        if result.no_verdict_reason is not None:
            gaps.insert(0, result.no_verdict_reason)
        return False, "; ".join(gaps) or "the gate failed", result

    def _judge_jit(self, report: BuildReport) -> tuple[bool, str]:
        arch = self.arch
        table = load_library_table()
        if self.require:
            judged = [lib for lib in report.libraries
                      if any(matches_require(name, None, lib) for name in self.require)]
            missing = [n for n in self.require
                       if not any(matches_require(n, None, lib) for lib in report.libraries)]
            if missing:
                return False, f"{', '.join(missing)}: not in the build"
        else:
            judged = []
            for lib in report.libraries:
                known = table.get(lib.provenance.library_id) if lib.provenance.library_id \
                    else None
                if is_jit(lib, known):
                    judged.append(lib)
            if not judged:
                return False, "no JIT library in the build"
        lacking = [lib.provenance.library_id or lib.path for lib in judged
                   if arch not in lib.dispatch]
        if lacking:
            return False, f"no {arch} dispatch in {', '.join(lacking)}"
        names = sum(len(lib.dispatch[arch or ""]) for lib in judged)
        return True, f"{names} {arch} dispatch names in {len(judged)} librar" + \
            ("y" if len(judged) == 1 else "ies")


@dataclass(frozen=True)
class BuildProbe:
    """One build judged."""

    index: int
    candidate: Candidate
    good: bool
    why: str
    report: BuildReport = field(repr=False)
    gate: GateResult | None = field(default=None, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            **self.candidate.to_dict(), "index": self.index, "good": self.good,
            "why": self.why, "units_read": self.report.units.read,
            "units_cached": self.report.units.cached, "unit_kind": self.report.units.kind,
            "bytes_read": self.report.scanned_bytes, "engine": _engine(self.report),
            "digest": self.report.metadata.get("digest"),
        }


def _engine(report: BuildReport) -> dict[str, Any] | None:
    engine = engine_version(report)
    return engine.to_dict() if engine else None


def _provenance(library: LibraryReport | None) -> dict[str, Any] | None:
    if library is None:
        return None
    p = library.provenance
    return {"path": library.path, "package": p.package, "package_version": p.package_version,
            "library_id": p.library_id, "bundled_version": p.bundled_version,
            "git_hashes": list(p.git_hashes)}


@dataclass(frozen=True)
class BoundaryChange:
    """How one library differs between the two neighbours of the boundary."""

    library: str
    """Known id, else path (also where several files of a build share the id)."""
    before: LibraryReport | None = field(repr=False)
    after: LibraryReport | None = field(repr=False)
    lost: dict[str, tuple[str, ...]]
    gained: dict[str, tuple[str, ...]]
    verdict_before: str | None = None
    verdict_after: str | None = None

    @property
    def summary(self) -> str:
        """One line: what was lost and gained."""
        if self.before is None:
            return "added"
        if self.after is None:
            return "removed"
        parts = [f"lost {kind} {', '.join(archs)}" for kind, archs in self.lost.items() if archs]
        parts += [f"gained {kind} {', '.join(archs)}" for kind, archs in self.gained.items()
                  if archs]
        return "; ".join(parts) or "provenance changed"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "library": self.library,
            "summary": self.summary,
            "lost": {k: list(v) for k, v in self.lost.items()},
            "gained": {k: list(v) for k, v in self.gained.items()},
            "verdict_before": self.verdict_before,
            "verdict_after": self.verdict_after,
            "before": _provenance(self.before),
            "after": _provenance(self.after),
        }


def _labels(*reports: BuildReport) -> Callable[[LibraryReport], str]:
    """How a library is named in the evidence: its known id, or its path where the id is
    missing or several files of one build share it (sgl-kernel's, FlashInfer's)."""
    shared: set[str] = set()
    for report in reports:
        seen: set[str] = set()
        for library in report.libraries:
            ident = library.provenance.library_id
            if ident is not None:
                (shared if ident in seen else seen).add(ident)

    def label(library: LibraryReport) -> str:
        ident = library.provenance.library_id
        return ident if ident is not None and ident not in shared else library.path

    return label


def _own(library: LibraryReport) -> tuple[str | None, tuple[str, ...]]:
    """The library's own version and commits, apart from its package's version."""
    p = library.provenance
    bundled = p.bundled_version if p.bundled_version != p.package_version else None
    return bundled, p.git_hashes


def compare(before: BuildProbe, after: BuildProbe) -> tuple[BoundaryChange, ...]:
    """Library by library, what changed across the boundary.

    Kept: libraries that lost or gained an arch, changed verdict, appeared or went,
    or whose own version or git hashes changed; first those whose verdict changed.
    """
    label = _labels(before.report, after.report)
    verdicts_before = {v.path: v for v in before.gate.verdicts} if before.gate else {}
    verdicts_after = {v.path: v for v in after.gate.verdicts} if after.gate else {}
    pairs = pair_libraries(list(before.report.libraries), list(after.report.libraries))
    changes: list[BoundaryChange] = []
    for a, b in pairs:
        either = a or b
        assert either is not None  # a pair has at least one side
        key = label(either)
        paired = diff_library(a, b)
        lost, gained = paired.lost, paired.gained
        va = verdicts_before.get(a.path) if a is not None else None
        vb = verdicts_after.get(b.path) if b is not None else None
        # A new package version alone moves every library of the package: not evidence.
        own = a is not None and b is not None and _own(a) != _own(b)
        same = (a is not None and b is not None and not any(lost.values())
                and not any(gained.values()) and not own
                and (va.verdict if va else None) == (vb.verdict if vb else None))
        if same:
            continue
        changes.append(BoundaryChange(key, a, b, lost, gained,
                                     va.verdict if va else None, vb.verdict if vb else None))

    def weight(change: BoundaryChange) -> tuple[int, str]:
        verdict_changed = change.verdict_before != change.verdict_after
        archs_changed = any(change.lost.values()) or any(change.gained.values())
        return (0 if verdict_changed else 1 if archs_changed else 2, change.library)

    return tuple(sorted(changes, key=weight))


@dataclass(frozen=True)
class BisectResult:
    """Where the predicate changes along the series, and the evidence."""

    series: tuple[Candidate, ...]
    predicate: str
    probes: tuple[BuildProbe, ...]
    before: BuildProbe | None
    """The last build with the first build's value."""
    after: BuildProbe | None
    """The first build with the other value."""
    changes: tuple[BoundaryChange, ...] = ()
    order: str = "as given"
    """How the series is ordered, oldest first (``by version``, ``by created date``, ...)."""
    notes: tuple[str, ...] = ()
    """What bisect decided on its own (a series turned round)."""

    @property
    def found(self) -> bool:
        """Whether the two ends differ (a boundary was found)."""
        return self.before is not None and self.after is not None

    @property
    def direction(self) -> str:
        """``lost`` (good then bad), ``gained`` (bad then good), or ``none``."""
        if not self.found:
            return "none"
        assert self.before is not None
        return "lost" if self.before.good else "gained"

    @property
    def builds_read(self) -> int:
        """Builds of which at least one unit (layer blob, file) was read, not served from cache."""
        return sum(1 for probe in self.probes if probe.report.units.read)

    @property
    def exit_code(self) -> int:
        """0 when a boundary was found, 1 when every judged build agreed."""
        return 0 if self.found else 1

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        def side(probe: BuildProbe | None) -> dict[str, Any] | None:
            return probe.to_dict() if probe else None

        good = self.before if self.direction == "lost" else self.after
        bad = self.after if self.direction == "lost" else self.before
        return {
            "predicate": self.predicate,
            "order": self.order,
            "notes": list(self.notes),
            "found": self.found,
            "direction": self.direction,
            "series": [c.to_dict() for c in self.series],
            "last_good": side(good if self.direction == "lost" else None),
            "first_bad": side(bad if self.direction == "lost" else None),
            "last_bad": side(bad if self.direction == "gained" else None),
            "first_good": side(good if self.direction == "gained" else None),
            "changes": [c.to_dict() for c in self.changes],
            "probes": [p.to_dict() for p in self.probes],
            "builds_judged": len(self.probes),
            "builds_read": self.builds_read,
            "units_read": sum(p.report.units.read for p in self.probes),
            "units_cached": sum(p.report.units.cached for p in self.probes),
            "bytes_read": sum(p.report.scanned_bytes for p in self.probes),
            "max_builds_judged": max_probes(len(self.series)),
        }


def max_probes(n: int) -> int:
    """How many builds a bisection of ``n`` judges at most: both ends, then halving."""
    return 2 + math.ceil(math.log2(n - 1)) if n > 2 else n


BuildProbeCallback = Callable[[BuildProbe], None]


def bisect(
    series: list[Candidate],
    predicate: Predicate,
    *,
    store: Store | None = None,
    progress: BuildProbeCallback | None = None,
    workers: int | None = None,
    order: str = "as given",
    options: SourceOptions | None = None,
) -> BisectResult:
    """Judge both ends of ``series`` (oldest first), then halve until two neighbours differ.

    With ``order="as given"``, the two ends are checked by what they hold (engine version,
    else created date): a series given newest first is turned round, and the result says so.
    """
    if len(series) < 2:
        raise UsageError(
            f"bisect needs at least two builds; the series has {len(series)}",
            hint="widen --match, or name builds further apart with --good and --bad",
            found=[c.label for c in series],
        )
    memory: dict[str, dict[str, Any]] = {}
    probes: dict[int, BuildProbe] = {}

    def judge(index: int) -> BuildProbe:
        if index not in probes:
            candidate = series[index]
            source = candidate.open() if candidate.open is not None else None
            report = scan_build(candidate.ref, store=store, source=source, memory=memory,
                                workers=workers, options=options)
            good, why, result = predicate.judge(report)
            probes[index] = BuildProbe(index, candidate, good, why, report, result)
            if progress:
                progress(probes[index])
        return probes[index]

    lo, hi = 0, len(series) - 1
    first, last = judge(lo), judge(hi)
    notes: list[str] = []
    if order == "as given":
        turned = _newest_first(first, last)
        if turned is not None:
            series = series[::-1]
            probes = {hi - i: replace(p, index=hi - i) for i, p in probes.items()}
            first, last = probes[lo], probes[hi]
            order = f"by {turned[0]}"
            notes.append(f"the builds were given newest first ({turned[1]}); judged oldest "
                         "first")
    before = after = None
    if first.good != last.good:
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if judge(mid).good == first.good:
                lo = mid
            else:
                hi = mid
        before, after = probes[lo], probes[hi]
    ordered = tuple(probes[i] for i in sorted(probes))
    changes = compare(before, after) if before and after else ()
    return BisectResult(tuple(series), predicate.describe(), ordered, before, after, changes,
                        order, tuple(notes))


def _age(probe: BuildProbe) -> tuple[str, Any] | None:
    """What says how old a judged build is: its engine version, else its created date."""
    found = engine_version(probe.report)
    if found is not None and found.engine_version is not None:
        return "engine version", found.engine_version
    created = probe.report.metadata.get("created") or probe.report.metadata.get("uploaded")
    return ("created date", str(created)) if created else None


def _newest_first(first: BuildProbe, last: BuildProbe) -> tuple[str, str] | None:
    """``(what, evidence)`` when the first build is newer than the last, else ``None``."""
    a, b = _age(first), _age(last)
    if a is None or b is None or a[0] != b[0] or not a[1] > b[1]:
        return None
    return a[0], f"{first.candidate.label} has {a[0]} {a[1]}, {last.candidate.label} {b[1]}"


def between(series: list[Candidate], good: str | None, bad: str | None) -> list[Candidate]:
    """The part of ``series`` from ``good`` to ``bad`` (either order), by label or alias."""
    if good is None and bad is None:
        return series

    def where(label: str, option: str) -> int:
        for index, candidate in enumerate(series):
            if label in (candidate.label, candidate.ref, *candidate.aliases):
                return index
        shown = ", ".join(c.label for c in series[:8]) + (" …" if len(series) > 8 else "")
        raise UsageError(f"{option} {label}: not in the series ({shown})",
                         hint="check the name; `servewise tags REPO` lists the tags",
                         found=label)

    start = where(good, "--good") if good is not None else 0
    end = where(bad, "--bad") if bad is not None else len(series) - 1
    if start == end:
        raise UsageError("--good and --bad name the same build", found=good,
                         hint="name two different builds")
    low, high = min(start, end), max(start, end)
    return series[low : high + 1]


__all__ = [
    "BisectResult",
    "BoundaryChange",
    "BuildProbe",
    "Candidate",
    "Predicate",
    "between",
    "bisect",
    "compare",
    "max_probes",
]
