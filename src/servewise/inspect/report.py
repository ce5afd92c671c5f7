"""What a scan of an engine build reports, library by library.

These are plain frozen dataclasses with ``to_dict``/``from_dict`` so a library's
scan can be cached in the store and printed as JSON with stable keys. Arch
names use NVIDIA's spelling: ``sm_90a`` for SASS, ``compute_80`` for PTX,
``sm_120`` for JIT-dispatch evidence.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from functools import cached_property
from typing import Any

from servewise.archs import arch_of_name
from servewise.formats.dynamic_info import DynamicInfo
from servewise.knowledge.patterns import normalize_package


def sort_archs(names: set[str] | list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Arch names in numeric order (``sm_80`` < ``sm_90`` < ``sm_90a`` < ``sm_100``)."""
    return tuple(sorted(set(names), key=lambda name: (arch_of_name(name), name)))


@dataclass(frozen=True)
class CodeEntry:
    """One compiled image: a fatbin entry or a raw cubin."""

    kind: str
    """``sass``, ``ptx`` or ``kind-N`` for entry kinds servewise does not know."""
    arch: str
    """``sm_90a`` for SASS, ``compute_80`` for PTX."""
    origin: str
    """``fatbin``, ``cubin`` (the file is one) or ``embedded-cubin`` (a byte array in host data)."""
    offset: int
    """Where it starts in the library file."""
    compression: str = "none"
    """``none``, ``lz4``, ``zstd`` or ``legacy``."""
    stored_bytes: int = 0
    """Bytes the image takes in the file."""
    uncompressed_bytes: int = 0
    """Bytes once decompressed (equal to ``stored_bytes`` when not compressed)."""
    ptx_isa: str | None = None
    """PTX ISA version of a PTX entry (``9.0``)."""
    tool_args: str | None = None
    """Compiler arguments recorded in a cubin's notes."""


@dataclass(frozen=True)
class LibraryScan:
    """What one pass over a library file found (the part that is cached)."""

    containers: int
    """Number of fatbin containers."""
    entries: tuple[CodeEntry, ...]
    """Every compiled image in file order."""
    dispatch: dict[str, tuple[str, ...]]
    """JIT-dispatch evidence from the binary: arch → distinct names."""
    git_hashes: tuple[str, ...]
    """Hex strings found next to the word ``git`` or after ``repo@``."""
    host_machine: int | None
    """ELF ``e_machine`` of the file (62 x86-64, 183 aarch64, 190 a cubin), ``None`` if not ELF."""
    warnings: tuple[str, ...] = field(default=())
    """Problems that did not stop the scan."""
    versions: tuple[str, ...] = field(default=())
    """Embedded ``NAME version X.Y.Z`` strings."""
    dynamic: DynamicInfo | None = None
    """SONAME, needs and exported symbols of a dynamic ELF object."""

    @property
    def sass(self) -> tuple[str, ...]:
        """Distinct SASS archs, in order."""
        return sort_archs([e.arch for e in self.entries if e.kind == "sass"])

    @property
    def ptx(self) -> tuple[str, ...]:
        """Distinct PTX archs, in order."""
        return sort_archs([e.arch for e in self.entries if e.kind == "ptx"])

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        data = asdict(self)
        data["dispatch"] = {arch: list(names) for arch, names in self.dispatch.items()}
        data["dynamic"] = self.dynamic.to_dict() if self.dynamic else None
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LibraryScan:
        """Rebuild from :meth:`to_dict` output."""
        return cls(
            containers=int(data["containers"]),
            entries=tuple(CodeEntry(**entry) for entry in data["entries"]),
            dispatch={arch: tuple(names) for arch, names in data["dispatch"].items()},
            git_hashes=tuple(data["git_hashes"]),
            host_machine=data["host_machine"],
            warnings=tuple(data["warnings"]),
            versions=tuple(data["versions"]),
            dynamic=DynamicInfo.from_dict(data["dynamic"]) if data["dynamic"] else None,
        )


@dataclass(frozen=True)
class LibraryProvenance:
    """Where a library comes from."""

    package: str | None = None
    """The installed distribution whose RECORD lists the file."""
    package_version: str | None = None
    """That distribution's version."""
    library_id: str | None = None
    """The known-library table's id (``deep_gemm``), when the path matches an entry."""
    library_name: str | None = None
    """Its display name."""
    bundled_version: str | None = None
    """``__version__`` of the Python package beside the library, when it has one."""
    git_hashes: tuple[str, ...] = ()
    """Commit ids from the package's version files, then git hashes in the binary's strings."""
    identified_by: tuple[str, ...] = ()
    """The identity signals that agreed on ``library_id`` (``path``, ``soname``, ``symbols``…)."""
    library_version: str | None = None
    """The version an embedded version string gives (``NCCL version 2.27.3`` → ``2.27.3``)."""


@dataclass(frozen=True)
class LibraryReport:
    """One CUDA-bearing (or candidate) library of a build."""

    path: str
    """Path as found in the build."""
    size: int
    """File size in bytes."""
    scan: LibraryScan
    """What its bytes hold."""
    provenance: LibraryProvenance
    """Which package and known library it is."""
    headers: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Shipped ``impls/smNNN_*.cuh`` kernel headers beside it: arch → file names."""
    cached: bool = False
    """Whether the scan came from the store."""

    @cached_property
    def dispatch(self) -> dict[str, tuple[str, ...]]:
        """All JIT-dispatch evidence: binary names and shipped headers, by arch."""
        merged: dict[str, set[str]] = {a: set(n) for a, n in self.scan.dispatch.items()}
        for arch, names in self.headers.items():
            merged.setdefault(arch, set()).update(f"impls/{name}" for name in names)
        return {arch: tuple(sorted(merged[arch])) for arch in sort_archs(list(merged))}

    @property
    def has_compiled_code(self) -> bool:
        """Whether it carries SASS or PTX of its own."""
        return bool(self.scan.sass or self.scan.ptx)

    @property
    def compressions(self) -> tuple[str, ...]:
        """Distinct compression schemes of its images."""
        return tuple(sorted({entry.compression for entry in self.scan.entries}))

    def to_dict(self, *, entries: bool = False) -> dict[str, Any]:
        """JSON-ready form with stable keys; ``entries`` adds every compiled image."""
        ptx_isa = sorted({e.ptx_isa for e in self.scan.entries if e.ptx_isa})
        dynamic = self.scan.dynamic
        detail = {"entry_list": [asdict(e) for e in self.scan.entries]} if entries else {}
        return {
            "path": self.path,
            "size_bytes": self.size,
            "package": self.provenance.package,
            "package_version": self.provenance.package_version,
            "library_id": self.provenance.library_id,
            "library_name": self.provenance.library_name,
            "bundled_version": self.provenance.bundled_version,
            "library_version": self.provenance.library_version,
            "identified_by": list(self.provenance.identified_by),
            "git_hashes": list(self.provenance.git_hashes),
            "sass": list(self.scan.sass),
            "ptx": list(self.scan.ptx),
            "ptx_isa": ptx_isa,
            "jit_dispatch": {arch: len(names) for arch, names in self.dispatch.items()},
            "jit_dispatch_names": {arch: list(names) for arch, names in self.dispatch.items()},
            "containers": self.scan.containers,
            "entries": len(self.scan.entries),
            "compression": list(self.compressions),
            "host_machine": self.scan.host_machine,
            "soname": dynamic.soname if dynamic else None,
            "python_modules": list(dynamic.python_modules) if dynamic else [],
            "needed": list(dynamic.needed) if dynamic else [],
            "symbol_namespaces": dict(list(dynamic.namespaces.items())[:8]) if dynamic else {},
            "version_strings": list(self.scan.versions),
            "warnings": list(self.scan.warnings),
            "cached": self.cached,
            **detail,
        }


@dataclass(frozen=True)
class UnitCounts:
    """How many units a scan read and how many came from the store (or the caller's memory)."""

    kind: str = "file"
    """``layer`` for images and archives, ``file`` otherwise."""
    read: int = 0
    cached: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"kind": self.kind, "read": self.read, "cached": self.cached}


#: A reason shared by more files than this is shown once, with a count and examples.
NOTE_GROUP_AT = 5
#: Examples named in a grouped note.
NOTE_EXAMPLES = 3


def summarize_notes(notes: tuple[str, ...] | list[str], *, group_at: int = NOTE_GROUP_AT,
                    examples: int = NOTE_EXAMPLES) -> list[str]:
    """Notes for a person: ``PATH: REASON`` notes that share a reason become one line.

    ``gate`` on a folder of 100,000 ``.so`` files that are not ELF would otherwise print
    100,000 lines; it prints ``100000 files: not an ELF file, skipped (e.g. a.so, b.so,
    c.so; --json lists every one)``. Notes without a path, and reasons shared by at most
    ``group_at`` files, are kept as they are, in their first order.
    """
    by_reason: dict[str, list[str]] = {}
    order: list[tuple[str, str | None]] = []  # (note or reason, None for a plain note)
    for note in notes:
        path, sep, reason = note.partition(": ")
        if not sep or " " in path.strip() or not reason:
            order.append((note, None))
            continue
        if reason not in by_reason:
            by_reason[reason] = []
            order.append((reason, reason))
        by_reason[reason].append(path)
    lines: list[str] = []
    for text, grouped in order:
        if grouped is None:
            lines.append(text)
            continue
        reason = grouped
        paths = by_reason[reason]
        if len(paths) <= group_at:
            lines.extend(f"{path}: {reason}" for path in paths)
            continue
        named = ", ".join(paths[:examples])
        lines.append(f"{len(paths)} files: {reason} (e.g. {named}; --json lists every one)")
    return lines


@dataclass(frozen=True)
class BuildReport:
    """Every library of one build."""

    ref: str
    """What was scanned, as the user named it."""
    source_kind: str
    """``file``, ``folder``, ``wheel``, ``image``, ``docker-archive`` or ``oci-layout``."""
    libraries: tuple[LibraryReport, ...]
    """Libraries in path order."""
    notes: tuple[str, ...] = ()
    """Things skipped or doubtful while reading the build."""
    scanned_bytes: int = 0
    """Bytes read (not counting those served from the store)."""
    metadata: dict[str, Any] = field(default_factory=dict)
    """What the source says about the build: image digest, created date, platform, URL."""
    units: UnitCounts = field(default_factory=UnitCounts)
    """Units (files or layers) read, and served from the store."""
    packages: tuple[tuple[str, str], ...] = ()
    """Installed distributions found in the build: (name, version), by name."""
    files_listed: int = 0
    """Regular files the source listed."""
    files_read: int = 0
    """Files scanned for GPU code (read now or taken from the store)."""

    def library(self, path: str) -> LibraryReport:
        """The library at ``path`` (KeyError when absent)."""
        for library in self.libraries:
            if library.path == path:
                return library
        raise KeyError(path)

    def note_lines(self) -> list[str]:
        """The notes as a person reads them (:func:`summarize_notes`); ``notes`` has all."""
        return summarize_notes(self.notes)

    def to_dict(self, *, entries: bool = False) -> dict[str, Any]:
        """JSON-ready form with stable keys; ``entries`` adds every compiled image."""
        return {
            "ref": self.ref,
            "source_kind": self.source_kind,
            "libraries": [library.to_dict(entries=entries) for library in self.libraries],
            "notes": list(self.notes),
            "scanned_bytes": self.scanned_bytes,
            "metadata": self.metadata,
            "units": self.units.to_dict(),
            "packages": [{"name": name, "version": version} for name, version in self.packages],
            "files_listed": self.files_listed,
            "files_read": self.files_read,
        }

    def package_version(self, name: str) -> str | None:
        """The version of distribution ``name`` in the build (PEP 503 comparison), if present."""
        wanted = normalize_package(name)
        for package, version in self.packages:
            if normalize_package(package) == wanted:
                return version
        return None
