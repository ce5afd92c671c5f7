"""The kernel gate: does each library of a build have code for this GPU, and does it matter?

A verdict per library:

``native``
    SASS that loads on the GPU (same major, minor at or below; ``a`` exact; ``f`` family).
``ptx-jit``
    No SASS for it, but PTX the driver JIT-compiles at first use.
``jit-dispatch``
    A library that JIT-compiles its kernels at run time and whose host code
    dispatches to this GPU's architecture (DeepGEMM's ``sm120_*`` names).
``missing``
    GPU code, but none for this GPU.
``no-gpu-code``
    No compiled GPU code and no dispatch evidence (a host-only helper).

A gap fails the gate only when the library is *required*: the engine's core
library, one named with ``--require``, or one the ``--model`` family needs.
With ``strict`` every gap fails. Everything else is reported with its reason.

A verdict needs evidence: a build with no engine core library fails unless
``--require``/``--model`` named what to check and the build has GPU code, and a
build with no GPU code at all always fails (an empty folder, a file that is not a
library, a virtual environment without an engine).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from servewise.archs import ComputeCapability, arch_of_name, ptx_runs_on, sass_runs_on
from servewise.errors import UsageError
from servewise.inspect.engine_core import NEXT_STEP, ScanCoverage, scan_coverage
from servewise.inspect.report import BuildReport, LibraryReport
from servewise.knowledge.gpus import Gpu
from servewise.knowledge.libraries import KnownLibrary, LibraryTable, load_library_table
from servewise.knowledge.models import ModelTable, load_model_table
from servewise.knowledge.patterns import close_names

VERDICTS = ("native", "ptx-jit", "jit-dispatch", "missing", "no-gpu-code")


@dataclass(frozen=True)
class LibraryVerdict:
    """The gate's answer for one library."""

    path: str
    """Path as found in the build."""
    library_id: str | None
    """Known-library id, if the table knows it."""
    verdict: str
    """One of :data:`VERDICTS`."""
    matching: tuple[str, ...]
    """The archs that serve the GPU (SASS, PTX or dispatch evidence)."""
    required_by: tuple[str, ...]
    """Why the library must work: ``engine core``, ``--require X``, ``model Y``."""
    status: str
    """``ok``, ``warning`` (works at a cost), ``info`` (a gap that does not matter), ``error``."""
    reason: str
    """One sentence for a person."""

    @property
    def required(self) -> bool:
        """Whether a gap here fails the gate."""
        return bool(self.required_by)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "path": self.path,
            "library_id": self.library_id,
            "verdict": self.verdict,
            "matching_archs": list(self.matching),
            "required": self.required,
            "required_by": list(self.required_by),
            "status": self.status,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class GateResult:
    """Every library's verdict for one GPU, and whether the build passes."""

    ref: str
    """The build."""
    gpu: Gpu
    """The GPU asked about."""
    strict: bool
    """Whether every gap counted."""
    verdicts: tuple[LibraryVerdict, ...]
    """One per library, in path order."""
    absent: tuple[tuple[str, str], ...]
    """Required libraries not found in the build at all: (library id, why required)."""
    coverage: ScanCoverage
    """What the scan saw, and the build's engine core libraries."""
    named: bool = False
    """Whether ``--require`` or ``--model`` named libraries that must support the GPU."""
    closest: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Per absent required name: the build's libraries that look closest (``path (id)``)."""

    @property
    def basis(self) -> str | None:
        """What the verdict rests on: ``engine core``, ``required libraries``, or ``None``.

        Without an engine core library there is nothing to judge unless the user named
        what must be checked; without any GPU code there is nothing to judge at all.
        """
        if self.coverage.has_engine_core:
            return "engine core"
        if self.named and self.coverage.cuda_libraries:
            return "required libraries"
        return None

    @property
    def no_verdict_reason(self) -> str | None:
        """Why the gate cannot pass this build (``None`` when it has a basis)."""
        if self.basis is not None:
            return None
        reason = self.coverage.reason or "no engine core library"
        if self.coverage.cuda_libraries:
            return (f"{reason}; name the libraries that must support the GPU with --require "
                    "(or --model), or point it at the whole engine build")
        return f"{reason}; {NEXT_STEP}"

    @property
    def passed(self) -> bool:
        """A verdict with evidence, and no error: every required library supports the GPU."""
        return (self.basis is not None and not self.absent
                and all(v.status != "error" for v in self.verdicts))

    @property
    def exit_code(self) -> int:
        """0 when it passed, 1 when not."""
        return 0 if self.passed else 1

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "ref": self.ref,
            "gpu": {
                "id": self.gpu.id,
                "name": self.gpu.name,
                "compute_capability": str(self.gpu.cc),
                "sm": self.gpu.arch.sass_name,
            },
            "passed": self.passed,
            "strict": self.strict,
            "verdict_basis": self.basis,
            "no_verdict_reason": self.no_verdict_reason,
            **self.coverage.to_dict(),
            "libraries": [v.to_dict() for v in self.verdicts],
            "absent_required": [
                {"library_id": i, "required_by": why,
                 "closest_in_build": list(self.closest.get(i, ()))}
                for i, why in self.absent
            ],
        }


def is_jit(library: LibraryReport, known: KnownLibrary | None) -> bool:
    """Whether the library compiles its kernels at run time: known as JIT, or it has no
    compiled GPU code but names archs it dispatches to."""
    return (known is not None and known.jit) or (not library.has_compiled_code
                                                 and bool(library.dispatch))


def classify(
    library: LibraryReport, cc: ComputeCapability, known: KnownLibrary | None
) -> tuple[str, tuple[str, ...]]:
    """The verdict for one library on a device, with the archs that serve it."""
    sass = tuple(a for a in library.scan.sass if sass_runs_on(arch_of_name(a), cc))
    if sass:
        return "native", sass
    ptx = tuple(a for a in library.scan.ptx if ptx_runs_on(arch_of_name(a), cc))
    if ptx:
        return "ptx-jit", ptx
    dispatch = library.dispatch
    if is_jit(library, known):
        served = tuple(a for a in dispatch if sass_runs_on(arch_of_name(a), cc))
        return ("jit-dispatch", served) if served else ("missing", ())
    if library.has_compiled_code:
        return "missing", ()
    return "no-gpu-code", ()


def _what_it_has(library: LibraryReport) -> str:
    parts = []
    if library.scan.sass:
        parts.append("SASS " + ", ".join(library.scan.sass))
    if library.scan.ptx:
        parts.append("PTX " + ", ".join(library.scan.ptx))
    if library.dispatch:
        parts.append("dispatch " + ", ".join(library.dispatch))
    return "; ".join(parts) or "nothing"


def cuda_cc(gpu: Gpu) -> ComputeCapability:
    """The GPU's CUDA compute capability; a GPU without CUDA (AMD) is a UsageError saying
    that the gate judges CUDA builds only."""
    gpu.arch  # raises for a GPU without CUDA  # noqa: B018
    assert gpu.cc is not None
    return gpu.cc


def _reason(
    verdict: str, matching: tuple[str, ...], library: LibraryReport, gpu: Gpu,
    known: KnownLibrary | None, required_by: tuple[str, ...],
) -> str:
    cc = gpu.cc
    if verdict == "native":
        return f"{', '.join(matching)} loads on CC {cc}"
    if verdict == "ptx-jit":
        return (f"runs through PTX JIT: no SASS for CC {cc}, the driver compiles "
                f"{', '.join(matching)} at first use (slower start)")
    if verdict == "jit-dispatch":
        count = sum(len(library.dispatch[a]) for a in matching)
        return f"JIT-compiles its kernels; {count} dispatch names for {', '.join(matching)}"
    if verdict == "no-gpu-code":
        return "no GPU code of its own (host-only)"
    has = _what_it_has(library)
    if required_by:
        return f"no code for CC {cc} (has {has}); required by {', '.join(required_by)}"
    if known is not None:
        note = _first_sentence(known.coverage_note) or (
            f"built for {', '.join(known.intended_archs)}"
        )
        fallback = f"; without it: {_first_sentence(known.fallback)}" if known.fallback else ""
        return f"{note} (has {has}){fallback}"
    return f"unknown library: no code for this GPU (has {has})"


def _first_sentence(text: str) -> str:
    """The first sentence of a table note, without its trailing period."""
    text = " ".join(text.split())
    ends = [i for i in (text.find(". "), text.find("; ")) if i > 0]
    return (text[: min(ends)] if ends else text).rstrip(".")


def _status(verdict: str, required: bool, strict: bool) -> str:
    if verdict in ("native", "jit-dispatch"):
        return "ok"
    if verdict == "ptx-jit":
        return "warning"
    if verdict == "no-gpu-code":
        return "error" if required and strict else "info"
    return "error" if required or strict else "info"


def matches_require(name: str, known: KnownLibrary | None, library: LibraryReport) -> bool:
    """Whether ``--require name`` (resolved to ``known`` when it names a known library) is it."""
    if known is not None and library.provenance.library_id == known.id:
        return True
    if library.provenance.library_id == name:
        return True
    base = library.path.rsplit("/", 1)[-1]
    return name in (library.path, base) or base.startswith(name + ".")


def _labels(library: LibraryReport) -> list[str]:
    """What a user might call a library of the build: its id, name, file stem and folder."""
    base = library.path.rsplit("/", 1)[-1]
    parts = library.path.split("/")
    labels = [base.split(".", 1)[0], *(p for p in parts[-3:-1] if p)]
    if library.provenance.library_id:
        labels.append(library.provenance.library_id)
    if library.provenance.library_name:
        labels.append(library.provenance.library_name)
    return labels


def closest_in_build(
    name: str, report: BuildReport, known: KnownLibrary | None = None
) -> tuple[str, ...]:
    """The build's libraries that look most like ``name`` (or the known library it names).

    Compared by edit distance against each library's id, display name, file stem
    and folder names; each result reads ``path (library id)``.
    """
    wanted = [name, *((known.id, known.name, *known.aliases) if known else ())]
    by_label: dict[str, list[LibraryReport]] = {}
    for library in report.libraries:
        for label in _labels(library):
            by_label.setdefault(label, []).append(library)
    found: list[str] = []
    for want in wanted:
        for label in close_names(want, by_label):
            for library in by_label[label]:
                ident = library.provenance.library_id
                found.append(f"{library.path} ({ident})" if ident else library.path)
    return tuple(dict.fromkeys(found))[:5]


def _unknown_name(name: str, report: BuildReport, table: LibraryTable) -> UsageError:
    known = [table.resolve(n) for n in table.closest(name)]
    ids = tuple(dict.fromkeys(k.id for k in known if k is not None))
    near = closest_in_build(name, report)
    hints = []
    if ids:
        hints.append("known libraries with a similar name: " + ", ".join(ids))
    else:
        hints.append("known ids: " + ", ".join(table.ids()))
    if near:
        hints.append("closest in this build: " + "; ".join(near))
    hints.append("`servewise inspect` lists the build's libraries; a file name works too")
    message = f"--require {name}: no library of that name in the build, and no known library"
    if ids:
        message += f"; did you mean {ids[0]}?"
    return UsageError(
        message,
        hint="; ".join(hints),
        found=name,
        close_matches=list(ids),
        closest_in_build=list(near),
    )


def gate(
    report: BuildReport,
    gpu: Gpu,
    *,
    require: tuple[str, ...] = (),
    model: str | None = None,
    strict: bool = False,
    libraries: LibraryTable | None = None,
    models: ModelTable | None = None,
) -> GateResult:
    """Judge every library of ``report`` for ``gpu``.

    ``require`` names libraries by known id (``deep_gemm``), alias (``deepgemm``),
    file name or path; ``model`` adds the libraries that model family needs. A
    name that is neither in the build nor known raises
    :class:`~servewise.errors.UsageError` naming the closest known libraries and
    the closest libraries of the build; a known library that is absent gets the
    build's closest libraries in :attr:`GateResult.closest`.
    """
    cuda_cc(gpu)  # the gate judges CUDA builds: an AMD GPU is a UsageError
    table = libraries or load_library_table()
    wanted: dict[str, list[str]] = {}
    for name in require:
        wanted.setdefault(name, []).append(f"--require {name}")
    if model is not None:
        family = (models or load_model_table()).require(model)
        for library_id in family.requires:
            wanted.setdefault(library_id, []).append(f"model {family.id}")
    resolved = {name: table.resolve(name) for name in wanted}
    verdicts: list[LibraryVerdict] = []
    satisfied: set[str] = set()
    for library in report.libraries:
        known = table.get(library.provenance.library_id) if library.provenance.library_id else None
        reasons: list[str] = []
        if known is not None and known.core:
            reasons.append("engine core")
        for name, why in wanted.items():
            if matches_require(name, resolved[name], library):
                reasons.extend(why)
                satisfied.add(name)
        required_by = tuple(dict.fromkeys(reasons))
        verdict, matching = classify(library, cuda_cc(gpu), known)
        verdicts.append(
            LibraryVerdict(
                path=library.path,
                library_id=library.provenance.library_id,
                verdict=verdict,
                matching=matching,
                required_by=required_by,
                status=_status(verdict, bool(required_by), strict),
                reason=_reason(verdict, matching, library, gpu, known, required_by),
            )
        )
    for name in sorted(n for n in wanted.keys() - satisfied if resolved[n] is None):
        raise _unknown_name(name, report, table)
    absent = tuple(
        (name, ", ".join(why)) for name, why in wanted.items() if name not in satisfied
    )
    closest = {name: closest_in_build(name, report, resolved[name]) for name, _ in absent}
    return GateResult(report.ref, gpu, strict, tuple(verdicts), absent,
                      coverage=scan_coverage(report, table), named=bool(wanted),
                      closest=closest)
