"""Shared fixtures of the CLI tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _private_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each command's store is the test's own, never the developer's."""
    monkeypatch.setenv("SERVEWISE_CACHE_DIR", str(tmp_path / "cache"))
