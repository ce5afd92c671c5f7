"""What kind of object a file is, decided from its first bytes alone.

A file that may hold GPU code is an ELF object (shared library, relocatable object, or a
cubin, ELF machine 190), a static archive of such objects (``!<arch>``, or a thin
archive), or a raw fatbin container. Anything else is decided from :data:`PREFIX_BYTES`
bytes, so a 100 GB file of zeros named ``x.so`` costs one small read, not a pass over it.
"""

from __future__ import annotations

#: The magics, spelled out here so that deciding costs no parser import (a test checks
#: them against :data:`servewise.formats.elf.ELF_MAGIC` and the fatbin container magic).
ELF_MAGIC = b"\x7fELF"
CONTAINER_MAGIC_BYTES = b"\x50\xed\x55\xba"
#: Bytes needed to decide (the longest magic below).
ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")
"""A zip's first local header, or the end record of an empty one."""
PREFIX_BYTES = 8

_KINDS: tuple[tuple[bytes, str], ...] = (
    (ELF_MAGIC, "elf"),
    (b"!<arch>\n", "archive"),
    (b"!<thin>\n", "thin-archive"),
    (CONTAINER_MAGIC_BYTES, "fatbin"),
)


def object_kind(prefix: bytes) -> str | None:
    """``elf``, ``archive``, ``thin-archive`` or ``fatbin`` for the first bytes of a file.

    ``None`` when they start none of those (an empty file included): the file holds no
    GPU code servewise can read.
    """
    for magic, kind in _KINDS:
        if prefix[: len(magic)] == magic:
            return kind
    return None


def describe_prefix(prefix: bytes) -> str:
    """The first bytes for a person: hex, or ``an empty file``."""
    if not prefix:
        return "an empty file"
    head = prefix[:PREFIX_BYTES]
    return "bytes " + head.hex(" ") + (" ..." if len(prefix) > PREFIX_BYTES else "")


__all__ = ["PREFIX_BYTES", "describe_prefix", "object_kind"]


def is_zip(prefix: bytes) -> bool:
    """Whether bytes start like a zip archive (a wheel)."""
    return prefix.startswith(ZIP_MAGICS)
