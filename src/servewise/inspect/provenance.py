"""Which package each library belongs to, which known library it is, and its version.

Packages come from ``*.dist-info/RECORD`` and ``METADATA``; the known library
from the library table's identity signals — the path, the package, the package
folder, and what the scan read from the bytes (SONAME, ``PyInit_`` modules,
exported-symbol namespaces, version strings, dispatch names); a bundled version
from ``__version__`` or a ``VERSION`` file in the Python package beside it.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass

from servewise.errors import FormatError
from servewise.formats.distinfo import dist_info_file, parse_metadata, parse_record
from servewise.inspect.report import LibraryProvenance, LibraryScan
from servewise.knowledge.libraries import LibraryFacts, LibraryTable, load_library_table
from servewise.sources import BuildSource, Member

_VERSION_FILES = ("__init__.py", "_version.py", "version.py")
_VERSION_RE = re.compile(rb"""^__version__\s*(?::\s*str\s*)?=\s*['"]([^'"\n]{1,64})['"]""", re.M)
#: A plain ``VERSION`` file (sgl-deep-gemm ships ``deep_gemm/VERSION``): one version, nothing else.
_PLAIN_VERSION_RE = re.compile(rb"\A\s*v?(\d+(?:\.\d+)+[0-9A-Za-z.+!_-]{0,40})\s*\Z")
#: Commit ids written by build tools: setuptools-scm's ``commit_id``, ``__git_version__``, ...
_COMMIT_RE = re.compile(
    rb"""^_*(?:commit_id|commit|git_version|git_commit|git_hash|revision)_*\s*"""
    rb"""(?::\s*[A-Za-z_| ]+)?=\s*['"]g?([0-9a-f]{7,40})['"]""",
    re.M,
)
_SMALL = 512 * 1024
_RECORD_LIMIT = 64 * 2**20


@dataclass(frozen=True)
class InstalledDistribution:
    """An installed distribution of the build: name, version, and the files its RECORD lists."""

    name: str
    version: str
    root: str
    """The folder holding its ``.dist-info`` (the site-packages it was installed into)."""
    files: frozenset[str]
    """Paths relative to ``root``."""


def distributions(
    source: BuildSource, members: list[Member], notes: list[str]
) -> list[InstalledDistribution]:
    """Every ``*.dist-info`` of the build with a readable METADATA (unreadable ones: ``notes``)."""
    folders: dict[str, dict[str, Member]] = {}
    for member in members:
        found = dist_info_file(member.path)
        if found is not None:
            folders.setdefault(found[0], {})[found[1]] = member
    dists: list[InstalledDistribution] = []
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
        dists.append(InstalledDistribution(name, version, posixpath.dirname(folder), record))
    return dists


def _bundled_version(
    source: BuildSource, by_path: dict[str, Member], folder: str
) -> tuple[str | None, tuple[str, ...]]:
    """``__version__`` (or a ``VERSION`` file) and commit ids of one Python package folder."""
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
    plain = by_path.get(posixpath.join(folder, "VERSION") if folder else "VERSION")
    if version is None and plain is not None and plain.size <= 256:
        match = _PLAIN_VERSION_RE.match(source.read_small(plain, 256))
        if match:
            version = match.group(1).decode("ascii", "replace")
    return version, tuple(dict.fromkeys(commits))


def facts_for(path: str, package: str | None, scan: LibraryScan | None) -> LibraryFacts:
    """What the identity signals need from one library's path, package and scan."""
    if scan is None:
        return LibraryFacts(path, package)
    dynamic = scan.dynamic
    return LibraryFacts(
        path,
        package,
        soname=dynamic.soname if dynamic else None,
        python_modules=dynamic.python_modules if dynamic else (),
        namespaces=tuple(dynamic.namespaces) if dynamic else (),
        versions=scan.versions,
        dispatch_names=tuple(n for names in scan.dispatch.values() for n in names),
    )


def provenance_for(
    source: BuildSource,
    members: list[Member],
    scans: Mapping[str, LibraryScan | None],
    notes: list[str],
    table: LibraryTable | None = None,
    dists: list[InstalledDistribution] | None = None,
) -> dict[str, LibraryProvenance]:
    """Provenance for each library path of the build (the keys of ``scans``).

    ``dists`` are the build's distributions (read from ``members`` when not
    given); unreadable metadata is added to ``notes``.
    """
    table = table or load_library_table()
    if dists is None:
        dists = distributions(source, members, notes)
    by_path = {m.path: m for m in members}
    versions: dict[str, tuple[str | None, tuple[str, ...]]] = {}
    result: dict[str, LibraryProvenance] = {}
    for path, scan in scans.items():
        package = version = None
        for dist in dists:
            relative = posixpath.relpath(path, dist.root) if dist.root else path
            if relative in dist.files:
                package, version = dist.name, dist.version
                break
        identity = table.identify(facts_for(path, package, scan))
        folder = posixpath.dirname(path)
        if folder not in versions:  # libraries sharing a folder share its version files
            versions[folder] = _bundled_version(source, by_path, folder)
        bundled, commits = versions[folder]
        result[path] = LibraryProvenance(
            package=package,
            package_version=version,
            library_id=identity.library.id if identity else None,
            library_name=identity.library.name if identity else None,
            bundled_version=bundled,
            git_hashes=tuple(dict.fromkeys(commits + (scan.git_hashes if scan else ()))),
            identified_by=identity.signals if identity else (),
            library_version=identity.version if identity else None,
        )
    return result
