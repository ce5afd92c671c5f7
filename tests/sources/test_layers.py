"""The layer pass and the whiteout merge on their own: bounded memory, layer order."""

from __future__ import annotations

import gzip
import tracemalloc
from typing import Any

import pytest

from servewise.errors import ArchiveLimitError
from servewise.inspect.scan import scan_chunks
from servewise.sources.blobs import VerifiedBlob, layer_stream
from servewise.sources.layers import merge_layers, normalize, read_layer
from support.images import Entry, build_tar, digest_of
from support.paths import CUDA


def layer(entries: list[list[Any]], scans: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"entries": entries, "scans": scans or {}, "small": {}, "notes": []}


def test_merge_applies_whiteouts_to_lower_layers_only() -> None:
    scan = {"containers": 0}
    bottom = layer([["f", "a/x.so", 1, None], ["f", "a/y.so", 1, None], ["f", "b/z.so", 1, None],
                    ["f", "c/d/k.so", 1, None]],
                   {"a/x.so": scan, "a/y.so": scan, "b/z.so": scan, "c/d/k.so": scan})
    top = layer([["w", "a/x.so", 0, None], ["o", "b", 0, None], ["f", "b/new.so", 1, None],
                 ["l", "c", 0, "/elsewhere"], ["w", "q/nothing.so", 0, None]],
                {"b/new.so": scan})
    merged = merge_layers([("L1", bottom), ("L2", top)])
    assert [m.path for m in merged.members] == ["a/y.so", "b/new.so"]
    assert merged.origin == {"a/y.so": "L1", "b/new.so": "L2"}
    assert any("q/nothing.so" in note for note in merged.notes)


def test_root_opaque_hides_everything_below() -> None:
    bottom = layer([["f", "x.so", 1, None]], {"x.so": {}})
    top = layer([["o", "", 0, None], ["f", "y.so", 1, None]], {"y.so": {}})
    assert [m.path for m in merge_layers([("1", bottom), ("2", top)]).members] == ["y.so"]


@pytest.mark.parametrize(("name", "path"), [("./a/b.so", "a/b.so"), ("/a//b/./c", "a/b/c"),
                                            ("a/../b", "b"), ("./", None)])
def test_normalize(name: str, path: str | None) -> None:
    assert normalize(name, "layer") == path


def test_a_large_member_is_never_held() -> None:
    big = b"\x7fELF" + bytes(48 * 2**20)  # an ELF-looking 48 MiB library
    other = bytes(40 * 2**20)  # and a 40 MiB file nobody needs
    real = (CUDA / "libsw_sm120.so").read_bytes()
    blob = gzip.compress(build_tar([Entry("big.so", big), Entry("data.bin", other),
                                    Entry("real.so", real)]), compresslevel=1)
    del big, other
    tracemalloc.start()
    try:
        raw = VerifiedBlob(iter([blob[i:i + 1 << 20] for i in range(0, len(blob), 1 << 20)]),
                           digest_of(blob), len(blob), "layer")
        result = read_layer(layer_stream(raw, "layer", len(blob)).stream, scan_chunks, "layer")
        raw.drain()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 24 * 2**20
    assert result["scans"]["real.so"]["entries"]
    assert set(result["scans"]) == {"big.so", "real.so"}


def test_a_library_split_across_reads_is_still_recognised() -> None:
    """A stream may return fewer bytes than asked: the 8-byte kind check must gather them."""
    real = (CUDA / "libsw_sm120.so").read_bytes()
    blob = build_tar([Entry("usr/lib/libx.so", real)])
    pieces = [blob[:515], blob[515:]]  # the cut falls 3 bytes into the ELF header
    raw = VerifiedBlob(iter(pieces), digest_of(blob), len(blob), "layer")
    result = read_layer(layer_stream(raw, "layer", len(blob)).stream, scan_chunks, "layer")
    assert result["scans"]["usr/lib/libx.so"]["entries"]


def test_a_decompression_bomb_is_stopped() -> None:
    blob = gzip.compress(build_tar([Entry("x.bin", bytes(200 * 2**20))]), compresslevel=9)
    raw = VerifiedBlob(iter([blob]), digest_of(blob), len(blob), "layer")
    with pytest.raises(ArchiveLimitError, match=r"bomb|more than"):
        read_layer(layer_stream(raw, "layer", 1000).stream, scan_chunks, "layer")


@pytest.mark.parametrize("cut", [1, 2, 11, 60, 200])
def test_gzip_reader_members_padding_and_truncation(cut: int) -> None:
    from servewise.sources.blobs import ChunkStream, GzipReader

    data = gzip.compress(b"abc" * 1000) + gzip.compress(b"xyz" * 10) + b"\0" * 100
    reader = GzipReader(ChunkStream(iter([data[:cut], data[cut:]])), input_size=7)
    out = b""
    while chunk := reader.read(100):
        assert len(chunk) <= 100
        out += chunk
    assert out == b"abc" * 1000 + b"xyz" * 10
    cut_short = GzipReader(ChunkStream(iter([data[: len(data) // 3]])))
    with pytest.raises(EOFError):
        while cut_short.read(100):
            pass
    garbage = GzipReader(ChunkStream(iter([gzip.compress(b"x") + b"junk"])))
    with pytest.raises(OSError, match="start no other member"):
        while garbage.read(100):
            pass
