"""Start-up conditions every benchmark shares: commands run from compiled bytecode.

A regular ``pip install`` compiles each module to bytecode once, so a user's command reads
``.pyc`` files. An editable install (``make venv``) writes them on first import, unless
``PYTHONDONTWRITEBYTECODE`` is set, as it is on some machines (this one included): then every
``servewise`` command compiles its ~230 modules from source again, ~0.1 s of start-up that a
user never pays. The benchmarks measure what a user gets.
"""

from __future__ import annotations

import compileall
import os
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"


def bytecode_ready(*folders: Path) -> None:
    """Let child interpreters write bytecode, and compile ``folders`` (default ``src/``) now."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.dont_write_bytecode = False
    for folder in folders or (SRC,):
        compileall.compile_dir(folder, quiet=1)
