"""What changed between two engine builds, library by library.

:func:`diff_builds` takes two :class:`~servewise.inspect.report.BuildReport` (any REF
``scan_build`` reads: a file, folder, wheel, and whatever sources are added) and pairs
their libraries: by path (with site-packages prefixes removed, so a wheel pairs with an
image), then by module name across Python versions (``_C.cpython-311…`` with
``_C.cpython-312…``), then by library identity (vLLM's ``_C.abi3.so`` renamed
``_C_stable_libtorch.abi3.so`` is the same library). For every pair it reports the SASS,
PTX and JIT-dispatch arch sets gained and lost, whether the GPU code entries changed,
and what changed in the library's own provenance (bundled version, embedded version, git
hashes, SONAME); unpaired libraries are added or removed. Distributions whose version
changed are listed once for the build, with the engine version of each side.

A library is *unchanged* when its size, its GPU code entries, its dispatch names and its
own provenance are all equal: servewise compares what it read, not a hash of every byte.

Exit status, like ``diff(1)``: 0 when the builds have the same GPU coverage (every
library's arch sets equal, no library with GPU code added or removed), 1 when they
differ, 2 for bad input. With a GPU the question narrows to that GPU: 1 only when a
library's gate verdict for it differs.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from servewise.inspect.engine_core import is_cuda_bearing
from servewise.inspect.engine_version import BuildEngine, engine_version
from servewise.inspect.gate import classify, cuda_cc
from servewise.inspect.report import BuildReport, LibraryReport, sort_archs
from servewise.knowledge.engines import EngineTable
from servewise.knowledge.gpus import Gpu
from servewise.knowledge.libraries import LibraryTable, load_library_table
from servewise.knowledge.patterns import normalize_path

STATUSES = ("added", "removed", "changed", "unchanged")
"""What happened to a library between build A and build B."""

ARCH_KINDS = ("sass", "ptx", "jit_dispatch")
"""The arch sets compared per library: compiled SASS, PTX, and JIT dispatch."""

_EXTENSION_RE = re.compile(r"\.(?:cpython-\d+[a-z]*-[^/.]+\.|abi3\.)?so(?:\.\d+)*$")
#: Provenance compared per library. The distribution's own version is compared once per
#: build (:attr:`BuildDiff.packages`): when every file of a package moves with it, that is
#: one change, not one per library.
_PROVENANCE_FIELDS = ("package", "bundled_version", "library_version", "git_hashes")


@dataclass(frozen=True)
class ArchChange:
    """One arch set in build A and in build B."""

    a: tuple[str, ...]
    b: tuple[str, ...]

    @property
    def gained(self) -> tuple[str, ...]:
        """Archs B has and A lacks."""
        return sort_archs(set(self.b) - set(self.a))

    @property
    def lost(self) -> tuple[str, ...]:
        """Archs A has and B lacks."""
        return sort_archs(set(self.a) - set(self.b))

    @property
    def changed(self) -> bool:
        """Whether the sets differ."""
        return set(self.a) != set(self.b)

    def to_dict(self) -> dict[str, list[str]]:
        """JSON-ready form."""
        return {"a": list(self.a), "b": list(self.b), "gained": list(self.gained),
                "lost": list(self.lost)}


@dataclass(frozen=True)
class LibraryDiff:
    """One library of either build, and what happened to it."""

    status: str
    """One of :data:`STATUSES`."""
    a: LibraryReport | None
    """The library in build A (``None`` when added)."""
    b: LibraryReport | None
    """The library in build B (``None`` when removed)."""
    verdicts: tuple[str | None, str | None] | None = None
    """The gate verdict in A and B for the GPU asked about (``None`` without one)."""

    @property
    def path(self) -> str:
        """The path in B, or in A for a removed library."""
        library = self.b or self.a
        assert library is not None
        return library.path

    @property
    def library_id(self) -> str | None:
        """The known library it is (B's identity first)."""
        for library in (self.b, self.a):
            if library is not None and library.provenance.library_id:
                return library.provenance.library_id
        return None

    @property
    def renamed(self) -> bool:
        """Paired by identity or module name although the paths differ."""
        return (self.a is not None and self.b is not None
                and normalize_path(self.a.path) != normalize_path(self.b.path))

    def _archs(self, which: str) -> ArchChange:
        def get(library: LibraryReport | None) -> tuple[str, ...]:
            if library is None:
                return ()
            if which == "jit_dispatch":
                return tuple(library.dispatch)
            return tuple(getattr(library.scan, which))

        return ArchChange(get(self.a), get(self.b))

    @property
    def sass(self) -> ArchChange:
        """SASS archs in A and B."""
        return self._archs("sass")

    @property
    def ptx(self) -> ArchChange:
        """PTX archs in A and B."""
        return self._archs("ptx")

    @property
    def jit_dispatch(self) -> ArchChange:
        """JIT-dispatch archs in A and B."""
        return self._archs("jit_dispatch")

    @property
    def lost(self) -> dict[str, tuple[str, ...]]:
        """Per kind of :data:`ARCH_KINDS`, the archs A has and B lacks."""
        return {kind: self._archs(kind).lost for kind in ARCH_KINDS}

    @property
    def gained(self) -> dict[str, tuple[str, ...]]:
        """Per kind of :data:`ARCH_KINDS`, the archs B has and A lacks."""
        return {kind: self._archs(kind).gained for kind in ARCH_KINDS}

    @property
    def coverage_changed(self) -> bool:
        """Whether its GPU coverage differs: an arch set changed, or it came/went with GPU code."""
        if self.a is None or self.b is None:
            library = self.a or self.b
            return library is not None and is_cuda_bearing(library)
        return self.sass.changed or self.ptx.changed or self.jit_dispatch.changed

    @property
    def gpu_code_changed(self) -> bool:
        """Whether its GPU code entries (kind, arch, size, compression) or dispatch names differ."""
        if self.a is None or self.b is None:
            return self.coverage_changed
        return _entries(self.a) != _entries(self.b) or self.a.dispatch != self.b.dispatch

    @property
    def provenance(self) -> dict[str, tuple[Any, Any]]:
        """Provenance fields that differ: field → (A's value, B's value)."""
        if self.a is None or self.b is None:
            return {}
        changes: dict[str, tuple[Any, Any]] = {}
        for name in _PROVENANCE_FIELDS:
            before, after = getattr(self.a.provenance, name), getattr(self.b.provenance, name)
            if name == "bundled_version" and _own_version(self.a) and _own_version(self.b):
                continue  # the package's own __version__: compared with the package
            if before != after:
                changes[name] = (before, after)
        sonames = [lib.scan.dynamic.soname if lib.scan.dynamic else None
                   for lib in (self.a, self.b)]
        if sonames[0] != sonames[1]:
            changes["soname"] = (sonames[0], sonames[1])
        return changes

    @property
    def verdict_changed(self) -> bool:
        """Whether the gate verdict for the GPU differs (False without a GPU)."""
        if self.verdicts is None:
            return False
        before, after = self.verdicts
        if before is None or after is None:  # added or removed: matters when it has GPU code
            return (before or after) not in (None, "no-gpu-code")
        return before != after

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "status": self.status,
            "path": self.path,
            "path_a": self.a.path if self.a else None,
            "path_b": self.b.path if self.b else None,
            "library_id": self.library_id,
            "renamed": self.renamed,
            "size_bytes_a": self.a.size if self.a else None,
            "size_bytes_b": self.b.size if self.b else None,
            "sass": self.sass.to_dict(),
            "ptx": self.ptx.to_dict(),
            "jit_dispatch": self.jit_dispatch.to_dict(),
            "coverage_changed": self.coverage_changed,
            "gpu_code_changed": self.gpu_code_changed,
            "provenance": {k: {"a": _plain(a), "b": _plain(b)}
                           for k, (a, b) in self.provenance.items()},
            "verdict": ({"a": self.verdicts[0], "b": self.verdicts[1]}
                        if self.verdicts is not None else None),
        }


def _own_version(library: LibraryReport) -> bool:
    """Whether the version beside a library is its distribution's own (not a bundled one)."""
    provenance = library.provenance
    return provenance.bundled_version is None or (
        provenance.bundled_version == provenance.package_version)


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def _entries(library: LibraryReport) -> Counter[tuple[str, str, int, str]]:
    return Counter((e.kind, e.arch, e.stored_bytes, e.compression) for e in library.scan.entries)


@dataclass(frozen=True)
class BuildDiff:
    """Two builds compared."""

    a: BuildReport
    b: BuildReport
    libraries: tuple[LibraryDiff, ...]
    """Every library of either build, in B's path order (removed ones at their A path)."""
    engine_a: BuildEngine | None
    engine_b: BuildEngine | None
    gpu: Gpu | None = None
    """The GPU verdicts were compared for, if any."""

    @property
    def packages(self) -> tuple[tuple[str, str | None, str | None], ...]:
        """Distributions added, removed or changed in version: (name, A's version, B's)."""
        before, after = dict(self.a.packages), dict(self.b.packages)
        return tuple(
            (name, before.get(name), after.get(name))
            for name in sorted(before.keys() | after.keys())
            if before.get(name) != after.get(name)
        )

    @property
    def coverage_changed(self) -> bool:
        """Whether any library's GPU coverage differs."""
        return any(change.coverage_changed for change in self.libraries)

    @property
    def verdicts_changed(self) -> bool | None:
        """Whether any verdict for the GPU differs (``None`` without a GPU)."""
        if self.gpu is None:
            return None
        return any(change.verdict_changed for change in self.libraries)

    @property
    def differ(self) -> bool:
        """What the exit status says: the verdicts differ (with a GPU), else the coverage."""
        return bool(self.verdicts_changed) if self.gpu is not None else self.coverage_changed

    @property
    def exit_code(self) -> int:
        """0 when the builds are the same for GPU code (or the GPU), 1 when they differ."""
        return 1 if self.differ else 0

    def counts(self) -> dict[str, int]:
        """How many libraries have each status."""
        counted = Counter(change.status for change in self.libraries)
        return {status: counted.get(status, 0) for status in STATUSES}

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form with stable keys."""
        def side(report: BuildReport, engine: BuildEngine | None) -> dict[str, Any]:
            return {"ref": report.ref, "source_kind": report.source_kind,
                    "libraries": len(report.libraries),
                    "engine": engine.to_dict() if engine else None}

        gained = sorted({a for c in self.libraries for archs in c.gained.values()
                         for a in archs})
        lost = sorted({a for c in self.libraries for archs in c.lost.values() for a in archs})
        return {
            "a": side(self.a, self.engine_a),
            "b": side(self.b, self.engine_b),
            "engine_changed": (self.engine_a.version if self.engine_a else None)
            != (self.engine_b.version if self.engine_b else None),
            "gpu": ({"id": self.gpu.id, "name": self.gpu.name,
                     "compute_capability": str(self.gpu.cc)} if self.gpu else None),
            "coverage_changed": self.coverage_changed,
            "verdicts_changed": self.verdicts_changed,
            "differ": self.differ,
            "exit_code": self.exit_code,
            "summary": {**self.counts(), "archs_gained": gained, "archs_lost": lost},
            "packages": [{"name": name, "version_a": va, "version_b": vb}
                         for name, va, vb in self.packages],
            "libraries": [change.to_dict() for change in self.libraries],
        }


def _module_key(path: str) -> str:
    """A library's path without its interpreter tag: ``vllm/_C.cpython-312-….so`` → ``vllm/_C``."""
    return _EXTENSION_RE.sub("", normalize_path(path))


def pair_libraries(a: list[LibraryReport], b: list[LibraryReport]
                   ) -> list[tuple[LibraryReport | None, LibraryReport | None]]:
    """The libraries of two builds side by side: by path, then by module (the interpreter
    tag aside), then a known library renamed; ``None`` where one side has no partner."""
    pairs: list[tuple[LibraryReport | None, LibraryReport | None]] = []
    left = list(a)
    right = list(b)
    keys: tuple[Callable[[LibraryReport], str], ...] = (
        lambda lib: normalize_path(lib.path), lambda lib: _module_key(lib.path),
    )
    for key in keys:
        by_key: dict[str, list[LibraryReport]] = {}
        for library in right:
            by_key.setdefault(key(library), []).append(library)
        still: list[LibraryReport] = []
        for library in left:
            match = by_key.get(key(library))
            if match:
                partner = match.pop(0)
                right.remove(partner)
                pairs.append((library, partner))
            else:
                still.append(library)
        left = still
    # Renamed: the same known library on both sides, paired by the most similar path.
    for library in list(left):
        ident = library.provenance.library_id
        candidates = [lib for lib in right if ident and lib.provenance.library_id == ident]
        if not candidates:
            continue
        partner = max(candidates, key=lambda other: difflib.SequenceMatcher(
            None, normalize_path(library.path), normalize_path(other.path)).ratio())
        right.remove(partner)
        left.remove(library)
        pairs.append((library, partner))
    pairs += [(library, None) for library in left]
    pairs += [(None, library) for library in right]
    return pairs


def diff_library(a: LibraryReport | None, b: LibraryReport | None,
                 verdicts: tuple[str | None, str | None] | None = None) -> LibraryDiff:
    """One library in build A (``a``) and build B (``b``), ``None`` on the side that lacks
    it: added, removed, unchanged (size, GPU code entries, dispatch names and own provenance
    equal) or changed."""
    if a is None:
        return LibraryDiff("added", a, b, verdicts)
    if b is None:
        return LibraryDiff("removed", a, b, verdicts)
    change = LibraryDiff("changed", a, b, verdicts)
    if a.size == b.size and not change.gpu_code_changed and not change.provenance:
        return LibraryDiff("unchanged", a, b, verdicts)
    return change


def diff_builds(
    a: BuildReport,
    b: BuildReport,
    *,
    gpu: Gpu | None = None,
    libraries: LibraryTable | None = None,
    engines: EngineTable | None = None,
) -> BuildDiff:
    """Compare build ``a`` with build ``b``; with ``gpu``, also each library's gate verdict."""
    table = libraries or load_library_table()
    changes: list[LibraryDiff] = []
    for before, after in pair_libraries(list(a.libraries), list(b.libraries)):
        verdicts = None
        if gpu is not None:
            verdicts = (_verdict(before, gpu, table), _verdict(after, gpu, table))
        changes.append(diff_library(before, after, verdicts))
    changes.sort(key=lambda change: normalize_path(change.path))
    return BuildDiff(a, b, tuple(changes), engine_version(a, engines), engine_version(b, engines),
                     gpu)


def _verdict(library: LibraryReport | None, gpu: Gpu, table: LibraryTable) -> str | None:
    if library is None:
        return None
    ident = library.provenance.library_id
    known = table.get(ident) if ident and ident in table else None
    return classify(library, cuda_cc(gpu), known)[0]


__all__ = [
    "ARCH_KINDS", "STATUSES", "ArchChange", "BuildDiff", "BuildEngine", "LibraryDiff",
    "diff_builds", "diff_library", "engine_version", "pair_libraries",
]
