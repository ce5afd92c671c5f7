"""Fixtures for launch tests: the stand-in engine's command and a private store."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from support.engine import free_port

STANDIN = Path(__file__).resolve().parents[1] / "support" / "standin_engine.py"


@pytest.fixture
def standin() -> Callable[..., tuple[list[str], int]]:
    """``standin(*options)``: the stand-in engine's argv on a free port, and the port."""
    def make(*options: str) -> tuple[list[str], int]:
        port = free_port()
        return [sys.executable, str(STANDIN), "--port", str(port), *options], port

    return make


@pytest.fixture
def store_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh store for the test (``SERVEWISE_CACHE_DIR``)."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("SERVEWISE_CACHE_DIR", str(folder))
    return folder
