"""Known libraries inside engine builds: what each is, what uses it, its intended archs.

The table ships as ``knowledge/data/libraries.toml``; a ``libraries.toml`` in
the user data folder adds entries or overrides shipped ones by ``id``.

A library is identified by several signals, each one optional in an entry and
none decisive alone (:meth:`LibraryTable.identify`): where it lies (``paths``,
regexes over the path), which distribution's ``RECORD`` lists it (``packages``),
which Python package folder holds it (``modules``), and what its bytes say —
the extension module it defines (``PyInit_<name>``, ``python_modules``), its
``SONAME`` (``sonames``), the namespaces of its exported symbols (``symbols``),
embedded version strings (``versions``) and JIT-dispatch names (``dispatch``).
Each match says which signals agreed::

    table = load_library_table()
    table.match("vllm/_C_stable_libtorch.abi3.so").id          # "vllm-core"
    table.identify(LibraryFacts("usr/lib/x86_64-linux-gnu/libnccl.so.2",
                                soname="libnccl.so.2")).signals  # ("soname",)
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servewise.archs import Arch
from servewise.errors import UsageError
from servewise.knowledge._load import (
    EntryReader,
    RawEntry,
    check_unique,
    load_table,
    shipped_entries,
)
from servewise.knowledge.patterns import (
    close_names,
    literal_prefix,
    module_folder,
    name_key,
    normalize_package,
    normalize_path,
    specificity,
    tails,
)

FILENAME = "libraries.toml"
TABLE = "library"

FIELDS = frozenset(
    {
        "id",
        "name",
        "paths",
        "packages",
        "role",
        "used_for",
        "intended_archs",
        "coverage_note",
        "jit",
        "core",
        "fallback",
        "source",
        "aliases",
        "modules",
        "python_modules",
        "sonames",
        "symbols",
        "versions",
        "dispatch",
    }
)
"""Fields a ``[[library]]`` entry may set."""

SIGNALS = (
    "path", "package", "folder", "python-module", "soname", "symbols", "version-string",
    "dispatch",
)
"""Identity signals, in the order they are reported."""

#: How much each signal weighs: what the bytes or the exact path say counts twice what the
#: surroundings (distribution, package folder) say.
_WEIGHTS = {
    "path": 2, "package": 1, "folder": 1, "python-module": 2, "soname": 2, "symbols": 2,
    "version-string": 2, "dispatch": 2,
}
#: Signals that name the library by themselves; ``package`` and ``folder`` only support.
_NAMING = frozenset(SIGNALS) - {"package", "folder"}

@dataclass(frozen=True)
class LibraryFacts:
    """What is known about one library file, for :meth:`LibraryTable.identify`."""

    path: str
    """Its path in the build (normalized by the table)."""
    package: str | None = None
    """The distribution whose ``RECORD`` lists it."""
    soname: str | None = None
    """Its ``DT_SONAME``."""
    python_modules: tuple[str, ...] = ()
    """Extension modules it defines (``PyInit_<name>``)."""
    namespaces: tuple[str, ...] = ()
    """Namespaces of its exported symbols."""
    versions: tuple[str, ...] = ()
    """Embedded ``NAME version X`` strings."""
    dispatch_names: tuple[str, ...] = ()
    """JIT-dispatch names found in it."""


@dataclass(frozen=True)
class _Prepared:
    """What every entry's signals look at, computed once per library file."""

    facts: LibraryFacts
    tails: tuple[str, ...]
    """Tails of the normalized path, longest first."""
    folder_tails: tuple[str, ...]
    """Tails of the dotted package folder."""
    module_tails: tuple[str, ...]
    """Tails of each qualified extension module name (folder + ``PyInit_`` name)."""
    package_key: str | None
    """The distribution name in PEP 503 form."""

    @classmethod
    def of(cls, facts: LibraryFacts) -> _Prepared:
        path = normalize_path(facts.path)
        folder = module_folder(path)
        qualified = [f"{folder}.{name}" if folder else name for name in facts.python_modules]
        return cls(
            facts,
            tuple(tails(path, "/")),
            tuple(tails(folder, ".")),
            tuple(tail for name in qualified for tail in tails(name, ".")),
            normalize_package(facts.package) if facts.package is not None else None,
        )


@dataclass(frozen=True)
class Identity:
    """A known library a file was identified as, and the signals that agreed."""

    library: KnownLibrary
    """The table entry."""
    signals: tuple[str, ...]
    """Which of :data:`SIGNALS` matched, in that order."""
    version: str | None = None
    """The version an embedded version string gives (the entry's ``versions`` group)."""


@dataclass(frozen=True)
class KnownLibrary:
    """One known library of engine builds."""

    id: str
    name: str
    paths: tuple[re.Pattern[str], ...]
    packages: tuple[str, ...]
    role: str
    used_for: tuple[str, ...]
    intended_archs: tuple[str, ...]
    coverage_note: str
    jit: bool
    core: bool
    fallback: str
    sources: tuple[str, ...]
    aliases: tuple[str, ...] = ()
    modules: tuple[str, ...] = ()
    python_modules: tuple[re.Pattern[str], ...] = ()
    sonames: tuple[re.Pattern[str], ...] = ()
    symbols: tuple[re.Pattern[str], ...] = ()
    versions: tuple[re.Pattern[str], ...] = ()
    dispatch: tuple[re.Pattern[str], ...] = ()

    @property
    def source(self) -> str:
        """The first (main) source of this entry."""
        return self.sources[0]

    @property
    def archs(self) -> tuple[Arch, ...]:
        """``intended_archs`` parsed (PTX entries and SASS entries alike)."""
        return tuple(Arch.parse(text) for text in self.intended_archs)

    @property
    def sass_archs(self) -> tuple[Arch, ...]:
        """The intended SASS (``sm_*``) archs."""
        return tuple(Arch.parse(t) for t in self.intended_archs if t.startswith("sm_"))

    @property
    def ptx_archs(self) -> tuple[Arch, ...]:
        """The intended PTX (``compute_*``) archs."""
        return tuple(Arch.parse(t) for t in self.intended_archs if t.startswith("compute_"))

    def _path_match(self, prepared: _Prepared) -> tuple[int, re.Pattern[str]] | None:
        for tail in prepared.tails:
            for pattern, prefix in self._path_prefixes:
                if tail.startswith(prefix) and pattern.fullmatch(tail):
                    return len(tail), pattern
        return None

    def _in_module(self, prepared: _Prepared) -> bool:
        return any(
            tail == module or tail.startswith(module + ".")
            for tail in prepared.folder_tails
            for module in self.modules
        )

    def _signals(
        self, prepared: _Prepared
    ) -> tuple[tuple[str, ...], str | None, tuple[int, re.Pattern[str]] | None]:
        """The signals that agree (in :data:`SIGNALS` order), a version, the path match."""
        facts = prepared.facts
        found: list[str] = []
        path = self._path_match(prepared) if self.paths else None
        if path is not None:
            found.append("path")
        if prepared.package_key is not None and prepared.package_key in self._package_keys:
            found.append("package")
        if self.modules and self._in_module(prepared):
            found.append("folder")
        if self.python_modules and prepared.module_tails and any(
            pattern.fullmatch(tail)
            for tail in prepared.module_tails for pattern in self.python_modules
        ):
            found.append("python-module")
        if facts.soname and self.sonames and any(p.fullmatch(facts.soname) for p in self.sonames):
            found.append("soname")
        if facts.namespaces and self.symbols and any(
            p.fullmatch(n) for n in facts.namespaces for p in self.symbols
        ):
            found.append("symbols")
        version = None
        matches = [m for t in facts.versions for p in self.versions if (m := p.fullmatch(t))]
        if matches:
            found.append("version-string")
            version = next((m["version"] for m in matches if m.groupdict().get("version")), None)
        if facts.dispatch_names and self.dispatch and any(
            p.fullmatch(n) for n in facts.dispatch_names for p in self.dispatch
        ):
            found.append("dispatch")
        return tuple(found), version, path

    @functools.cached_property
    def _package_keys(self) -> frozenset[str]:
        return frozenset(normalize_package(name) for name in self.packages)

    @functools.cached_property
    def _path_prefixes(self) -> tuple[tuple[re.Pattern[str], str], ...]:
        """Each path pattern with the literal text every tail it matches starts with."""
        return tuple((pattern, literal_prefix(pattern.pattern)) for pattern in self.paths)

    def to_dict(self) -> dict[str, Any]:
        """The library as JSON-ready data."""
        return {
            "id": self.id,
            "name": self.name,
            "paths": [pattern.pattern for pattern in self.paths],
            "packages": list(self.packages),
            "role": self.role,
            "used_for": list(self.used_for),
            "intended_archs": list(self.intended_archs),
            "coverage_note": self.coverage_note,
            "jit": self.jit,
            "core": self.core,
            "fallback": self.fallback,
            "sources": list(self.sources),
            "aliases": list(self.aliases),
            "modules": list(self.modules),
            "python_modules": [p.pattern for p in self.python_modules],
            "sonames": [p.pattern for p in self.sonames],
            "symbols": [p.pattern for p in self.symbols],
            "versions": [p.pattern for p in self.versions],
            "dispatch": [p.pattern for p in self.dispatch],
        }


class LibraryTable:
    """The known libraries, matched by path pattern and provenance."""

    def __init__(self, libraries: Iterable[KnownLibrary]) -> None:
        self._libraries = tuple(libraries)
        self._by_id = {library.id: library for library in self._libraries}

    def all(self) -> tuple[KnownLibrary, ...]:
        """Every known library, in table order."""
        return self._libraries

    def ids(self) -> tuple[str, ...]:
        """Every library id, in table order."""
        return tuple(self._by_id)

    def __len__(self) -> int:
        return len(self._libraries)

    def __iter__(self) -> Iterator[KnownLibrary]:
        return iter(self._libraries)

    def __contains__(self, ident: object) -> bool:
        return ident in self._by_id

    def has(self, ident: str) -> bool:
        """Whether ``ident`` is a known library id."""
        return ident in self._by_id

    def get(self, ident: str) -> KnownLibrary:
        """The library with id ``ident``; an unknown id raises :class:`UsageError`."""
        library = self._by_id.get(ident)
        if library is None:
            raise UsageError(
                f"unknown library id {ident!r}; known: {', '.join(self._by_id)}",
                hint="library ids are listed in libraries.toml; add your own in "
                "$SERVEWISE_DATA_DIR/libraries.toml (default ~/.config/servewise/)",
                found=ident,
                known=list(self._by_id),
            )
        return library

    def match(self, path: str, package: str | None = None) -> KnownLibrary | None:
        """The known library a file path belongs to, by path and package alone, or None.

        ``path`` is relative to site-packages or the build root, with ``/``;
        a path inside ``site-packages/`` or ``dist-packages/`` is cut after
        the last of those. Tails of the path are tried too, so
        ``opt/venv/x/vllm/_C.abi3.so`` still matches. See :meth:`identify`.
        """
        found = self.identify(LibraryFacts(path, package))
        return found.library if found else None

    def identify(self, facts: LibraryFacts) -> Identity | None:
        """The known library ``facts`` describe, with the signals that agreed, or None.

        Every entry is scored by its matching signals (path and content signals
        weigh 2, the distribution, the package folder and a catch-all path
        pattern 1). A library is named
        only when a path or content signal matches, or both the distribution and
        the package folder do. The highest score wins; then the longest matching
        path tail, the most specific path pattern, and table order.
        """
        prepared = _Prepared.of(facts)
        best: tuple[tuple[int, int, int, int], Identity] | None = None
        for order, library in enumerate(self._libraries):
            signals, version, path = library._signals(prepared)
            if not signals:
                continue
            named = bool(_NAMING.intersection(signals)) or {"package", "folder"} <= set(signals)
            if not named:
                continue
            score = sum(_WEIGHTS[s] for s in signals if s != "path")
            tail = spec = 0
            if path is not None:
                # A catch-all pattern (one with ".*", such as ^sgl_kernel/.*\.so$) only says
                # which package's folder the file is in: it weighs like the folder signal.
                score += 1 if ".*" in path[1].pattern else 2
                tail, spec = path[0], specificity(path[1].pattern)
            rank = (score, tail, spec, -order)
            if best is None or rank > best[0]:
                best = (rank, Identity(library, signals, version))
        return best[1] if best else None

    def resolve(self, name: str) -> KnownLibrary | None:
        """The library whose id, alias or display name is ``name`` (case and ``-``/``_`` aside)."""
        if name in self._by_id:
            return self._by_id[name]
        key = name_key(name)
        for library in self._libraries:
            if key in {name_key(n) for n in (library.id, library.name, *library.aliases)}:
                return library
        return None

    def closest(self, name: str) -> tuple[str, ...]:
        """Known ids and aliases that look like ``name``.

        Edit-distance similarity of the compared keys (:func:`name_key`), best
        first; a candidate that contains the name (or is contained in it) counts
        as close too.
        """
        pool = [n for library in self._libraries for n in (library.id, *library.aliases)]
        return close_names(name, pool)


def library_from_entry(entry: RawEntry) -> KnownLibrary:
    """Validate one ``[[library]]`` entry and build its :class:`KnownLibrary`."""
    reader = EntryReader(entry, FIELDS)
    archs = reader.strings("intended_archs")
    for text in archs:
        if re.fullmatch(r"(sm|compute)_\d{2,3}[af]?", text) is None:
            raise reader.error(
                "intended_archs",
                "not an arch in NVIDIA spelling",
                expected="sm_NN[a|f] or compute_NN[a|f]",
                found=text,
            )
        Arch.parse(text)
    signals = {
        field: reader.regexes(field, required=False)
        for field in ("paths", "python_modules", "sonames", "symbols", "versions", "dispatch")
    }
    modules = reader.strings("modules", required=False)
    for module in modules:
        if re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*", module) is None:
            raise reader.error("modules", "not a dotted Python package name", found=module)
    if not modules and not any(signals.values()):
        raise reader.error(
            "paths",
            "an entry needs at least one identity signal",
            expected="paths, modules, python_modules, sonames, symbols, versions or dispatch",
        )
    return KnownLibrary(
        id=reader.string("id"),
        name=reader.string("name"),
        paths=signals["paths"],
        packages=reader.strings("packages", non_empty=True),
        role=reader.string("role"),
        used_for=reader.strings("used_for"),
        intended_archs=archs,
        coverage_note=reader.string("coverage_note"),
        jit=reader.boolean("jit", default=False),
        core=reader.boolean("core", default=False),
        fallback=reader.string("fallback"),
        sources=reader.sources(),
        aliases=reader.strings("aliases", required=False),
        modules=modules,
        python_modules=signals["python_modules"],
        sonames=signals["sonames"],
        symbols=signals["symbols"],
        versions=signals["versions"],
        dispatch=signals["dispatch"],
    )


def _build(entries: list[RawEntry]) -> LibraryTable:
    check_unique(entries)
    return LibraryTable(library_from_entry(entry) for entry in entries)


@functools.cache
def shipped_library_table() -> LibraryTable:
    """The shipped library table alone (read once per process)."""
    return _build(list(shipped_entries(FILENAME, TABLE)))


def load_library_table(user_dir: Path | None = None) -> LibraryTable:
    """The shipped library table plus ``libraries.toml`` from the user data folder.

    ``user_dir`` defaults to ``$SERVEWISE_DATA_DIR`` or ``~/.config/servewise``.
    The shipped part is read once; a bad entry raises
    :class:`~servewise.knowledge._load.DataFileError`.
    """
    return load_table(FILENAME, TABLE, user_dir, shipped_library_table, _build)


__all__ = [
    "FIELDS", "SIGNALS", "Identity", "KnownLibrary", "LibraryFacts", "LibraryTable",
    "close_names", "library_from_entry", "literal_prefix", "load_library_table", "name_key",
    "normalize_package", "normalize_path", "shipped_library_table", "specificity",
]
