"""Where build bytes come from: files, folders, wheels, package indexes, images, archives.

:func:`open_source` turns a REF into a :class:`Source` through the table in
:mod:`servewise.sources.resolve`. The names below load on first use, so a command that only
needs one source module (a deadline, a model folder) does not import them all.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

_LAZY = {
    "BuildSource": "interface", "Contents": "interface", "Member": "interface",
    "Source": "interface", "Unit": "interface", "member_chunks": "interface",
    "read_head": "interface", "LocalSource": "local", "RESOLVERS": "resolve",
    "SourceOptions": "resolve", "open_source": "resolve", "WheelSource": "wheel",
}


def __getattr__(name: str) -> Any:
    """The public names, imported from their modules on first use."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"servewise.sources.{module}"), name)


__all__ = [
    "RESOLVERS", "BuildSource", "Contents", "LocalSource", "Member", "Source", "SourceOptions",
    "Unit", "WheelSource", "member_chunks", "open_source", "read_head",
]
