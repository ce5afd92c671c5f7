"""Reference-tool wrapper: GNU ``readelf`` as an oracle for the dynamic-symbol reader.

``readelf`` comes with binutils (Debian's ``binutils`` package, which every machine with
a C compiler has). :func:`dynamic_facts` runs ``readelf -dW`` and ``readelf --dyn-syms
-W`` on a file and returns the SONAME, the needed libraries and the exported dynamic
symbol names (defined, global/weak/unique binding, default or protected visibility,
not a section or file symbol) — the same definition servewise uses.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ReadelfFacts", "dynamic_facts", "find_readelf"]

_SONAME_RE = re.compile(r"\(SONAME\)\s+Library soname: \[(?P<name>[^\]]*)\]")
_NEEDED_RE = re.compile(r"\(NEEDED\)\s+Shared library: \[(?P<name>[^\]]*)\]")
#:    Num:    Value          Size Type    Bind   Vis      Ndx Name
_SYMBOL_RE = re.compile(
    r"^\s*\d+:\s+[0-9a-f]+\s+\S+\s+(?P<type>\S+)\s+(?P<bind><OS specific>: \d+|\S+)\s+"
    r"(?P<vis>\S+)\s+"
    r"(?P<ndx>\S+)\s+(?P<name>\S+)"
)


@dataclass(frozen=True)
class ReadelfFacts:
    """What readelf says about a shared object's dynamic linking."""

    soname: str | None
    needed: tuple[str, ...]
    exported: tuple[str, ...]
    """Exported dynamic symbol names, version suffixes (``@@V``) removed."""


def find_readelf() -> str | None:
    """The ``readelf`` binary, or None."""
    return shutil.which("readelf")


def dynamic_facts(path: Path, readelf: str | None = None) -> ReadelfFacts:
    """SONAME, DT_NEEDED and exported symbols of ``path`` as readelf prints them."""
    tool = readelf or find_readelf()
    assert tool is not None, "readelf is not installed"
    dynamic = subprocess.run([tool, "-dW", str(path)], capture_output=True, text=True).stdout
    symbols = subprocess.run(
        [tool, "--dyn-syms", "-W", str(path)], capture_output=True, text=True
    ).stdout
    soname = _SONAME_RE.search(dynamic)
    exported = []
    for line in symbols.splitlines():
        match = _SYMBOL_RE.match(line)
        if match is None or match["ndx"] == "UND":
            continue
        # STB_GNU_UNIQUE (10) prints as "<OS specific>: 10" when EI_OSABI is SYSV.
        bind = "UNIQUE" if match["bind"] == "<OS specific>: 10" else match["bind"]
        if bind not in ("GLOBAL", "WEAK", "UNIQUE") or match["type"] in ("SECTION", "FILE"):
            continue
        if match["vis"] not in ("DEFAULT", "PROTECTED"):
            continue
        exported.append(match["name"].split("@", 1)[0])
    return ReadelfFacts(
        soname=soname["name"] if soname else None,
        needed=tuple(m["name"] for m in _NEEDED_RE.finditer(dynamic)),
        exported=tuple(exported),
    )
