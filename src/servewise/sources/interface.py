"""The one interface every build source implements, and what it hands the scanner.

A :class:`Source` is an engine build wherever it lives: a file, a folder, a wheel
on disk or on a web server, an image in a registry, a ``docker save`` archive, an
OCI layout. Reading one takes two steps:

1. :meth:`Source.units` lists the *units* that must be read to know the build: one
   per candidate library for sources that can read a file on its own (folders,
   wheels), one per layer for images. A :class:`Unit` has a ``key`` that names its
   content (the cache key in the store), a size, and a ``read`` method that a worker
   process runs: it brings the bytes and hands each library's bytes to a scan
   function. Units are small picklable values, so they travel to worker processes.
2. :meth:`Source.contents` takes every unit's result (fresh or from the store) and
   returns the build's final :class:`Contents`: its regular files, the scan of each
   library, notes, and small-file reads for provenance.

The scan function is given by the caller (``inspect``), so sources never depend on
the operations above them; a source decides from a member's first bytes, with
:func:`~servewise.formats.magic.object_kind`, whether a member is worth scanning.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

#: Files worth scanning for GPU code, by name.
CANDIDATE_RE = re.compile(r"\.(?:so(?:\.\d+)*|cubin|fatbin)$")

#: Bytes per read when streaming a member.
CHUNK_SIZE = 4 * 2**20

#: The scan a unit runs on one library's bytes: JSON-ready findings.
ScanFn = Callable[[Iterator[bytes]], dict[str, Any]]


def is_candidate(path: str) -> bool:
    """Whether a file name says it may hold GPU code (``.so``, ``.so.N``, ``.cubin``...)."""
    return CANDIDATE_RE.search(path) is not None


class ByteStream(Protocol):
    """Sequential reads: ``read(n)`` gives up to ``n`` bytes, ``b""`` at the end."""

    def read(self, size: int, /) -> bytes:
        """Up to ``size`` bytes."""
        ...


def read_exact(stream: ByteStream, size: int) -> bytes:
    """``size`` bytes, fewer only at the end of the stream."""
    parts: list[bytes] = []
    got = 0
    while got < size:
        chunk = stream.read(size - got)
        if not chunk:
            break
        parts.append(chunk)
        got += len(chunk)
    return b"".join(parts)


class MemberReader(Protocol):
    """How a member's bytes are reopened, in any process (a small picklable value)."""

    def chunks(self, chunk_size: int = CHUNK_SIZE) -> Iterator[bytes]:
        """The member's bytes in order, at most ``chunk_size`` at a time."""
        ...


@dataclass(frozen=True)
class Member:
    """One regular file of a build."""

    path: str
    """Path as found in the build, relative to its root (site-packages for installs), with ``/``."""
    size: int
    """Uncompressed size in bytes, as declared by the source."""
    identity: str
    """Content identity, read without the bytes: ``zip:<crc32>:<size>``, ``file:<size>:...``."""
    reader: MemberReader | None = field(default=None, compare=False)
    """How to read it again; ``None`` for an image member not kept after its layer's pass."""

    @property
    def is_candidate(self) -> bool:
        """Whether its name says it may hold GPU code (``.so``, ``.cubin``, ``.fatbin``)."""
        return is_candidate(self.path)


def member_chunks(member: Member, chunk_size: int = CHUNK_SIZE) -> Iterator[bytes]:
    """The bytes of a member in order (only for members a source can reopen)."""
    if member.reader is None:
        raise ValueError(f"{member.path} cannot be read again outside its layer's pass")
    return member.reader.chunks(chunk_size)


def read_head(member: Member, limit: int) -> bytes:
    """The first ``limit`` bytes of a member."""
    out = bytearray()
    for chunk in member_chunks(member, max(1, min(limit, CHUNK_SIZE))):
        out += chunk
        if len(out) >= limit:
            break
    return bytes(out[:limit])


@dataclass(frozen=True)
class CapturedBytes:
    """A small member kept in memory during a layer pass (metadata, version files)."""

    data: bytes

    def chunks(self, chunk_size: int = CHUNK_SIZE) -> Iterator[bytes]:
        """The kept bytes."""
        for start in range(0, len(self.data), chunk_size):
            yield self.data[start : start + chunk_size]


class Unit(Protocol):
    """One piece of a build read in one pass: a library file, or an image layer."""

    @property
    def key(self) -> str:
        """Content identity: the cache key of :meth:`read`'s result."""
        ...

    @property
    def size(self) -> int:
        """Bytes this pass reads (for progress and for choosing worker processes)."""
        ...

    @property
    def label(self) -> str:
        """What to show in progress: a path or a layer digest."""
        ...

    def read(self, scan: ScanFn) -> dict[str, Any]:
        """Bring the bytes and scan each library with ``scan``; JSON-ready, cacheable result."""
        ...


class BuildSource(Protocol):
    """What provenance reads from a build: small files, by member."""

    def read_small(self, member: Member, limit: int) -> bytes:
        """The first ``limit`` bytes of a member (metadata and version files)."""
        ...


@dataclass
class Contents:
    """A build's final files once its units are read."""

    members: list[Member]
    """Every regular file (for images: of the final filesystem, as far as servewise keeps it)."""
    scans: dict[str, dict[str, Any] | None]
    """Per candidate path: its scan, or ``None`` when its first bytes are not a GPU object."""
    origin: dict[str, str]
    """Per scanned path: the key of the unit whose result gave it."""
    notes: list[str] = field(default_factory=list)
    """Things skipped or doubtful while reading."""

    def read_small(self, member: Member, limit: int) -> bytes:
        """The first ``limit`` bytes of a member; empty for one not kept after its layer's pass."""
        return read_head(member, limit) if member.reader is not None else b""


class Source(Protocol):
    """An engine build that servewise can read."""

    @property
    def ref(self) -> str:
        """What the user named."""
        ...

    @property
    def kind(self) -> str:
        """``file``, ``folder``, ``wheel``, ``image``, ``docker-archive``, ``oci-layout``."""
        ...

    def units(self) -> list[Unit]:
        """What must be read to know the build."""
        ...

    def contents(self, results: Mapping[str, dict[str, Any]]) -> Contents:
        """The build's final files, from every unit's result (keyed by unit key)."""
        ...

    def metadata(self) -> dict[str, Any]:
        """What the source itself says about the build (image digest, created date, URL...)."""
        ...


class SourceBase:
    """What every source shares: the REF it was opened from and its kind."""

    _kind = "file"

    def __init__(self, ref: str) -> None:
        self._ref = ref

    @property
    def ref(self) -> str:
        """What the user named."""
        return self._ref

    @property
    def kind(self) -> str:
        """The source's kind (see :class:`Source`)."""
        return self._kind

    def metadata(self) -> dict[str, Any]:
        """What the source says about the build beyond its files; nothing by default."""
        return {}


def member_unit_result(scan: dict[str, Any] | None) -> dict[str, Any]:
    """The result a single-library unit stores: its scan, or ``None`` when not a GPU object."""
    return {"scan": scan}


__all__ = [
    "CANDIDATE_RE", "CHUNK_SIZE", "BuildSource", "CapturedBytes", "Contents",
    "Member", "MemberReader", "ScanFn", "Source", "SourceBase", "Unit", "is_candidate",
    "member_chunks",
    "member_unit_result", "read_head",
]
