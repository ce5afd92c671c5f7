"""Is this an engine build at all? What a scan saw, and whether it found an engine's core library.

A gate verdict needs evidence: a folder with nothing in it, a zero-byte ``x.so``, or a
virtual environment without an engine must never "pass". :func:`scan_coverage`
summarises what the scan looked at (files listed and read, ELF objects, CUDA-bearing
libraries, known libraries) and which libraries are an engine's core (the known-library
table's ``core = true`` entries: vLLM's ``_C``, sgl-kernel's common ops, ...). When there
is none, :attr:`ScanCoverage.reason` says why there can be no verdict and what to point
servewise at instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from servewise.inspect.report import BuildReport, LibraryReport
from servewise.knowledge.libraries import LibraryTable, load_library_table

#: What to point servewise at instead of a build without an engine.
NEXT_STEP = (
    "point it at an engine build: the site-packages folder or virtual environment the engine "
    "is installed in, its wheel (.whl), or its container image"
)


def is_cuda_bearing(library: LibraryReport) -> bool:
    """Whether a library carries GPU code of its own or JIT-dispatch evidence."""
    return library.has_compiled_code or bool(library.dispatch)


@dataclass(frozen=True)
class ScanCoverage:
    """What a scan of one build saw, for judging whether a verdict is possible."""

    files_listed: int
    """Regular files the source listed."""
    files_read: int
    """Files read (or taken from the store) because they may hold GPU code."""
    elf_objects: int
    """Of those, the ELF objects, archives and cubins (the libraries of the report)."""
    cuda_libraries: tuple[str, ...]
    """Paths of libraries with SASS, PTX or JIT-dispatch evidence."""
    known_libraries: tuple[str, ...]
    """Known-library ids found, in path order, each once."""
    engine_core: tuple[str, ...]
    """Paths of engine core libraries (``vllm/_C.abi3.so``, ``sgl_kernel/.../common_ops``)."""

    @property
    def has_engine_core(self) -> bool:
        """Whether an engine's core library is in the build."""
        return bool(self.engine_core)

    @property
    def summary(self) -> str:
        """What was looked at, in one clause."""
        known = ", ".join(self.known_libraries) if self.known_libraries else "none"
        return (
            f"listed {self.files_listed} files, read {self.files_read}, found "
            f"{self.elf_objects} ELF objects, {len(self.cuda_libraries)} with GPU code; "
            f"known libraries: {known}"
        )

    @property
    def reason(self) -> str | None:
        """Why no engine was found (``None`` when the build has an engine core)."""
        if self.has_engine_core:
            return None
        if not self.cuda_libraries:
            return f"no engine build here: no engine core library and no GPU code ({self.summary})"
        return (
            f"GPU code but no engine core library (vLLM's _C, sgl-kernel's common ops, "
            f"TensorRT-LLM's): {self.summary}"
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: ``engine_core`` is ``null`` when none was found."""
        return {
            "engine_core": list(self.engine_core) or None,
            "engine_core_reason": self.reason,
            "files_listed": self.files_listed,
            "files_read": self.files_read,
            "elf_objects": self.elf_objects,
            "cuda_libraries": len(self.cuda_libraries),
            "known_libraries": list(self.known_libraries),
        }


def scan_coverage(report: BuildReport, table: LibraryTable | None = None) -> ScanCoverage:
    """Summarise ``report``: what was read and which libraries are an engine's core."""
    table = table or load_library_table()
    known: list[str] = []
    core: list[str] = []
    for library in report.libraries:
        ident = library.provenance.library_id
        if ident is None:
            continue
        known.append(ident)
        if ident in table and table.get(ident).core:
            core.append(library.path)
    return ScanCoverage(
        files_listed=report.files_listed,
        files_read=report.files_read,
        elf_objects=len(report.libraries),
        cuda_libraries=tuple(lib.path for lib in report.libraries if is_cuda_bearing(lib)),
        known_libraries=tuple(dict.fromkeys(known)),
        engine_core=tuple(core),
    )


__all__ = ["NEXT_STEP", "ScanCoverage", "is_cuda_bearing", "scan_coverage"]
