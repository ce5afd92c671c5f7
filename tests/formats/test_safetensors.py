"""The safetensors header and index parsers, against hand-built and real files."""

from __future__ import annotations

import contextlib
import json
import struct
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from servewise.errors import FormatError
from servewise.formats.safetensors import header_length, parse_header, parse_index
from support.hub_server import safetensors_bytes


def _split(blob: bytes) -> tuple[int, bytes]:
    length = header_length(blob[:8])
    return length, blob[8 : 8 + length]


def test_tensors_sizes_and_metadata() -> None:
    blob, size = safetensors_bytes({
        "a": ("BF16", [4, 8], 64), "b": ("U8", [4, 4], 16), "c": ("F4", [8, 2], 8),
    }, {"format": "pt"})
    _, header = _split(blob)
    parsed = parse_header(header, file_size=size)
    assert [t.name for t in parsed.tensors] == ["a", "b", "c"]
    assert parsed.data_bytes == 88 and parsed.file_size == size
    assert parsed.metadata == {"format": "pt"} and parsed.unknown_dtypes == ()


def test_unknown_dtypes_are_kept_and_reported() -> None:
    blob, size = safetensors_bytes({"q": ("Q4_K", [32], 18), "w": ("F32", [2], 8)})
    parsed = parse_header(_split(blob)[1], file_size=size)
    assert parsed.unknown_dtypes == ("Q4_K",)
    assert {t.name: t.nbytes for t in parsed.tensors} == {"q": 18, "w": 8}


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}, "8 bytes"),
        ({"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}, "non-negative"),
        ({"dtype": "F32", "shape": [1], "data_offsets": [4, 0]}, "begin <= end"),
        ({"shape": [1], "data_offsets": [0, 4]}, "dtype"),
        ([1, 2], "an object"),
    ],
)
def test_bad_entries(entry: object, message: str) -> None:
    with pytest.raises(FormatError, match=message):
        parse_header(json.dumps({"t": entry}).encode())


def test_gaps_overlaps_and_size_mismatch() -> None:
    gap = {"a": {"dtype": "U8", "shape": [4], "data_offsets": [4, 8]}}
    with pytest.raises(FormatError, match="gap"):
        parse_header(json.dumps(gap).encode())
    overlap = {"a": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]},
               "b": {"dtype": "U8", "shape": [4], "data_offsets": [2, 6]}}
    with pytest.raises(FormatError, match="overlap"):
        parse_header(json.dumps(overlap).encode())
    blob, size = safetensors_bytes({"a": ("U8", [4], 4)})
    with pytest.raises(FormatError, match=r"truncated|file size"):
        parse_header(_split(blob)[1], file_size=size - 1)


def test_length_prefix_checks() -> None:
    with pytest.raises(FormatError, match="8-byte"):
        header_length(b"\x01\x02")
    with pytest.raises(FormatError, match="cap"):
        header_length(struct.pack("<Q", 2**40))
    assert header_length(struct.pack("<Q", 100)) == 100


def test_matches_huggingface_hubs_own_parser(tmp_path: Path) -> None:
    from huggingface_hub import get_local_safetensors_metadata

    blob, _ = safetensors_bytes({"x.weight": ("BF16", [16, 8], 256), "y": ("I32", [3], 12)},
                                {"format": "pt"})
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(blob)
    theirs = get_local_safetensors_metadata(folder)
    ours = parse_header(_split(blob)[1], file_size=len(blob))
    info = theirs.files_metadata["model.safetensors"].tensors
    assert {n: (i.dtype, list(i.shape), list(i.data_offsets)) for n, i in info.items()} == {
        t.name: (t.dtype, list(t.shape), [t.begin, t.end]) for t in ours.tensors}


def test_index() -> None:
    index = parse_index(json.dumps({"metadata": {"total_size": "123"},
                                    "weight_map": {"a": "s1", "b": "s2", "c": "s1"}}).encode())
    assert index.files == ("s1", "s2") and index.total_size == 123
    for bad in (b"[]", b"{}", b'{"weight_map": {"a": "../x"}}', b"\xff"):
        with pytest.raises(FormatError):
            parse_index(bad)


@given(st.binary(max_size=300))
def test_any_bytes_parse_or_raise_format_error(data: bytes) -> None:
    with contextlib.suppress(FormatError):
        parse_header(data, file_size=len(data) + 8)
