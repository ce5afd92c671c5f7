"""Fixtures of the hostile-input suite; the bounded runner is :mod:`support.hostile`."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _private_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each case has its own store, cache and user folder, never the developer's."""
    monkeypatch.setenv("SERVEWISE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("SERVEWISE_DATA_DIR", str(tmp_path / "user"))
