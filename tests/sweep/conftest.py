"""Fixtures for sweep tests: a private store."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def store_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh store for the test (``SERVEWISE_CACHE_DIR``)."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("SERVEWISE_CACHE_DIR", str(folder))
    return folder
