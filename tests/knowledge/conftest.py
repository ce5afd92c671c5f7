"""Shared set-up of the knowledge tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from servewise.knowledge._load import ENV_VAR


@pytest.fixture(autouse=True)
def _no_user_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Keep the developer's own ~/.config/servewise out of these tests."""
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "empty"))
