"""Known libraries inside engine builds: what each is, what uses it, its intended archs.

The table ships as ``knowledge/data/libraries.toml``; a ``libraries.toml`` in
the user data folder adds entries or overrides shipped ones by ``id``.
Libraries are recognised by path patterns and provenance (the distribution
that ships them), never by one release's exact file names::

    table = load_library_table()
    table.match("vllm/_C_stable_libtorch.abi3.so").id          # "vllm-core"
    table.match("/usr/local/lib/python3.12/dist-packages/vllm/_C.abi3.so").id   # "vllm-core"
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
    merge_by_id,
    shipped_entries,
    user_entries,
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
    }
)
"""Fields a ``[[library]]`` entry may set."""

_PREFIX = re.compile(r"^.*(?:site|dist)-packages/")
_META = set(".^$*+?{}()|")


def normalize_path(path: str) -> str:
    """A library path as the table matches it.

    Backslashes become ``/``; everything up to and including the last
    ``site-packages/`` or ``dist-packages/`` is dropped; so are a leading
    ``./`` and ``/``.
    """
    text = path.replace("\\", "/")
    text = _PREFIX.sub("", text)
    while text.startswith("./"):
        text = text[2:]
    return text.lstrip("/")


def normalize_package(name: str) -> str:
    """A distribution name in PEP 503 form (``sgl_kernel`` → ``sgl-kernel``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def specificity(pattern: str) -> int:
    """How specific a path regex is: the least number of literal characters it requires.

    Character classes, ``.`` and escapes such as ``\\d`` count nothing; an
    escaped literal (``\\.``) counts one; an optional item (``?``, ``*``,
    ``{0,…}``) counts nothing; an alternation counts its least branch.
    """
    value, _ = _min_literals(pattern, 0)
    return value


def _min_literals(pattern: str, index: int) -> tuple[int, int]:
    """Least literal count of the sequence starting at ``index``, up to ``)`` or the end."""
    branches: list[int] = []
    total = 0
    while index < len(pattern):
        char = pattern[index]
        if char == ")":
            break
        if char == "|":
            branches.append(total)
            total = 0
            index += 1
            continue
        if char == "\\" and index + 1 < len(pattern):
            item = 0 if pattern[index + 1].isalnum() else 1
            index += 2
        elif char == "[":
            end = pattern.find("]", index + 2)
            index = len(pattern) if end < 0 else end + 1
            item = 0
        elif char == "(":
            index += 1
            if pattern.startswith("?:", index):
                index += 2
            item, index = _min_literals(pattern, index)
            index += 1  # the closing parenthesis
        else:
            item = 0 if char in _META else 1
            index += 1
        if index < len(pattern) and pattern[index] in "?*+{":
            quantifier = pattern[index]
            if quantifier == "{":
                end = pattern.find("}", index)
                end = len(pattern) - 1 if end < 0 else end
                if re.match(r"\{0*(,|\})", pattern[index:]) is not None:
                    item = 0
                index = end + 1
            else:
                if quantifier in "?*":
                    item = 0
                index += 1
            if index < len(pattern) and pattern[index] in "?+":
                index += 1  # lazy or possessive
        total += item
    branches.append(total)
    return min(branches), index


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

    def matches(self, path: str) -> re.Pattern[str] | None:
        """The first of this library's patterns that matches the whole (normalized) path."""
        for pattern in self.paths:
            if pattern.fullmatch(path):
                return pattern
        return None

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
        }

    def ships_in(self, package: str) -> bool:
        """Whether the distribution ``package`` is one that ships this library."""
        wanted = normalize_package(package)
        return any(normalize_package(name) == wanted for name in self.packages)


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
        """The known library a file path belongs to, or None.

        ``path`` is relative to site-packages or the build root, with ``/``;
        a path inside ``site-packages/`` or ``dist-packages/`` is cut after
        the last of those. The whole path is tried first, then ever shorter
        tails (after each ``/``), so ``opt/venv/x/vllm/_C.abi3.so`` still
        matches. Among the entries matching the longest tail, one that lists
        ``package`` (when given) wins, then the most specific pattern, then
        table order.
        """
        text = normalize_path(path)
        while text:
            best: tuple[tuple[int, int, int], KnownLibrary] | None = None
            for order, library in enumerate(self._libraries):
                pattern = library.matches(text)
                if pattern is None:
                    continue
                provenance = 1 if package is not None and library.ships_in(package) else 0
                rank = (provenance, specificity(pattern.pattern), -order)
                if best is None or rank > best[0]:
                    best = (rank, library)
            if best is not None:
                return best[1]
            slash = text.find("/")
            if slash < 0:
                return None
            text = text[slash + 1 :]
        return None


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
    return KnownLibrary(
        id=reader.string("id"),
        name=reader.string("name"),
        paths=reader.regexes("paths"),
        packages=reader.strings("packages", non_empty=True),
        role=reader.string("role"),
        used_for=reader.strings("used_for"),
        intended_archs=archs,
        coverage_note=reader.string("coverage_note"),
        jit=reader.boolean("jit", default=False),
        core=reader.boolean("core", default=False),
        fallback=reader.string("fallback"),
        sources=reader.sources(),
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
    extra = user_entries(FILENAME, TABLE, user_dir)
    if not extra:
        return shipped_library_table()
    return _build(merge_by_id(shipped_entries(FILENAME, TABLE), extra))
