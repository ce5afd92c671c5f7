"""Sources whose files can be read one by one (folders, wheels): one unit per library.

:class:`MemberSource` implements :class:`~servewise.sources.interface.Source` for
them: a subclass lists its members (each with a reader), and every candidate
library becomes a :class:`MemberUnit` keyed by its content identity.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from itertools import chain
from typing import Any

from servewise.formats.magic import PREFIX_BYTES, object_kind
from servewise.sources.interface import (
    CHUNK_SIZE,
    Contents,
    Member,
    MemberReader,
    ScanFn,
    SourceBase,
    Unit,
    member_unit_result,
    read_head,
)


@dataclass(frozen=True)
class MemberUnit:
    """One library file, scanned on its own."""

    key: str
    size: int
    label: str
    reader: MemberReader

    def read(self, scan: ScanFn) -> dict[str, Any]:
        """Scan the file when its first bytes start an ELF object, an archive or a fatbin."""
        chunks: Iterator[bytes] = self.reader.chunks(CHUNK_SIZE)
        try:
            head: list[bytes] = []
            for chunk in chunks:
                head.append(chunk)
                if sum(len(part) for part in head) >= PREFIX_BYTES:
                    break
            if object_kind(b"".join(head)[:PREFIX_BYTES]) is None:
                return member_unit_result(None)
            return member_unit_result(scan(chain(head, chunks)))
        finally:
            close = getattr(chunks, "close", None)
            if close is not None:
                close()


class MemberSource(SourceBase):
    """Base of sources made of individually readable files."""

    _kind = "folder"

    def __init__(self, ref: str) -> None:
        super().__init__(ref)
        self._notes: list[str] = []
        self._members: list[Member] | None = None

    def list_members(self) -> list[Member]:
        """Every regular file; subclasses implement it."""
        raise TypeError(f"{type(self).__name__} does not list members")

    def notes(self) -> list[str]:
        """Things skipped while listing."""
        return list(self._notes)

    def members(self) -> list[Member]:
        """Every regular file, listed once."""
        if self._members is None:
            self._members = self.list_members()
        return self._members

    def candidates(self) -> list[Member]:
        """The members to scan: a file named directly whatever its name, else by name."""
        members = self.members()
        return members if self.kind == "file" else [m for m in members if m.is_candidate]

    def units(self) -> list[Unit]:
        """One unit per distinct library content."""
        seen: dict[str, Unit] = {}
        for member in self.candidates():
            if member.identity not in seen and member.reader is not None:
                seen[member.identity] = MemberUnit(
                    member.identity, member.size, member.path, member.reader
                )
        return list(seen.values())

    def contents(self, results: Mapping[str, dict[str, Any]]) -> Contents:
        """The members, with each candidate's scan from its unit's result."""
        candidates = self.candidates()
        return Contents(
            members=list(self.members()),
            scans={m.path: results[m.identity]["scan"] for m in candidates},
            origin={m.path: m.identity for m in candidates},
            notes=self.notes(),
        )

    def read_small(self, member: Member, limit: int) -> bytes:
        """The first ``limit`` bytes of a member."""
        return read_head(member, limit)
