"""Scan an engine build: every library's SASS, PTX and JIT-dispatch evidence.

:func:`scan_build` opens the build's source, lists the units it must read (one per
library for folders and wheels, one per layer for images), takes what the store
already knows (keyed by content identity: a member's identity, a layer's digest),
reads the rest on every core, each library streamed through
:class:`~servewise.formats.stream.StreamScanner`, and adds provenance. It never
prints: progress goes to a callback.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
from collections.abc import Callable, Generator, Iterator
from contextlib import closing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from servewise.errors import (
    ArchiveLimitError,
    DeadlineError,
    IntegrityError,
    RateLimitError,
    RegistryError,
    ServewiseError,
    SourceError,
)
from servewise.formats.magic import PREFIX_BYTES, describe_prefix, object_kind
from servewise.inspect.provenance import distributions, provenance_for
from servewise.inspect.report import (
    BuildReport,
    CodeEntry,
    LibraryReport,
    LibraryScan,
    UnitCounts,
)
from servewise.inspect.summary import from_record, summary_key, to_record
from servewise.sources import BuildSource, Member, Source, SourceOptions, Unit, open_source
from servewise.store import Store

if TYPE_CHECKING:
    from servewise.formats.stream import StreamFindings

#: Bump when what a scan records changes: older cached results are then ignored.
SCANNER_VERSION = 5

#: Below this many bytes to scan, worker processes cost more than they save.
PARALLEL_THRESHOLD = 32 * 2**20


@dataclass(frozen=True)
class ScanProgress:
    """How far a scan is: bytes done out of bytes to read, and the member just finished."""

    done_bytes: int
    total_bytes: int
    path: str


ProgressCallback = Callable[[ScanProgress], None]


def findings_to_scan(findings: StreamFindings) -> LibraryScan:
    """Turn one pass's findings into the cached, JSON-ready library scan."""
    entries: list[CodeEntry] = []
    for container in findings.containers:
        for entry in container.entries:
            entries.append(
                CodeEntry(
                    kind=entry.kind_name,
                    arch=entry.name,
                    origin="fatbin",
                    offset=entry.offset,
                    compression=entry.compression,
                    stored_bytes=entry.payload_size,
                    uncompressed_bytes=entry.uncompressed_size or entry.payload_size,
                    ptx_isa=f"{entry.ptx_isa[0]}.{entry.ptx_isa[1]}" if entry.ptx_isa else None,
                )
            )
    for found in findings.cubins:
        origin = "cubin" if found.offset == 0 else "embedded-cubin"
        if found.info is not None:
            arch = found.info.arch.sass_name
            size = found.info.size
            args = found.info.tool_args
        elif found.arch_hint is not None:
            arch, size, args = found.arch_hint, 0, None
        else:
            continue
        entries.append(
            CodeEntry(kind="sass", arch=arch, origin=origin, offset=found.offset,
                      stored_bytes=size, uncompressed_bytes=size, tool_args=args)
        )
    machine = findings.host_machine
    if machine is None and any(c.offset == 0 for c in findings.cubins):
        machine = 190
    return LibraryScan(
        containers=len(findings.containers),
        entries=tuple(entries),
        dispatch=dict(findings.evidence.names),
        git_hashes=findings.evidence.git_hashes,
        host_machine=machine,
        warnings=findings.warnings,
        versions=findings.evidence.versions,
        dynamic=findings.dynamic,
    )


def scan_chunks(chunks: Iterator[bytes]) -> dict[str, Any]:
    """One library's bytes in, its JSON-ready :class:`LibraryScan` out (the sources' scan)."""
    # Imported here: a build served from the store never loads the binary parsers.
    from servewise.formats.stream import StreamScanner

    scanner = StreamScanner()
    for chunk in chunks:
        scanner.feed(chunk)
    return findings_to_scan(scanner.finish()).to_dict()


def read_unit(unit: Unit) -> dict[str, Any]:
    """Read one unit; runs in worker processes, returns plain data.

    Errors come back as ``{"error": {...}}`` because servewise errors carry
    keyword fields that do not survive pickling.
    """
    try:
        return {"result": unit.read(scan_chunks)}
    except ServewiseError as error:
        return {"error": error.to_dict()}


_ERROR_KINDS: dict[str, type[SourceError]] = {
    cls.kind: cls
    for cls in (SourceError, ArchiveLimitError, IntegrityError, RegistryError, RateLimitError,
                DeadlineError)
}


def _raise_unit_error(unit: Unit, error: dict[str, Any]) -> None:
    """Raise again, in this process, an error a worker returned as data."""
    message = str(error.get("message", "unreadable"))
    fields = {k: v for k, v in error.items() if k not in ("error", "message", "hint")}
    fields.setdefault("path", unit.label)
    # A FormatError from a worker (a malformed layer) comes back as a SourceError.
    kind = _ERROR_KINDS.get(str(error.get("error")), SourceError)
    raise kind(message, hint=error.get("hint"), **fields)


def _outcomes(todo: list[Unit], workers: int) -> Generator[tuple[Unit, dict[str, Any]]]:
    """Read units, largest first, on ``workers`` processes when that pays off.

    The workers stop at once when the consumer stops early (a unit error) or is
    interrupted (Ctrl-C) (:func:`~servewise.inspect.workers.run_in_workers`).
    """
    todo = sorted(todo, key=lambda u: u.size, reverse=True)
    use_pool = workers > 1 and len(todo) > 1 and sum(u.size for u in todo) >= PARALLEL_THRESHOLD
    if not use_pool:
        for unit in todo:
            yield unit, read_unit(unit)
        return
    from servewise.inspect.workers import run_in_workers  # multiprocessing: only when needed

    for number, outcome in run_in_workers(
        read_unit, todo, workers, what=lambda number: todo[number].label,
    ):
        yield todo[number], outcome


def _run_units(
    todo: list[Unit], workers: int, store: Store | None, progress: ProgressCallback | None,
    base_done: int, total: int,
) -> dict[str, dict[str, Any]]:
    """Results by unit key, each saved in the store as it arrives.

    The first unit error is raised; what was saved before it stays saved.
    """
    results: dict[str, dict[str, Any]] = {}
    done = base_done
    with closing(_outcomes(todo, workers)) as outcomes:
        for unit, outcome in outcomes:
            if "error" in outcome:
                _raise_unit_error(unit, outcome["error"])
            results[unit.key] = outcome["result"]
            if store is not None:
                store.put_scan(unit.key, SCANNER_VERSION, outcome["result"])
            done += unit.size
            if progress:
                progress(ScanProgress(done, total, unit.label))
    return results


def _attribute_headers(
    paths: list[str], library_paths: list[str]
) -> dict[str, dict[str, set[str]]]:
    """Give each shipped ``impls/smNNN_*.cuh`` header to the libraries of the nearest folder."""
    from servewise.formats.dispatch_strings import header_arch

    by_dir: dict[str, list[str]] = {}
    for path in library_paths:
        by_dir.setdefault(posixpath.dirname(path), []).append(path)
    owned: dict[str, dict[str, set[str]]] = {}
    for header in paths:
        arch = header_arch(header)
        if arch is None:
            continue
        folder = posixpath.dirname(header)
        while folder not in by_dir and folder:
            folder = posixpath.dirname(folder)
        for library in by_dir.get(folder, []):
            owned.setdefault(library, {}).setdefault(arch, set()).add(posixpath.basename(header))
    return owned


def scan_build(
    ref: str,
    *,
    store: Store | None = None,
    progress: ProgressCallback | None = None,
    workers: int | None = None,
    options: SourceOptions | None = None,
    source: Source | None = None,
    memory: dict[str, dict[str, Any]] | None = None,
) -> BuildReport:
    """Scan the build at ``ref`` (any REF :func:`~servewise.sources.open_source` reads).

    With a ``store``, units whose content identity was read before are not read
    again, and new results are saved. ``memory`` is a cache the caller keeps
    across scans (``bisect`` uses one even without a store). ``source`` skips
    opening ``ref`` again when the caller has it open.
    """
    source = source or open_source(ref, options)
    units = list({unit.key: unit for unit in source.units()}.values())
    keys = [unit.key for unit in units]
    cached: dict[str, dict[str, Any]] = {}
    if memory is not None:
        cached.update({key: memory[key] for key in keys if key in memory})
    if store is not None:
        missing = [key for key in keys if key not in cached]
        if missing:
            cached.update(store.get_scans(missing, SCANNER_VERSION))
    todo = [unit for unit in units if unit.key not in cached]
    total = sum(unit.size for unit in units)
    done = total - sum(unit.size for unit in todo)
    if progress:
        progress(ScanProgress(done, total, "(from the store)" if done else ""))
    summary = summary_key(source.kind, keys, SCANNER_VERSION) if store is not None else None
    if summary is not None and store is not None and not todo:
        kept = store.get_scans([summary], SCANNER_VERSION).get(summary)
        if kept is not None:
            with contextlib.suppress(KeyError, TypeError, ValueError):
                return from_record(kept, ref=ref, source_kind=source.kind,
                                   metadata=source.metadata(),
                                   units=UnitCounts(_unit_kind(source.kind), 0, len(units)))
    fresh = _run_units(todo, workers or os.cpu_count() or 1, store, progress, done, total)
    if memory is not None:
        memory.update(fresh)
    contents = source.contents({**cached, **fresh})
    notes = list(contents.notes)
    scanned = [m for m in contents.members if m.path in contents.scans]
    headers = _attribute_headers([m.path for m in contents.members], [m.path for m in scanned])
    scans: dict[str, LibraryScan] = {}
    sizes: dict[str, int] = {}
    for member in sorted(scanned, key=lambda m: m.path):
        data = contents.scans[member.path]
        if data is None:
            _skip_unreadable(source, contents, member, notes, is_object=False)
            continue
        try:
            scan = LibraryScan.from_dict(data)
        except (KeyError, TypeError, ValueError) as error:
            raise SourceError(
                f"the store holds an unreadable scan for {member.path}: {error}",
                hint="run again with --no-cache",
            ) from None
        if scan.host_machine is None and not scan.entries:
            _skip_unreadable(source, contents, member, notes, is_object=True)
            continue
        scans[member.path] = scan
        sizes[member.path] = member.size
    dists = distributions(contents, contents.members, notes)
    provenance = provenance_for(contents, contents.members, scans, notes, dists=dists)
    libraries = tuple(
        LibraryReport(
            path=path,
            size=sizes[path],
            scan=scan,
            provenance=provenance[path],
            headers={a: tuple(sorted(n)) for a, n in headers.get(path, {}).items()},
            cached=contents.origin.get(path) in cached,
        )
        for path, scan in scans.items()
    )
    report = BuildReport(
        ref=ref,
        source_kind=source.kind,
        libraries=libraries,
        notes=tuple(notes),
        scanned_bytes=sum(unit.size for unit in todo),
        packages=tuple(sorted({(d.name, d.version) for d in dists})),
        files_listed=len(contents.members),
        files_read=len(scanned),
        metadata=source.metadata(),
        units=UnitCounts(_unit_kind(source.kind), len(todo), len(units) - len(todo)),
    )
    if summary is not None and store is not None:
        store.put_scan(summary, SCANNER_VERSION, to_record(report))
    return report


def _skip_unreadable(source: Source, contents: BuildSource, member: Member,
                     notes: list[str], *, is_object: bool) -> None:
    """A member with no GPU code servewise can read: a note in a build, an error if named alone."""
    if member.reader is None:  # an image member: its bytes went by in its layer's pass
        notes.append(f"{member.path}: " + ("no GPU code servewise can read, skipped"
                                           if is_object else "not an ELF file, skipped"))
        return
    prefix = contents.read_small(member, PREFIX_BYTES)
    kind = object_kind(prefix)
    if kind is not None:
        notes.append(f"{member.path}: {kind} without GPU code servewise can read, skipped")
        return
    if source.kind == "file":
        raise SourceError(
            f"{source.ref} is not an ELF object, an archive or a cubin "
            f"(starts with {describe_prefix(prefix)})",
            hint="give a shared library (.so), a cubin, or a whole build: a site-packages "
            "folder, a virtual environment, a wheel (.whl) or an image",
            path=source.ref,
            found=describe_prefix(prefix),
        )
    notes.append(f"{member.path}: not an ELF file, skipped")


def _unit_kind(source_kind: str) -> str:
    return "layer" if source_kind in ("image", "docker-archive", "oci-layout") else "file"


__all__ = [
    "SCANNER_VERSION", "ScanProgress", "findings_to_scan", "read_unit", "scan_build",
    "scan_chunks",
]
