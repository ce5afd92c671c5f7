"""Bounded reads: regular files only, within a size, never waiting on a FIFO."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from servewise.errors import SourceError
from servewise.sources.bounded import escapes, open_regular, read_regular, read_regular_text


def test_a_regular_file_within_its_limit(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("hello")
    assert read_regular(path, limit=5) == b"hello"
    assert read_regular_text(path) == "hello"
    with open_regular(path) as handle:
        assert handle.read() == b"hello"
    with pytest.raises(SourceError, match="more than 4 bytes") as info:
        read_regular(path, limit=4)
    assert info.value.fields["expected"] == "at most 4 bytes"


@pytest.mark.parametrize("kind", ["dev_zero", "fifo", "folder"])
def test_anything_else_is_refused_at_once(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "x"
    if kind == "dev_zero":
        path.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()
    with pytest.raises(SourceError, match="not a regular file"):
        read_regular(path)
    with pytest.raises(SourceError, match="not a regular file"):
        open_regular(path)


def test_missing_files_pass_through(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_regular(tmp_path / "missing")


def test_escapes(tmp_path: Path) -> None:
    root = tmp_path / "clone"
    root.mkdir()
    (root / "in.yaml").write_text("")
    (root / "out.yaml").symlink_to(tmp_path)
    (root / "loop").symlink_to(root / "loop")
    assert not escapes(root / "in.yaml", root)
    assert escapes(root / "out.yaml", root)
    assert escapes(root / "loop", root)
