"""Where the real ``config.json`` files of the dev logs live (the project's shared data)."""

from __future__ import annotations

from pathlib import Path

import pytest

from servewise.formats.hfconfig import HfConfig, parse_config
from support.paths import ROOT

#: shared/ beside the checkout (CI: a copy beside the clone), else the workplace's.
SHARED_CANDIDATES = (ROOT.parent / "shared", ROOT.parent.parent / "shared", Path("/work/shared"))


def shared_dir() -> Path:
    """The shared/ folder; tests that need it skip (or fail under CI) without it."""
    for candidate in SHARED_CANDIDATES:
        if (candidate / "data" / "configs").is_dir():
            return candidate
    pytest.skip("shared/data/configs is not beside the checkout")


def shared_config(name: str) -> HfConfig:
    """The parsed ``config.json`` of ``shared/data/configs/NAME``."""
    path = shared_dir() / "data" / "configs" / name / "config.json"
    return parse_config(path.read_bytes(), source=str(path))
