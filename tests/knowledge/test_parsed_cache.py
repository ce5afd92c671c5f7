"""Shipped tables are parsed once and kept by digest: a changed file is parsed again, and a
broken cache file is ignored."""

from __future__ import annotations

from pathlib import Path

import pytest

from servewise.knowledge._load import _parsed


def test_the_cache_follows_the_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERVEWISE_CACHE_DIR", str(tmp_path))
    first = _parsed('[[x]]\nid = "a"\n', "servewise/knowledge/data/t.toml")
    assert first == {"x": [{"id": "a"}]}
    cached = list((tmp_path / "knowledge").glob("t-*.pickle"))
    assert len(cached) == 1
    assert _parsed('[[x]]\nid = "a"\n', "t.toml") == first       # read back
    assert _parsed('[[x]]\nid = "b"\n', "t.toml") == {"x": [{"id": "b"}]}  # new text, new key
    for path in (tmp_path / "knowledge").glob("*.pickle"):
        path.write_bytes(b"not a pickle")
    assert _parsed('[[x]]\nid = "b"\n', "t.toml") == {"x": [{"id": "b"}]}


def test_an_unwritable_cache_folder_only_costs_time(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("SERVEWISE_CACHE_DIR", str(blocker))
    assert _parsed('v = 1\n', "t.toml") == {"v": 1}
