"""Where build bytes come from: files, folders, wheels, package indexes, images, archives.

:func:`open_source` turns a REF into a :class:`Source` through the table in
:mod:`servewise.sources.resolve`.
"""

from __future__ import annotations

from servewise.sources.interface import (
    BuildSource,
    Contents,
    Member,
    Source,
    Unit,
    member_chunks,
    read_head,
)
from servewise.sources.local import LocalSource
from servewise.sources.resolve import RESOLVERS, SourceOptions, open_source
from servewise.sources.wheel import WheelSource

__all__ = [
    "RESOLVERS", "BuildSource", "Contents", "LocalSource", "Member", "Source", "SourceOptions",
    "Unit", "WheelSource", "member_chunks", "open_source", "read_head",
]
