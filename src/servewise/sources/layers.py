"""Image layers: one pass over each layer's tar stream, then the final filesystem.

:func:`read_layer` walks a layer once. It keeps, for each member that matters —
libraries by name, ``*.dist-info`` metadata, Python version files, shipped kernel
headers, links, whiteouts — a short entry; it scans libraries whose first bytes
are an ELF object, an archive or a fatbin (:mod:`servewise.formats.magic`) as they
stream past, and keeps small metadata files (at most
64 MiB of any member is held). Everything else is decompressed and dropped. The
result is plain JSON: it is what the store caches per layer digest.

:func:`merge_layers` then applies the layers top to bottom, as go-containerregistry's
``mutate.Extract`` does: a path seen in a higher layer hides the same path below;
``.wh.NAME`` hides ``NAME`` and everything under it in lower layers; ``.wh..wh..opq``
hides a folder's lower contents; a symlink or file in a higher layer hides a lower
folder of that name. Entries in the layer that holds a whiteout are not affected.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import chain
from typing import TYPE_CHECKING, Any, Protocol

from servewise.errors import SourceError
from servewise.formats.distinfo import dist_info_file
from servewise.formats.magic import PREFIX_BYTES, object_kind

if TYPE_CHECKING:
    from servewise.formats import tar

from servewise.sources.interface import (
    CHUNK_SIZE,
    CapturedBytes,
    Member,
    ScanFn,
    is_candidate,
    read_exact,
)

VERSION_FILES = frozenset({"__init__.py", "_version.py", "version.py"})
#: Largest version file kept.
SMALL_LIMIT = 512 * 1024
#: Largest METADATA or RECORD kept (the per-member memory cap).
METADATA_LIMIT = 64 * 2**20
#: Version files held while a layer is read, before those beside no library are dropped.
PENDING_LIMIT = 64 * 2**20

FILE, SYMLINK, HARDLINK, WHITEOUT, OPAQUE = "f", "l", "h", "w", "o"
_WHITEOUT = ".wh."
_OPAQUE = ".wh..wh..opq"


def normalize(name: str, where: str) -> str | None:
    """A member name as a path from the image root; ``None`` for the root itself.

    ``./a``, ``/a`` and ``a//b/.`` are cleaned as Docker does; a name that climbs
    out of the root with ``..`` is refused, as Docker refuses to extract it.
    """
    parts: list[str] = []
    for part in name.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                raise SourceError(
                    f"{where}: member {name!r} points outside the image root",
                    hint="the layer is malformed or hostile (path traversal); nothing was "
                    "extracted, and the image was not read further",
                    path=where, member=name,
                )
            parts.pop()
            continue
        parts.append(part)
    return "/".join(parts) or None


def _matters(path: str) -> bool:
    from servewise.formats.dispatch_strings import header_arch  # loaded with the first layer pass

    base = posixpath.basename(path)
    return (
        is_candidate(path) or base in VERSION_FILES or dist_info_file(path) is not None
        or header_arch(path) is not None
    )


class EntryData(Protocol):
    """The data of the member a walker is at."""

    def read(self, size: int) -> bytes:
        """Up to ``size`` bytes."""
        ...

    def chunks(self, size: int) -> Iterator[bytes]:
        """The rest, in pieces."""
        ...

    def read_all(self, limit: int) -> bytes:
        """The rest, at most ``limit`` bytes."""
        ...


class PassCollector:
    """What one pass over an archive's members keeps: the entries that matter, scans, small files.

    Fed member by member, in archive order, by a tar walker (layers) or a zip stream
    walker (wheels served without range requests).
    """

    def __init__(self, scan: ScanFn) -> None:
        self._scan = scan
        self.entries: dict[str, list[Any]] = {}
        self.scans: dict[str, dict[str, Any] | None] = {}
        self.small: dict[str, bytes] = {}
        self._pending: dict[str, bytes] = {}
        self._pending_bytes = 0
        self.notes: list[str] = []
        self.count = 0

    def marker(self, path: str) -> bool:
        """Record ``path`` if it is a whiteout or opaque marker; whether it was one."""
        folder, base = posixpath.split(path)
        if not base.startswith(_WHITEOUT):
            return False
        if base == _OPAQUE:
            self.entries[path] = [OPAQUE, folder, 0, None]
        elif not base.startswith(_WHITEOUT + _WHITEOUT):  # AUFS internals: ignored
            self.entries[path] = [WHITEOUT, posixpath.join(folder, base[len(_WHITEOUT):]), 0,
                                  None]
        return True

    def _forget(self, path: str) -> None:
        # A later entry for the same path replaces an earlier one, as extraction does.
        self.entries.pop(path, None)
        self.scans.pop(path, None)
        self.small.pop(path, None)

    def symlink(self, path: str, target: str) -> None:
        """A symbolic link (never followed)."""
        self._forget(path)
        self.entries[path] = [SYMLINK, path, 0, target]

    def hardlink(self, path: str, target: str) -> None:
        """A hard link: the same content as ``target`` (resolved later if not in this pass)."""
        self._forget(path)
        if not _matters(path):
            return
        if target in self.entries and self.entries[target][0] == FILE:
            self.entries[path] = [FILE, path, self.entries[target][2], None]
            if target in self.scans:
                self.scans[path] = self.scans[target]
            if target in self.small:
                self.small[path] = self.small[target]
        else:
            self.entries[path] = [HARDLINK, path, 0, target]

    def file(self, path: str, size: int, data: EntryData | None) -> None:
        """A regular file; ``data`` is ``None`` when its bytes cannot be read (sparse)."""
        self._forget(path)
        if not _matters(path):
            return
        self.entries[path] = [FILE, path, size, None]
        if data is None:
            self.notes.append(f"{path}: a sparse file, not read")
        elif is_candidate(path):
            head = read_exact(data, PREFIX_BYTES)  # a stream may give fewer bytes per read
            self.scans[path] = (
                self._scan(chain([head], data.chunks(CHUNK_SIZE)))
                if object_kind(head) is not None else None
            )
        elif dist_info_file(path) is not None:
            if size <= METADATA_LIMIT:
                self.small[path] = data.read_all(METADATA_LIMIT)
            else:
                self.notes.append(f"{path}: {size} bytes, larger than servewise reads")
        elif (posixpath.basename(path) in VERSION_FILES and size <= SMALL_LIMIT
              and self._pending_bytes + size <= PENDING_LIMIT):
            self._pending[path] = data.read_all(SMALL_LIMIT)
            self._pending_bytes += size

    def result(self) -> dict[str, Any]:
        """JSON-ready: version files are kept only beside a library of the same pass."""
        folders = {posixpath.dirname(p) for p in self.scans}
        small = {**self.small, **{p: data for p, data in self._pending.items()
                                  if posixpath.dirname(p) in folders}}
        return {
            "entries": list(self.entries.values()),
            "scans": self.scans,
            "small": {path: data.decode("latin-1") for path, data in small.items()},
            "notes": self.notes,
            "members": self.count,
        }


def read_layer(stream: tar.Stream, scan: ScanFn, where: str) -> dict[str, Any]:
    """Walk one layer's tar stream; the JSON-ready entries, scans and small files."""
    # Imported here: only a pass over a layer needs the tar reader (a build served from
    # the store does not).
    from servewise.formats import tar

    walker = tar.TarWalker(stream, where=where)
    collector = PassCollector(scan)
    for entry in walker:
        collector.count += 1
        path = normalize(entry.name, where)
        if path is None or collector.marker(path):
            continue
        if entry.kind == tar.SYMLINK:
            collector.symlink(path, entry.linkname)
        elif entry.kind == tar.HARDLINK:
            target = normalize(entry.linkname, where)
            if target is not None:
                collector.hardlink(path, target)
        elif entry.kind == tar.REGULAR:
            collector.file(path, entry.size, walker)
        elif entry.kind == tar.SPARSE:
            collector.file(path, entry.size, None)
    return {**collector.result(), "tar_bytes": walker.position}


@dataclass
class MergedLayers:
    """The final filesystem of a stack of layers, as far as servewise keeps it."""

    members: list[Member] = field(default_factory=list)
    scans: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    origin: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _hidden(path: str, whiteouts: set[str], opaque: set[str], files: set[str]) -> str | None:
    """The higher-layer entry that hides ``path``, if any."""
    if path in whiteouts:
        return path
    folder = posixpath.dirname(path)
    while folder:
        if folder in whiteouts or folder in files:
            return folder
        if folder in opaque:
            return folder
        folder = posixpath.dirname(folder)
    return "" if "" in opaque else None


def merge_layers(layers: list[tuple[str, dict[str, Any]]]) -> MergedLayers:
    """Apply ``(key, read_layer result)`` pairs, bottom layer first, into one filesystem."""
    merged = MergedLayers()
    seen: set[str] = set()
    whiteouts: set[str] = set()
    opaque: set[str] = set()
    used: set[str] = set()
    links: list[tuple[str, str]] = []
    kept: dict[str, tuple[str, int, str | None]] = {}
    marks: list[tuple[str, int]] = []
    for number in range(len(layers), 0, -1):
        key, result = layers[number - 1]
        small: dict[str, str] = result.get("small", {})
        scans: dict[str, Any] = result.get("scans", {})
        merged.notes.extend(f"layer {number}: {note}" for note in result.get("notes", []))
        layer_whiteouts: set[str] = set()
        layer_opaque: set[str] = set()
        for kind, path, size, link in result["entries"]:
            if kind == WHITEOUT:
                layer_whiteouts.add(path)
                continue
            if kind == OPAQUE:
                layer_opaque.add(path)
                continue
            if path in seen:
                continue
            hider = _hidden(path, whiteouts, opaque, seen)
            if hider is not None:
                used.add(hider)
                continue
            seen.add(path)
            if kind == SYMLINK:
                if is_candidate(path):
                    merged.notes.append(f"skipped symbolic link {path} -> {link}")
                continue
            if kind == HARDLINK:
                links.append((path, link))
                continue
            kept[path] = (key, size, small.get(path))
            if path in scans:
                merged.scans[path] = scans[path]
                merged.origin[path] = key
        for path in layer_whiteouts:
            if is_candidate(path):
                marks.append((path, number))
        whiteouts |= layer_whiteouts
        opaque |= layer_opaque
    for path, number in marks:
        if path not in used:
            merged.notes.append(f"layer {number}: whiteout for {path}, which no lower layer has")
    for path, target in links:
        if target in kept and target in merged.scans:
            kept[path] = kept[target]
            merged.scans[path] = merged.scans[target]
            merged.origin[path] = merged.origin[target]
        elif target in kept:
            kept[path] = kept[target]
        else:
            merged.notes.append(f"skipped hard link {path} -> {target}: the target is not "
                                "in the image")
    for path in sorted(kept):
        key, size, text = kept[path]
        reader = CapturedBytes(text.encode("latin-1")) if text is not None else None
        merged.members.append(Member(path, size, f"{key}:{path}", reader))
    return merged


__all__ = ["EntryData", "MergedLayers", "PassCollector", "merge_layers", "normalize",
           "read_layer"]
