"""Tests for dist-info METADATA / RECORD parsing."""

from __future__ import annotations

import pytest

from servewise.errors import FormatError
from servewise.formats.distinfo import METADATA_LIMIT, dist_info_file, parse_metadata, parse_record

METADATA = b"""Metadata-Version: 2.4
Name: vllm
Version: 0.26.1rc1.dev181+gf5a76426
Summary: A high-throughput and memory-efficient inference and serving engine for LLMs
Home-page: https://github.com/vllm-project/vllm
Author: vLLM Team
License: Apache 2.0
Requires-Python: >=3.10
Description-Content-Type: text/markdown
Requires-Dist: torch==2.9.0
Requires-Dist: deep-gemm; extra == "deepgemm"
Provides-Extra: deepgemm

<p align="center">Name: not-this-one</p>
Version: nor-this
"""

RECORD = b"""vllm/__init__.py,sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,1234
vllm/_C.abi3.so,sha256=abc,987654
"vllm/weird,name.py",sha256=def,12
vllm\\win\\path.py,,
vllm-0.26.1.dist-info/METADATA,sha256=x,100
vllm-0.26.1.dist-info/RECORD,,

"""


def test_metadata_name_and_version() -> None:
    assert parse_metadata(METADATA) == ("vllm", "0.26.1rc1.dev181+gf5a76426")


def test_metadata_strips_and_tolerates_crlf() -> None:
    assert parse_metadata(b"Name:  deep_gemm \r\nVersion: 2.1.0\r\n\r\nbody") == (
        "deep_gemm",
        "2.1.0",
    )


@pytest.mark.parametrize(
    "data",
    [b"Version: 1.0\n", b"Name:\nVersion: 1.0\n", b"", b"\n\nName: x\nVersion: 1\n",
     b"Name: x\n", b"\xff\xfe garbage \x00\x01"],
)
def test_metadata_missing_fields(data: bytes) -> None:
    with pytest.raises(FormatError) as info:
        parse_metadata(data, source="x.dist-info/METADATA")
    assert info.value.what == "METADATA"
    assert info.value.source == "x.dist-info/METADATA"
    assert "Name" in info.value.expected


def test_metadata_only_reads_up_to_the_limit() -> None:
    data = b"Name: big\nX-Pad: " + b"a" * (METADATA_LIMIT + 10) + b"\nVersion: 1\n"
    with pytest.raises(FormatError):
        parse_metadata(data)  # the Version header lies beyond the limit


def test_record_paths() -> None:
    assert parse_record(RECORD) == frozenset(
        {
            "vllm/__init__.py",
            "vllm/_C.abi3.so",
            "vllm/weird,name.py",
            "vllm/win/path.py",
            "vllm-0.26.1.dist-info/METADATA",
            "vllm-0.26.1.dist-info/RECORD",
        }
    )
    assert parse_record(b"") == frozenset()


def test_record_bad_utf8() -> None:
    with pytest.raises(FormatError) as info:
        parse_record(b"ok.py,,\nbad\xff\xfe.py,,\n", source="x.dist-info/RECORD")
    assert info.value.what == "RECORD"
    assert info.value.offset == len(b"ok.py,,\nbad")
    assert info.value.expected == "UTF-8 text"
    assert info.value.source == "x.dist-info/RECORD"


def test_record_bad_csv() -> None:
    with pytest.raises(FormatError) as info:
        parse_record(b"a.py,,\n" + b"b" * 200_000 + b".py,,\n")  # over csv's field limit
    assert info.value.what == "RECORD"


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("vllm-0.1.dist-info/METADATA", ("vllm-0.1.dist-info", "METADATA")),
        ("lib/site/vllm-0.1.dist-info/RECORD", ("lib/site/vllm-0.1.dist-info", "RECORD")),
        ("vllm-0.1.dist-info/WHEEL", None),
        ("vllm/METADATA", None),
        ("vllm-0.1.dist-info/sub/METADATA", None),
    ],
)
def test_dist_info_file(path: str, expected: tuple[str, str] | None) -> None:
    assert dist_info_file(path) == expected
