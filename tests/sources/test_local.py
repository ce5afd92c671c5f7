"""Tests for local sources: a single file, a folder, a virtual environment, odd entries."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from servewise.errors import ServewiseError, SourceError
from servewise.formats.magic import PREFIX_BYTES
from servewise.sources import LocalSource, WheelSource, member_chunks, open_source
from servewise.sources.local import file_chunks


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_folder_walk_nested_sorted(tmp_path: Path) -> None:
    write(tmp_path / "b.so", b"B" * 10)
    write(tmp_path / "a" / "deep" / "x.so.1", b"X" * 3)
    write(tmp_path / "a" / "readme.txt", b"hello")
    write(tmp_path / "c" / "k.cubin", b"")
    source = open_source(str(tmp_path))
    assert isinstance(source, LocalSource)
    assert source.kind == "folder" and source.ref == str(tmp_path)
    members = source.members()
    assert [m.path for m in members] == ["b.so", "a/readme.txt", "a/deep/x.so.1", "c/k.cubin"]
    assert [m.size for m in members] == [10, 5, 3, 0]
    assert [m.is_candidate for m in members] == [True, False, True, True]
    for member in members:
        assert member.locator == ("file", str(tmp_path / member.path))
        info = os.stat(tmp_path / member.path)
        assert member.identity == (
            f"file:{info.st_size}:{info.st_mtime_ns}:{info.st_dev}:{info.st_ino}"
        )
    assert source.notes() == []


def test_symlinks_skipped_with_a_note(tmp_path: Path) -> None:
    root = tmp_path / "root"
    real = write(root / "real" / "lib.so", b"\x7fELF")
    outside = write(tmp_path / "outside" / "hidden.so", b"\x7fELF")
    (root / "link.so").symlink_to(real)
    (root / "linkdir").symlink_to(outside.parent, target_is_directory=True)
    source = LocalSource(root)
    assert [m.path for m in source.members()] == ["real/lib.so"]
    notes = source.notes()
    assert any("link.so" in note and str(real) in note for note in notes), notes
    assert any("linkdir" in note and str(outside.parent) in note for note in notes), notes
    assert len(notes) == 2


def test_fifo_named_like_a_library_is_ignored(tmp_path: Path) -> None:
    write(tmp_path / "real.so", b"abc")
    os.mkfifo(tmp_path / "x.so")
    source = LocalSource(tmp_path)
    assert [m.path for m in source.members()] == ["real.so"]  # and listing did not block
    with pytest.raises(SourceError) as info:
        open_source(str(tmp_path / "x.so"))
    assert "neither a regular file nor a folder" in info.value.message
    assert info.value.hint


def test_virtual_environment_paths_are_site_packages_relative(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    site = venv / "lib" / "python3.11" / "site-packages"
    write(site / "vllm" / "_C.abi3.so", b"\x7fELF" + b"\0" * 60)
    write(site / "vllm-0.1.dist-info" / "METADATA", b"Name: vllm\nVersion: 0.1\n")
    write(venv / "bin" / "python3", b"#!")
    write(venv / "pyvenv.cfg", b"home = /usr/bin\n")
    members = open_source(str(venv)).members()
    assert [m.path for m in members] == ["vllm/_C.abi3.so", "vllm-0.1.dist-info/METADATA"]
    assert members[0].locator == ("file", str(site / "vllm" / "_C.abi3.so"))


def test_prefix_with_dist_packages(tmp_path: Path) -> None:
    write(tmp_path / "lib" / "python3.12" / "dist-packages" / "torch" / "lib" / "t.so", b"x")
    assert [m.path for m in LocalSource(tmp_path).members()] == ["torch/lib/t.so"]


def test_single_file(tmp_path: Path) -> None:
    lib = write(tmp_path / "libfoo.so.2", b"\x7fELF" + bytes(range(200)))
    source = open_source(str(lib))
    assert isinstance(source, LocalSource) and source.kind == "file"
    (member,) = source.members()
    assert (member.path, member.size, member.locator) == ("libfoo.so.2", 204, ("file", str(lib)))
    assert member.is_candidate
    assert source.read_small(member, 4) == b"\x7fELF"
    assert source.read_small(member, 10_000) == lib.read_bytes()


def test_symlink_to_a_file_is_followed_when_named(tmp_path: Path) -> None:
    lib = write(tmp_path / "libreal.so", b"data")
    (tmp_path / "libalias.so").symlink_to(lib)
    (member,) = open_source(str(tmp_path / "libalias.so")).members()
    assert member.size == 4 and b"".join(member_chunks(member.locator)) == b"data"


def test_missing_path_has_a_hint(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope" / "lib.so")
    with pytest.raises(SourceError) as info:
        open_source(missing)
    assert "no such file or folder" in info.value.message
    assert info.value.hint and ".whl" in info.value.hint
    assert info.value.to_dict()["path"] == missing


def test_symlink_to_nothing(tmp_path: Path) -> None:
    dangling = tmp_path / "lib.so"
    dangling.symlink_to(tmp_path / "gone.so")
    with pytest.raises(SourceError) as info:
        open_source(str(dangling))
    assert "gone.so" in info.value.message and "does not exist" in info.value.message
    assert info.value.hint


def test_dangling_symlink_inside_folder_is_a_note(tmp_path: Path) -> None:
    (tmp_path / "lib.so").symlink_to(tmp_path / "gone.so")
    write(tmp_path / "ok.so", b"1")
    source = LocalSource(tmp_path)
    assert [m.path for m in source.members()] == ["ok.so"]
    assert source.notes() == [f"skipped symbolic link lib.so -> {tmp_path / 'gone.so'}"]


@pytest.mark.parametrize("size", [0, 1, 1023, 1024, 1025, 4096, 10_000])
def test_member_chunks_of_a_file(tmp_path: Path, size: int) -> None:
    data = os.urandom(size)
    lib = write(tmp_path / "x.so", data)
    chunks = list(member_chunks(("file", str(lib)), 1024))
    assert b"".join(chunks) == data
    assert all(0 < len(chunk) <= 1024 for chunk in chunks)
    # The first read is only the magic's length, so a non-object costs one small read.
    if size:
        assert len(chunks[0]) == min(size, PREFIX_BYTES)
    assert len(chunks) == (1 - (-(size - PREFIX_BYTES) // 1024) if size > PREFIX_BYTES
                           else int(size > 0))


def test_file_chunks_missing_file(tmp_path: Path) -> None:
    with pytest.raises(SourceError) as info:
        file_chunks(str(tmp_path / "gone.so"))
    assert info.value.hint


def test_unknown_locator() -> None:
    with pytest.raises(ValueError, match="unknown member locator"):
        member_chunks(("tar", "x"))


def test_zip_named_file_that_is_not_a_zip_is_a_plain_file(tmp_path: Path) -> None:
    fake = write(tmp_path / "data.zip", b"\x7fELF not a zip")
    assert isinstance(open_source(str(fake)), LocalSource)
    real = write(tmp_path / "real.zip", b"PK\x05\x06" + b"\0" * 18)
    assert isinstance(open_source(str(real)), WheelSource)


def test_errors_are_servewise_errors(tmp_path: Path) -> None:
    with pytest.raises(ServewiseError):
        LocalSource(tmp_path / "missing")


def test_virtualenv_lib64_link_is_listed_once(tmp_path: Path) -> None:
    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages" / "pkg"
    site.mkdir(parents=True)
    (site / "a.so").write_bytes(b"\x7fELF")
    (tmp_path / "venv" / "lib64").symlink_to("lib")
    members = LocalSource(tmp_path / "venv").members()
    assert [m.path for m in members] == ["pkg/a.so"]
