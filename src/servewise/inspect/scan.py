"""Scan an engine build: every library's SASS, PTX and JIT-dispatch evidence.

:func:`scan_build` lists the build's members, takes what the store already knows
(keyed by content identity), streams the rest through
:class:`~servewise.formats.stream.StreamScanner` on every core, and adds
provenance. It never prints: progress goes to a callback.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable, Generator
from contextlib import closing
from dataclasses import dataclass
from typing import Any

from servewise.errors import ArchiveLimitError, ServewiseError, SourceError
from servewise.formats.evidence import header_arch
from servewise.formats.magic import PREFIX_BYTES, describe_prefix, object_kind
from servewise.formats.stream import StreamFindings, StreamScanner
from servewise.inspect.provenance import distributions, provenance_for
from servewise.inspect.report import BuildReport, CodeEntry, LibraryReport, LibraryScan
from servewise.inspect.workers import run_in_workers
from servewise.sources import BuildSource, Member, member_chunks, open_source
from servewise.store import Store

#: Bump when what a scan records changes: older cached results are then ignored.
SCANNER_VERSION = 4

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


def _not_an_object() -> LibraryScan:
    """The scan of a file whose first bytes say it holds no GPU code servewise can read."""
    return LibraryScan(containers=0, entries=(), dispatch={}, git_hashes=(), host_machine=None)


def scan_member(locator: tuple[str, ...]) -> dict[str, Any]:
    """Scan one member from its locator; runs in worker processes, returns plain data.

    The first bytes decide: a file that is not an ELF object, an archive or a fatbin is
    not read further. Errors come back as ``{"error": {...}}`` because servewise errors
    carry keyword fields that do not survive pickling.
    """
    try:
        with closing(member_chunks(locator)) as chunks:
            head: list[bytes] = []
            for chunk in chunks:
                head.append(chunk)
                if sum(len(part) for part in head) >= PREFIX_BYTES:
                    break
            if object_kind(b"".join(head)[:PREFIX_BYTES]) is None:
                return {"scan": _not_an_object().to_dict()}
            scanner = StreamScanner()
            for chunk in head:
                scanner.feed(chunk)
            for chunk in chunks:
                scanner.feed(chunk)
        return {"scan": findings_to_scan(scanner.finish()).to_dict()}
    except ServewiseError as error:
        return {"error": error.to_dict()}


_ERROR_KINDS: dict[str, type[SourceError]] = {
    cls.kind: cls for cls in (SourceError, ArchiveLimitError)
}


def _raise_member_error(member: Member, error: dict[str, Any]) -> None:
    """Raise again, in this process, an error a worker returned as data."""
    message = str(error.get("message", "unreadable"))
    fields = {k: v for k, v in error.items() if k not in ("error", "message", "hint")}
    fields.setdefault("path", member.path)
    raise _ERROR_KINDS.get(str(error.get("error")), SourceError)(
        message, hint=error.get("hint"), **fields
    )


def _outcomes(todo: list[Member], workers: int) -> Generator[tuple[Member, dict[str, Any]]]:
    """Scan members, largest first, on ``workers`` processes when that pays off."""
    todo = sorted(todo, key=lambda m: m.size, reverse=True)
    use_pool = workers > 1 and len(todo) > 1 and sum(m.size for m in todo) >= PARALLEL_THRESHOLD
    if not use_pool:
        for member in todo:
            yield member, scan_member(member.locator)
        return
    for number, outcome in run_in_workers(
        scan_member, [member.locator for member in todo], workers,
        what=lambda number: todo[number].path,
    ):
        yield todo[number], outcome


def _run_scans(
    todo: list[Member], workers: int, store: Store | None, progress: ProgressCallback | None,
    base_done: int, total: int,
) -> dict[str, dict[str, Any]]:
    """Scan results by member identity, each saved in the store as it arrives.

    The first member error is raised; what was saved before it stays saved.
    """
    results: dict[str, dict[str, Any]] = {}
    done = base_done
    with closing(_outcomes(todo, workers)) as outcomes:
        for member, outcome in outcomes:
            if "error" in outcome:
                _raise_member_error(member, outcome["error"])
            results[member.identity] = outcome["scan"]
            if store is not None:
                store.put_scan(member.identity, SCANNER_VERSION, outcome["scan"])
            done += member.size
            if progress:
                progress(ScanProgress(done, total, member.path))
    return results


def _attribute_headers(
    paths: list[str], library_paths: list[str]
) -> dict[str, dict[str, set[str]]]:
    """Give each shipped ``impls/smNNN_*.cuh`` header to the libraries of the nearest folder."""
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
) -> BuildReport:
    """Scan the build at ``ref`` (a library file, folder, virtual environment or wheel).

    With a ``store``, members whose content identity was scanned before are not
    read again, and new results are saved.
    """
    source = open_source(ref)
    members = source.members()
    # A file named directly is scanned whatever its name; in folders and archives, by name.
    candidates = members if source.kind == "file" else [m for m in members if m.is_candidate]
    cached: dict[str, dict[str, Any]] = {}
    if store is not None:
        cached = store.get_scans([m.identity for m in candidates], SCANNER_VERSION)
    # A file reached twice (hard links, copies in one archive) is read once.
    todo = list({m.identity: m for m in candidates if m.identity not in cached}.values())
    total = sum(m.size for m in candidates)
    done = total - sum(m.size for m in todo)
    if progress:
        progress(ScanProgress(done, total, "(from the store)" if done else ""))
    fresh = _run_scans(todo, workers or os.cpu_count() or 1, store, progress, done, total)
    all_paths = [m.path for m in members]
    headers = _attribute_headers(all_paths, [m.path for m in candidates])
    notes = source.notes()
    scans: dict[str, LibraryScan] = {}
    sizes: dict[str, int] = {}
    for member in sorted(candidates, key=lambda m: m.path):
        data = cached.get(member.identity) or fresh[member.identity]
        try:
            scan = LibraryScan.from_dict(data)
        except (KeyError, TypeError, ValueError) as error:
            raise SourceError(
                f"the store holds an unreadable scan for {member.path}: {error}",
                hint="run again with --no-cache",
            ) from None
        if scan.host_machine is None and not scan.entries:
            _skip_unreadable(source, member, notes)
            continue
        scans[member.path] = scan
        sizes[member.path] = member.size
    dists = distributions(source, members, notes)
    provenance = provenance_for(source, members, scans, notes, dists=dists)
    cached_paths = {m.path for m in candidates if m.identity in cached}
    libraries = tuple(
        LibraryReport(
            path=path,
            size=sizes[path],
            scan=scan,
            provenance=provenance[path],
            headers={a: tuple(sorted(n)) for a, n in headers.get(path, {}).items()},
            cached=path in cached_paths,
        )
        for path, scan in scans.items()
    )
    return BuildReport(
        ref=ref,
        source_kind=source.kind,
        libraries=libraries,
        notes=tuple(notes),
        scanned_bytes=sum(m.size for m in todo),
        packages=tuple(sorted({(d.name, d.version) for d in dists})),
        files_listed=len(members),
        files_read=len(candidates),
    )


def _skip_unreadable(source: BuildSource, member: Member, notes: list[str]) -> None:
    """A member with no GPU code servewise can read: a note in a build, an error if named alone."""
    prefix = source.read_small(member, PREFIX_BYTES)
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


__all__ = ["SCANNER_VERSION", "ScanProgress", "findings_to_scan", "scan_build", "scan_member"]
