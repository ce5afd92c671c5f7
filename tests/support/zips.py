"""Small zip archives for tests: build one, or lie about a member's size (a zip bomb)."""

from __future__ import annotations

import struct
import zipfile
from pathlib import Path


def build_wheel(path: Path, members: dict[str, tuple[bytes, int]]) -> Path:
    """A zip at ``path`` holding ``name -> (bytes, compression)``."""
    with zipfile.ZipFile(path, "w") as archive:
        for name, (data, method) in members.items():
            archive.writestr(zipfile.ZipInfo(name, (2024, 1, 1, 0, 0, 0)), data, method)
    return path


def patch_sizes(data: bytearray, name: bytes, size: int) -> None:
    """Rewrite the uncompressed size of member ``name`` in its local and central headers."""
    local = data.find(b"PK\x03\x04")
    while data[local + 30 : local + 30 + len(name)] != name:
        local = data.find(b"PK\x03\x04", local + 4)
        assert local >= 0, name
    struct.pack_into("<I", data, local + 22, size)
    central = data.find(b"PK\x01\x02")
    while data[central + 46 : central + 46 + len(name)] != name:
        central = data.find(b"PK\x01\x02", central + 4)
        assert central >= 0, name
    struct.pack_into("<I", data, central + 24, size)
