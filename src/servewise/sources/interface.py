"""What every build source gives the scanner: a list of members and their bytes.

A *member* is one file of an engine build: a file in a folder, or an entry of a
wheel. Members carry a picklable ``locator`` so a worker process can open the
same bytes on its own, and an ``identity`` that names the content without
reading it (the cache key).
"""

from __future__ import annotations

import re
from collections.abc import Generator
from dataclasses import dataclass
from typing import Protocol

#: Files worth scanning for GPU code, by name.
CANDIDATE_RE = re.compile(r"\.(?:so(?:\.\d+)*|cubin|fatbin)$")

#: Bytes per read when streaming a member.
CHUNK_SIZE = 4 * 2**20


@dataclass(frozen=True)
class Member:
    """One file of a build."""

    path: str
    """Path as found in the build, relative to its root (site-packages for installs), with ``/``."""
    size: int
    """Uncompressed size in bytes, as declared by the source."""
    identity: str
    """Content identity, read without the bytes: ``zip:<crc32>:<size>``, ``file:<size>:...``."""
    locator: tuple[str, ...]
    """How a worker reopens it: ``("file", path)`` or ``("zip", archive, offset, ...)``."""

    @property
    def is_candidate(self) -> bool:
        """Whether its name says it may hold GPU code (``.so``, ``.cubin``, ``.fatbin``)."""
        return CANDIDATE_RE.search(self.path) is not None


class BuildSource(Protocol):
    """A readable engine build: a file, a folder or an archive."""

    @property
    def ref(self) -> str:
        """What the user named."""
        ...

    @property
    def kind(self) -> str:
        """``file``, ``folder`` or ``wheel``."""
        ...

    def members(self) -> list[Member]:
        """Every regular file of the build (symlinks are not followed)."""
        ...

    def notes(self) -> list[str]:
        """Things skipped while listing (symlinks, unreadable files), for the report."""
        ...

    def read_small(self, member: Member, limit: int) -> bytes:
        """The first ``limit`` bytes of a member (for metadata files)."""
        ...


def member_chunks(locator: tuple[str, ...], chunk_size: int = CHUNK_SIZE) -> Generator[bytes]:
    """The bytes of a member in order, reopened from its locator (works in any process)."""
    from servewise.sources import local, wheel

    if locator[0] == "file":
        return local.file_chunks(locator[1], chunk_size)
    if locator[0] == "zip":
        return wheel.zip_member_chunks(locator, chunk_size)
    raise ValueError(f"unknown member locator {locator[0]!r}")
