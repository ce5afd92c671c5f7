"""What a shared object's dynamic section says about it, as data.

Apart from :mod:`servewise.formats.dynamic`, which reads it, so that a report served from the
store (:mod:`servewise.inspect.report`) rebuilds it without loading the ELF readers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class DynamicInfo:
    """The dynamic-linking identity of one shared object."""

    soname: str | None
    """``DT_SONAME`` (``libnccl.so.2``), when the library sets one."""
    needed: tuple[str, ...]
    """``DT_NEEDED`` libraries, in order."""
    python_modules: tuple[str, ...]
    """Python extension modules it defines: ``X`` for every exported ``PyInit_X``."""
    exported: int
    """Number of exported (defined, global, visible) dynamic symbols."""
    namespaces: dict[str, int]
    """Exported symbols per namespace (C++ outer namespace or C prefix), most frequent first."""
    complete: bool = True
    """False when the symbol table could not be read (only SONAME, needs and modules known)."""
    sampled: bool = False
    """True when the table was large and the counts are estimates from a sample of it."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "soname": self.soname,
            "needed": list(self.needed),
            "python_modules": list(self.python_modules),
            "exported": self.exported,
            "namespaces": dict(self.namespaces),
            "complete": self.complete,
            "sampled": self.sampled,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DynamicInfo:
        """Rebuild from :meth:`to_dict` output."""
        return cls(
            soname=data["soname"],
            needed=tuple(data["needed"]),
            python_modules=tuple(data["python_modules"]),
            exported=int(data["exported"]),
            namespaces={str(k): int(v) for k, v in data["namespaces"].items()},
            complete=bool(data["complete"]),
            sampled=bool(data["sampled"]),
        )
