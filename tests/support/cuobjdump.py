"""Reference-tool wrapper: NVIDIA ``cuobjdump`` as an oracle for differential tests.

``cuobjdump`` comes from the PyPI wheel ``nvidia-cuda-cuobjdump`` (a ``[test]`` extra of
servewise). The wheel has no console script: it installs the binary as
``<site-packages>/nvidia/cu13/bin/cuobjdump`` (``nvidia/cu12/bin/...`` for the 12.x
wheels). :func:`find_cuobjdump` looks there first, then on ``PATH``.

Spelling. ``cuobjdump --list-elf`` names cubins ``<file>.<n>.sm_90a.cubin`` but prints
family-specific cubins (``sm_120f``) as plain ``sm_120``; ``--list-ptx`` names PTX
``<file>.<n>.sm_90.ptx``. servewise keeps the ``f`` and calls PTX ``compute_90``.
:func:`list_archs` returns servewise spelling as far as cuobjdump allows (PTX becomes
``compute_NN``; a lost ``f`` cannot be restored), and :func:`normalise_for_cuobjdump`
maps servewise spelling to what cuobjdump can show, so a differential test compares like
with like. The header dump (``cuobjdump -all FILE``, see :func:`header_entries`) does
keep ``sm_120f`` for cubins inside a fatbin and marks compressed entries; it prints
nothing for a standalone ``.cubin``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import shutil
import site
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CuobjdumpError",
    "HeaderEntry",
    "find_cuobjdump",
    "header_archs",
    "header_entries",
    "list_archs",
    "normalise_for_cuobjdump",
]

#: Where the wheels put the binary, relative to a site-packages directory.
_WHEEL_RELPATHS: tuple[str, ...] = (
    "nvidia/cu13/bin/cuobjdump",
    "nvidia/cu12/bin/cuobjdump",
    "nvidia/cuda_cuobjdump/bin/cuobjdump",
)

#: cuobjdump's messages for files without device code (it then exits 255).
_NO_DEVICE_CODE = ("does not contain device code",)

_LIST_RE = re.compile(r"^(?:ELF|PTX) file\s+\d+:\s+(?P<name>\S+)\s*$")
_ARCH_IN_NAME_RE = re.compile(r"\.(?P<arch>sm_\d+[a-z]?)\.(?:cubin|ptx)$")
_HEADER_RE = re.compile(r"^Fatbin (?P<kind>elf|ptx) code:")
_HEADER_ARCH_RE = re.compile(r"^arch = (?P<arch>sm_\d+[a-z]?)\s*$")


class CuobjdumpError(RuntimeError):
    """cuobjdump failed on a file for a reason other than "no device code"."""


def _site_dirs() -> list[Path]:
    """Site-packages directories of the running interpreter, most specific first."""
    dirs: list[Path] = []
    spec = importlib.util.find_spec("nvidia")
    if spec is not None and spec.submodule_search_locations:
        # ``nvidia`` is a namespace package: its parents are the site dirs that hold it.
        dirs.extend(Path(p).parent for p in spec.submodule_search_locations)
    for key in ("purelib", "platlib"):
        dirs.append(Path(sysconfig.get_paths()[key]))
    with contextlib.suppress(AttributeError):  # some virtualenv builds lack it
        dirs.extend(Path(p) for p in site.getsitepackages())
    dirs.extend(Path(p) for p in sys.path if p.endswith(("site-packages", "dist-packages")))
    seen: set[Path] = set()
    unique: list[Path] = []
    for d in dirs:
        if d not in seen:
            seen.add(d)
            unique.append(d)
    return unique


def find_cuobjdump() -> Path | None:
    """Return the ``cuobjdump`` to use, or ``None`` when there is none.

    Order: ``$SERVEWISE_CUOBJDUMP`` if set; the ``nvidia-cuda-cuobjdump`` wheel in the
    running interpreter's site-packages (``nvidia/cu13/bin/cuobjdump``); ``PATH``;
    ``/usr/local/cuda/bin``.
    """
    override = os.environ.get("SERVEWISE_CUOBJDUMP")
    if override:
        p = Path(override)
        return p if p.is_file() and os.access(p, os.X_OK) else None
    for d in _site_dirs():
        for rel in _WHEEL_RELPATHS:
            p = d / rel
            if p.is_file() and os.access(p, os.X_OK):
                return p
    on_path = shutil.which("cuobjdump")
    if on_path:
        return Path(on_path)
    fallback = Path("/usr/local/cuda/bin/cuobjdump")
    if fallback.is_file() and os.access(fallback, os.X_OK):
        return fallback
    return None


def _run(tool: Path, args: list[str], path: Path) -> str | None:
    """Run cuobjdump; return stdout, or ``None`` when the file has no device code."""
    proc = subprocess.run(
        [str(tool), *args, str(path)],
        capture_output=True,
        text=True,
        errors="replace",
        timeout=60,
        check=False,
    )
    text = proc.stdout + proc.stderr
    if any(m in text for m in _NO_DEVICE_CODE):
        return None
    if proc.returncode != 0:
        raise CuobjdumpError(
            f"{tool} {' '.join(args)} {path} exited {proc.returncode}: {text.strip()[:500]}"
        )
    return proc.stdout


def _ptx_to_compute(arch: str) -> str:
    """cuobjdump's PTX name ``sm_90`` (or ``sm_90a``) -> ``compute_90`` (``compute_90a``)."""
    return "compute_" + arch.removeprefix("sm_")


def list_archs(path: str | os.PathLike[str], tool: Path | None = None) -> tuple[set[str], set[str]]:
    """Return ``(elf_archs, ptx_archs)`` of *path* from ``--list-elf`` / ``--list-ptx``.

    ELF archs are ``sm_NN`` / ``sm_NNa`` (a family ``f`` is lost by cuobjdump, so compare
    against :func:`normalise_for_cuobjdump` of the expected names); PTX archs are
    ``compute_NN``. Both sets are empty for files without device code (host-only
    libraries, cubins embedded as byte arrays: cuobjdump then prints "does not contain
    device code" and exits 255). Runs ``cuobjdump -all --list-elf`` / ``-all --list-ptx``
    so both ``.nv_fatbin`` and ``__nv_relfatbin`` count; a standalone ``.cubin`` yields
    its one ELF arch.

    Raises :class:`FileNotFoundError` if cuobjdump is missing and :class:`CuobjdumpError`
    if it fails for another reason.
    """
    exe = tool or find_cuobjdump()
    if exe is None:
        raise FileNotFoundError("cuobjdump not found (pip install nvidia-cuda-cuobjdump)")
    p = Path(path)
    elf: set[str] = set()
    ptx: set[str] = set()
    for flag, into, convert in (
        ("--list-elf", elf, lambda a: a),
        ("--list-ptx", ptx, _ptx_to_compute),
    ):
        # -all: include __nv_relfatbin (a linked -rdc library lists it only then).
        out = _run(exe, ["-all", flag], p)
        if out is None:
            return set(), set()
        for line in out.splitlines():
            m = _LIST_RE.match(line.strip())
            if not m:
                continue
            a = _ARCH_IN_NAME_RE.search(m.group("name"))
            if a:
                into.add(convert(a.group("arch")))
    return elf, ptx


@dataclass(frozen=True)
class HeaderEntry:
    """One entry of cuobjdump's fatbin header dump."""

    kind: str  #: ``"elf"`` or ``"ptx"``
    arch: str  #: servewise spelling: ``sm_120f`` for ELF, ``compute_90`` for PTX
    compressed: bool  #: cuobjdump printed ``compressed`` (zstd or LZ4 alike)


def header_entries(path: str | os.PathLike[str], tool: Path | None = None) -> list[HeaderEntry]:
    """Return every fatbin entry of *path* from cuobjdump's header dump (``-all``).

    ``-all`` covers ``.nv_fatbin`` and ``__nv_relfatbin`` (without it cuobjdump skips the
    relocatable copies in a linked ``-rdc`` library). Unlike :func:`list_archs` this keeps
    the family suffix (``arch = sm_120f``). It only sees cubins inside fatbins: a
    standalone ``.cubin`` and files without device code give ``[]``.
    """
    exe = tool or find_cuobjdump()
    if exe is None:
        raise FileNotFoundError("cuobjdump not found (pip install nvidia-cuda-cuobjdump)")
    out = _run(exe, ["-all"], Path(path))
    entries: list[HeaderEntry] = []
    if out is None:
        return entries
    kind: str | None = None
    arch: str | None = None
    compressed = False

    def flush() -> None:
        if kind is not None and arch is not None:
            name = arch if kind == "elf" else _ptx_to_compute(arch)
            entries.append(HeaderEntry(kind, name, compressed))

    for raw in out.splitlines():
        line = raw.strip()
        h = _HEADER_RE.match(line)
        if h:
            flush()
            kind, arch, compressed = h.group("kind"), None, False
            continue
        a = _HEADER_ARCH_RE.match(line)
        if a and kind is not None:
            arch = a.group("arch")
        elif line == "compressed" and kind is not None:
            compressed = True
    flush()
    return entries


def header_archs(
    path: str | os.PathLike[str], tool: Path | None = None
) -> tuple[set[str], set[str]]:
    """Return ``(elf_archs, ptx_archs)`` from :func:`header_entries` (keeps ``f``)."""
    entries = header_entries(path, tool)
    return (
        {e.arch for e in entries if e.kind == "elf"},
        {e.arch for e in entries if e.kind == "ptx"},
    )


def normalise_for_cuobjdump(arch: str) -> str:
    """Map a servewise arch name to what ``cuobjdump --list-*`` can show.

    ``sm_120f`` -> ``sm_120`` (cuobjdump drops the family suffix); ``sm_90a`` and plain
    ``sm_90`` are unchanged; ``compute_NN`` is unchanged (:func:`list_archs` already
    turns cuobjdump's PTX ``sm_NN`` into ``compute_NN``).
    """
    if arch.startswith("sm_") and arch.endswith("f"):
        return arch[:-1]
    return arch
