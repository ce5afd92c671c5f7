"""Shared set-up of the recipe tests: a private user folder and the real vllm-project/recipes."""

from __future__ import annotations

from pathlib import Path

import pytest

from servewise.knowledge._load import ENV_VAR
from support.configs import find_shared


@pytest.fixture(autouse=True)
def _private_user_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Keep the developer's own ~/.config/servewise out of these tests."""
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "user"))
    monkeypatch.setenv("SERVEWISE_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def user_dir(tmp_path: Path) -> Path:
    """The test's user data folder (``$SERVEWISE_DATA_DIR``)."""
    return tmp_path / "user"


def _shared_recipes(name: str) -> Path:
    shared = find_shared()
    path = shared / "data" / "recipes" / name if shared else None
    if path is None or not path.is_dir():
        pytest.skip(f"shared/data/recipes/{name} is not beside the checkout")
    return path


@pytest.fixture(scope="session")
def vllm_recipes() -> Path:
    """The real vllm-project/recipes files in shared/ (read there, never copied in)."""
    return _shared_recipes("vllm-project-recipes")


@pytest.fixture(scope="session")
def cookbook() -> Path:
    """The SGLang cookbook facts in shared/."""
    return _shared_recipes("sglang-cookbook")
