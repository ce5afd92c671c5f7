"""The tar stream reader against tarfile's own archives, and on damaged or hostile input."""

from __future__ import annotations

import contextlib
import io
import tarfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from servewise.errors import FormatError
from servewise.formats import tar
from support.images import Entry, build_tar


def walk(data: bytes) -> list[tuple[str, str, int, str, bytes]]:
    walker = tar.TarWalker(io.BytesIO(data))
    return [(e.name, e.kind, e.size, e.linkname, walker.read_all(1 << 30)) for e in walker]


@pytest.mark.parametrize("fmt", [tarfile.PAX_FORMAT, tarfile.GNU_FORMAT, tarfile.USTAR_FORMAT])
def test_same_members_as_tarfile(fmt: int) -> None:
    long_dir = "usr/local/lib/python3.12/dist-packages/" + "very_long_folder_name/" * 3
    entries = [
        Entry("etc/"[:-1], kind="dir"),
        Entry("etc/hosts", b"127.0.0.1 localhost\n"),
        Entry(long_dir + "libk.so", b"\x7fELF" + bytes(1000)),
        Entry("usr/lib/libk.so", kind="symlink", link="../../" + long_dir + "libk.so"),
        Entry("usr/lib/libk2.so", kind="hardlink", link=long_dir + "libk.so"),
        Entry("empty", b""),
    ]
    if fmt == tarfile.USTAR_FORMAT:  # ustar names are at most 255 bytes (prefix + name)
        entries = [e for e in entries if len(e.name) < 100 and len(e.link) < 100]
    data = build_tar(entries, fmt=fmt)
    with tarfile.open(fileobj=io.BytesIO(data)) as reference:
        expected = [(m.name, m.size, m.linkname) for m in reference.getmembers()]
    # tarfile drops a folder name's trailing slash; the walker keeps names as stored.
    assert [(n.rstrip("/"), s, link) for n, _, s, link, _ in walk(data)] == expected
    kinds = {n.rstrip("/"): k for n, k, *_ in walk(data)}
    assert kinds["etc/hosts"] == tar.REGULAR and kinds["etc"] == tar.DIRECTORY
    assert {n: d for n, *_, d in walk(data)}["etc/hosts"] == b"127.0.0.1 localhost\n"


def test_base256_size_and_checksums() -> None:
    block = bytearray(build_tar([Entry("x", b"abc")])[:512])
    block[124:136] = b"\x80" + (3).to_bytes(11, "big")
    block[148:156] = b" " * 8
    checksum = sum(block)
    block[148:156] = f"{checksum:06o}\0 ".encode()
    assert tar.parse_header(bytes(block)).size == 3
    block[0] ^= 1
    with pytest.raises(FormatError, match="checksum"):
        tar.parse_header(bytes(block))


def test_truncated_member_and_header() -> None:
    data = build_tar([Entry("a.so", b"x" * 5000)])
    with pytest.raises(FormatError, match=r"truncated|end of the data"):
        walk(data[:2000])
    with pytest.raises(FormatError):
        walk(data[:700])


def test_end_without_zero_blocks_is_tolerated() -> None:
    data = build_tar([Entry("a", b"1")])
    assert [n for n, *_ in walk(data[:1024])] == ["a"]


def test_oversized_pax_record_is_refused() -> None:
    header = tarfile.TarInfo("././@PaxHeader")
    header.type = tarfile.XHDTYPE
    header.size = tar.MAX_META_BYTES + 1
    data = header.tobuf(format=tarfile.USTAR_FORMAT) + b"\0" * 1024
    with pytest.raises(FormatError, match="extended header"):
        walk(data)


def test_pax_parsing() -> None:
    assert tar.parse_pax(b"19 path=a/b/c/d.so\n") == {"path": "a/b/c/d.so"}
    with pytest.raises(FormatError):
        tar.parse_pax(b"99 path=x\n")


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=3000))
def test_random_bytes_give_format_errors_only(data: bytes) -> None:
    with contextlib.suppress(FormatError):
        walk(data)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 4000), st.integers(0, 255))
def test_a_damaged_archive_gives_format_errors_only(at: int, value: int) -> None:
    data = bytearray(build_tar([Entry("x/" + "n" * 150 + ".so", b"\x7fELF" * 300),
                                Entry("y", b"z")]))
    data[at % len(data)] = value
    with contextlib.suppress(FormatError):
        walk(bytes(data))
