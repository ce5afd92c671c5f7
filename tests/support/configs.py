"""Where the real ``config.json`` files of the dev logs live (the project's shared data)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from servewise.formats.hfconfig import HfConfig, parse_config
from support.paths import ROOT

#: shared/ beside the checkout (CI: a copy beside the clone), else the workplace's.
SHARED_CANDIDATES = (ROOT.parent / "shared", ROOT.parent.parent / "shared", Path("/work/shared"))


def find_shared() -> Path | None:
    """The shared/ folder that holds ``data/``: ``$SERVEWISE_SHARED_DIR`` first, else beside
    the checkout, else the workplace's; ``None`` without one."""
    env = os.environ.get("SERVEWISE_SHARED_DIR")
    candidates = [Path(env)] if env else []
    candidates += SHARED_CANDIDATES
    return next((c for c in candidates if (c / "data").is_dir()), None)


def shared_dir() -> Path:
    """The shared/ folder with its configs; tests that need it skip without it."""
    found = find_shared()
    if found is None or not (found / "data" / "configs").is_dir():
        pytest.skip("shared/data/configs is not beside the checkout")
    return found


def shared_config(name: str) -> HfConfig:
    """The parsed ``config.json`` of ``shared/data/configs/NAME``."""
    path = shared_dir() / "data" / "configs" / name / "config.json"
    return parse_config(path.read_bytes(), source=str(path))
