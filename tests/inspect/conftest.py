"""Shared fixtures of the inspect tests: the GPU catalog, and a store of each test's own."""

from __future__ import annotations

from pathlib import Path

import pytest

from servewise.knowledge.gpus import GpuCatalog, load_gpu_catalog


@pytest.fixture(scope="session")
def catalog() -> GpuCatalog:
    """The shipped GPU catalog."""
    return load_gpu_catalog()


@pytest.fixture(autouse=True)
def _private_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test's scans go to a store of its own, never the developer's."""
    monkeypatch.setenv("SERVEWISE_CACHE_DIR", str(tmp_path / "cache"))
