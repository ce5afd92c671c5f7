"""Which package each library belongs to, which known library it is, and its version.

Packages come from ``*.dist-info/RECORD`` and ``METADATA``; known libraries from
the shipped library table (matched by path patterns and package); a bundled
version from ``__version__`` in the Python package beside the library.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from servewise.errors import FormatError
from servewise.formats.distinfo import dist_info_file, parse_metadata, parse_record
from servewise.inspect.report import Provenance
from servewise.knowledge.libraries import LibraryTable, load_library_table
from servewise.sources import BuildSource, Member

_VERSION_FILES = ("__init__.py", "_version.py", "version.py")
_VERSION_RE = re.compile(rb"""^__version__\s*(?::\s*str\s*)?=\s*['"]([^'"\n]{1,64})['"]""", re.M)
#: Commit ids written by build tools: setuptools-scm's ``commit_id``, ``__git_version__``, ...
_COMMIT_RE = re.compile(
    rb"""^_*(?:commit_id|commit|git_version|git_commit|git_hash|revision)_*\s*"""
    rb"""(?::\s*[A-Za-z_| ]+)?=\s*['"]g?([0-9a-f]{7,40})['"]""",
    re.M,
)
_SMALL = 512 * 1024
_RECORD_LIMIT = 64 * 2**20


@dataclass(frozen=True)
class _Dist:
    name: str
    version: str
    root: str
    files: frozenset[str]


def _distributions(source: BuildSource, members: list[Member], notes: list[str]) -> list[_Dist]:
    folders: dict[str, dict[str, Member]] = {}
    for member in members:
        found = dist_info_file(member.path)
        if found is not None:
            folders.setdefault(found[0], {})[found[1]] = member
    dists: list[_Dist] = []
    for folder, files in sorted(folders.items()):
        if "METADATA" not in files:
            continue
        try:
            name, version = parse_metadata(
                source.read_small(files["METADATA"], _SMALL), files["METADATA"].path
            )
            record: frozenset[str] = frozenset()
            if "RECORD" in files:
                record = parse_record(
                    source.read_small(files["RECORD"], _RECORD_LIMIT), files["RECORD"].path
                )
        except FormatError as error:
            notes.append(f"ignored {folder}: {error.message}")
            continue
        dists.append(_Dist(name, version, posixpath.dirname(folder), record))
    return dists


def _bundled_version(
    source: BuildSource, by_path: dict[str, Member], folder: str
) -> tuple[str | None, tuple[str, ...]]:
    """``__version__`` and commit ids from the version files of one Python package folder."""
    version: str | None = None
    commits: list[str] = []
    for name in _VERSION_FILES:
        member = by_path.get(posixpath.join(folder, name) if folder else name)
        if member is None:
            continue
        text = source.read_small(member, _SMALL)
        match = _VERSION_RE.search(text)
        if match and version is None:
            version = match.group(1).decode("utf-8", "replace")
        commits.extend(m.group(1).decode() for m in _COMMIT_RE.finditer(text))
    return version, tuple(dict.fromkeys(commits))


def provenance_for(
    source: BuildSource,
    members: list[Member],
    library_paths: list[str],
    notes: list[str],
    table: LibraryTable | None = None,
) -> dict[str, Provenance]:
    """Provenance for each library path of the build; unreadable metadata is added to ``notes``."""
    table = table or load_library_table()
    dists = _distributions(source, members, notes)
    by_path = {m.path: m for m in members}
    versions: dict[str, tuple[str | None, tuple[str, ...]]] = {}
    result: dict[str, Provenance] = {}
    for path in library_paths:
        package = version = None
        for dist in dists:
            relative = posixpath.relpath(path, dist.root) if dist.root else path
            if relative in dist.files:
                package, version = dist.name, dist.version
                break
        known = table.match(path, package)
        folder = posixpath.dirname(path)
        if folder not in versions:  # libraries sharing a folder share its version files
            versions[folder] = _bundled_version(source, by_path, folder)
        bundled, commits = versions[folder]
        result[path] = Provenance(
            package=package,
            package_version=version,
            library_id=known.id if known else None,
            library_name=known.name if known else None,
            bundled_version=bundled,
            git_hashes=commits,
        )
    return result
