"""Deciding from the first bytes what a file is."""

from __future__ import annotations

import pytest

from servewise.formats import elf, fatbin, magic


def test_magics_agree_with_the_parsers() -> None:
    assert magic.ELF_MAGIC == elf.ELF_MAGIC
    assert magic.CONTAINER_MAGIC_BYTES == fatbin.CONTAINER_MAGIC_BYTES


@pytest.mark.parametrize(("prefix", "kind"), [
    (b"\x7fELF\x02\x01\x01\x00", "elf"),
    (b"!<arch>\nfoo", "archive"),
    (b"!<thin>\n", "thin-archive"),
    (b"\x50\xed\x55\xba\x01\x00\x10\x00", "fatbin"),
    (b"", None),
    (b"\x7fEL", None),
    (b"\x00" * 8, None),
    (b"PK\x03\x04", None),
])
def test_object_kind(prefix: bytes, kind: str | None) -> None:
    assert magic.object_kind(prefix) == kind


def test_describe_prefix() -> None:
    assert magic.describe_prefix(b"") == "an empty file"
    assert magic.describe_prefix(b"\x00\x01") == "bytes 00 01"
    assert magic.describe_prefix(bytes(range(12))).endswith("07 ...")
