"""Tests for wheel sources: directory checks, streamed members, zip bombs, damaged archives."""

from __future__ import annotations

import contextlib
import os
import struct
import tracemalloc
import zipfile
import zlib
from pathlib import Path

import pytest

from servewise.errors import ArchiveLimitError, ServewiseError, SourceError
from servewise.sources import WheelSource, member_chunks, open_source
from servewise.sources.wheel import ZipEntryReader
from support.zips import build_wheel, patch_sizes

CHUNK = 1024
SIZES = [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK, 3 * CHUNK + 7, 70_000, 300_001]


def payload(size: int, seed: int) -> bytes:
    """Half random, half repetitive bytes (so deflate has work either way)."""
    rand = os.urandom(size // 2)
    return rand + bytes((seed + i) % 7 for i in range(size - len(rand)))


def read_member(source: WheelSource, name: str, chunk: int = CHUNK) -> list[bytes]:
    (member,) = [m for m in source.members() if m.path == name]
    return list(member_chunks(member, chunk))


@pytest.fixture
def wheel(tmp_path: Path) -> tuple[Path, dict[str, bytes]]:
    contents: dict[str, tuple[bytes, int]] = {}
    for size in SIZES:
        contents[f"pkg/stored_{size}.so"] = (payload(size, 1), zipfile.ZIP_STORED)
        contents[f"pkg/deflated_{size}.so"] = (payload(size, 2), zipfile.ZIP_DEFLATED)
    contents["pkg-1.0.dist-info/METADATA"] = (b"Name: pkg\nVersion: 1.0\n", zipfile.ZIP_DEFLATED)
    path = build_wheel(tmp_path / "pkg-1.0-py3-none-any.whl", contents)
    return path, {name: data for name, (data, _) in contents.items()}


def test_members_and_identity(wheel: tuple[Path, dict[str, bytes]]) -> None:
    path, contents = wheel
    source = open_source(str(path))
    assert isinstance(source, WheelSource)
    assert source.kind == "wheel" and source.ref == str(path)
    members = source.members()
    assert [m.path for m in members] == list(contents)
    for member in members:
        data = contents[member.path]
        assert member.size == len(data)
        assert member.identity == f"zip:{zlib.crc32(data):08x}:{len(data)}"
        assert isinstance(member.reader, ZipEntryReader) and member.reader.archive == str(path)
    assert source.notes() == []


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("kind", ["stored", "deflated"])
def test_member_chunks_give_exact_bytes(
    wheel: tuple[Path, dict[str, bytes]], kind: str, size: int
) -> None:
    path, contents = wheel
    name = f"pkg/{kind}_{size}.so"
    chunks = read_member(WheelSource(path), name)
    assert b"".join(chunks) == contents[name]
    assert all(0 < len(chunk) <= CHUNK for chunk in chunks)


def test_read_small(wheel: tuple[Path, dict[str, bytes]]) -> None:
    path, contents = wheel
    source = WheelSource(path)
    (member,) = [m for m in source.members() if m.path == "pkg/deflated_300001.so"]
    assert source.read_small(member, 100) == contents[member.path][:100]
    (meta,) = [m for m in source.members() if m.path.endswith("METADATA")]
    assert source.read_small(meta, 1 << 20) == b"Name: pkg\nVersion: 1.0\n"


def test_directories_symlinks_and_other_methods(tmp_path: Path) -> None:
    path = tmp_path / "odd.whl"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(zipfile.ZipInfo("pkg/"), b"")
        link = zipfile.ZipInfo("pkg/libalias.so")
        link.external_attr = (0o120777 << 16)
        archive.writestr(link, b"libreal.so")
        archive.writestr("pkg/libreal.so", b"\x7fELF")
        archive.writestr("pkg/packed.so", b"x" * 100, zipfile.ZIP_BZIP2)
    source = WheelSource(path)
    assert [m.path for m in source.members()] == ["pkg/libreal.so"]
    notes = source.notes()
    assert notes[0] == "skipped symbolic link pkg/libalias.so"
    assert "pkg/packed.so" in notes[1] and "compression method 12" in notes[1]
    assert len(notes) == 2


def test_zip_bomb_stops_in_bounded_memory(tmp_path: Path) -> None:
    path = build_wheel(tmp_path / "bomb.whl", {"pkg/bomb.so": (b"\0" * 40 * 2**20, 8)})
    data = bytearray(path.read_bytes())
    assert len(data) < 100_000
    patch_sizes(data, b"pkg/bomb.so", 1000)
    path.write_bytes(bytes(data))
    source = WheelSource(path)
    (member,) = source.members()
    assert member.size == 1000
    chunks = member_chunks(member, 65536)
    tracemalloc.start()
    try:
        with pytest.raises(ArchiveLimitError) as info:
            for _ in chunks:
                pass
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2**20
    assert "inflates beyond the 1000 bytes" in info.value.message
    assert info.value.hint and info.value.to_dict()["declared_bytes"] == 1000


def test_member_shorter_than_declared(tmp_path: Path) -> None:
    path = build_wheel(tmp_path / "short.whl", {"pkg/a.so": (b"abc" * 1000, 8)})
    data = bytearray(path.read_bytes())
    patch_sizes(data, b"pkg/a.so", 5000)
    path.write_bytes(bytes(data))
    with pytest.raises(SourceError, match="inflated to 3000 bytes"):
        read_member(WheelSource(path), "pkg/a.so")


def test_damaged_deflate_data(tmp_path: Path) -> None:
    original = build_wheel(
        tmp_path / "ok.whl", {"pkg/a.so": (payload(20_000, 3), zipfile.ZIP_DEFLATED)}
    ).read_bytes()
    start = 30 + len("pkg/a.so")
    for place in range(start, start + 200, 3):
        data = bytearray(original)
        data[place] ^= 0x55
        path = tmp_path / "bad.whl"
        path.write_bytes(bytes(data))
        with contextlib.suppress(ServewiseError):  # never any other exception
            read_member(WheelSource(path), "pkg/a.so")


@pytest.mark.parametrize("method", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_truncated_archive(tmp_path: Path, method: int) -> None:
    original = build_wheel(
        tmp_path / "ok.whl", {"a.so": (payload(5000, 4), method), "b.txt": (b"hi", method)}
    ).read_bytes()
    path = tmp_path / "cut.whl"
    for cut in [*range(0, len(original), 97), len(original) - 1, len(original) - 22]:
        path.write_bytes(original[:cut])
        with pytest.raises(SourceError):
            open_source(str(path))


def test_archive_truncated_after_listing(tmp_path: Path) -> None:
    path = build_wheel(tmp_path / "x.whl", {"a.so": (payload(50_000, 5), zipfile.ZIP_DEFLATED),
                                            "b.so": (payload(9_000, 6), zipfile.ZIP_STORED)})
    source = WheelSource(path)
    members = source.members()
    original = path.read_bytes()
    with zipfile.ZipFile(path) as archive:
        ends = {i.filename: i.header_offset + 30 + len(i.filename) + i.compress_size
                for i in archive.infolist()}
        contents = {i.filename: archive.read(i) for i in archive.infolist()}
    raised = 0
    for cut in (10, 200, 20_000, 40_000, ends["a.so"] - 1, ends["a.so"], ends["b.so"] - 1):
        path.write_bytes(original[:cut])
        for member in members:
            if cut >= ends[member.path]:
                assert b"".join(member_chunks(member, 4096)) == contents[member.path]
                continue
            with pytest.raises(SourceError) as info:
                b"".join(member_chunks(member, 4096))
            assert info.value.hint
            raised += 1
    assert raised >= 8


def _zip64_tail(data: bytes, entries: int, dir_size: int | None = None) -> bytes:
    """``data`` (a plain zip) ending in zip64 records that declare ``entries``."""
    eocd = data.rfind(b"PK\x05\x06")
    real_entries, real_size, real_offset = struct.unpack_from("<HII", data, eocd + 10)
    del real_entries
    body = data[:eocd]
    record = struct.pack(
        "<4sQHHIIQQQQ", b"PK\x06\x06", 44, 45, 45, 0, 0, entries, entries,
        real_size if dir_size is None else dir_size, real_offset,
    )
    locator = struct.pack("<4sIQI", b"PK\x06\x07", 0, len(body), 1)
    end = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF,
                      0xFFFFFFFF, 0)
    return body + record + locator + end


def _no_zipfile(*args: object, **kwargs: object) -> None:
    raise AssertionError("zipfile must not read this archive")


def test_zip64_end_record_declaring_ten_million_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = build_wheel(tmp_path / "p.whl", {"a.so": (b"x", 0)}).read_bytes()
    path = tmp_path / "many.whl"
    path.write_bytes(_zip64_tail(plain, 10_000_000))
    monkeypatch.setattr(zipfile, "ZipFile", _no_zipfile)
    with pytest.raises(ArchiveLimitError) as info:
        open_source(str(path))
    assert info.value.to_dict()["entries"] == 10_000_000
    assert info.value.hint


def test_zip64_end_record_with_honest_numbers_is_read(tmp_path: Path) -> None:
    plain = build_wheel(tmp_path / "p.whl", {"a.so": (b"xyz", 0)}).read_bytes()
    path = tmp_path / "z64.whl"
    path.write_bytes(_zip64_tail(plain, 1))
    source = WheelSource(path)
    assert [m.path for m in source.members()] == ["a.so"]
    assert read_member(source, "a.so") == [b"xyz"]


def test_end_record_declaring_a_huge_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = bytearray(build_wheel(tmp_path / "p.whl", {"a.so": (b"x", 0)}).read_bytes())
    eocd = data.rfind(b"PK\x05\x06")
    struct.pack_into("<I", data, eocd + 12, 2**31)
    path = tmp_path / "bigdir.whl"
    path.write_bytes(bytes(data))
    monkeypatch.setattr(zipfile, "ZipFile", _no_zipfile)
    with pytest.raises(ArchiveLimitError) as info:
        WheelSource(path)
    assert info.value.to_dict()["directory_bytes"] == 2**31


@pytest.mark.parametrize("content", [b"", b"not a zip at all\n" * 10, b"PK\x03\x04" + b"\0" * 40])
def test_non_zip_wheel(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "fake-1.0-py3-none-any.whl"
    path.write_bytes(content)
    with pytest.raises(SourceError) as info:
        open_source(str(path))
    assert not isinstance(info.value, ArchiveLimitError)
    assert info.value.hint


def test_missing_local_header(tmp_path: Path) -> None:
    path = build_wheel(tmp_path / "x.whl", {"a.so": (b"abc", 0)})
    source = WheelSource(path)
    (member,) = source.members()
    data = bytearray(path.read_bytes())
    data[0:4] = b"XXXX"
    path.write_bytes(bytes(data))
    with pytest.raises(SourceError, match="no local file header"):
        list(member_chunks(member))
