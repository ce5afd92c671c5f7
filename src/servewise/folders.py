"""Where servewise keeps what it caches: one rule for every layer.

``$SERVEWISE_CACHE_DIR``, else ``$XDG_CACHE_HOME/servewise``, else ``~/.cache/servewise``.
The store, the recipe index and the parsed knowledge tables all live there.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_folder() -> Path:
    """The folder servewise caches in (it may not exist yet)."""
    explicit = os.environ.get("SERVEWISE_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "servewise"
