"""Installed-distribution metadata: ``*.dist-info/METADATA`` and ``RECORD``.

Used to say which package a library belongs to. Pure parsers over bytes.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass

from servewise.errors import FormatError

_DIST_INFO_RE = re.compile(r"(?:^|/)([^/]+)\.dist-info/(METADATA|RECORD)$")
#: METADATA files larger than this are read only up to it (the headers come first).
METADATA_LIMIT = 1 * 2**20


@dataclass(frozen=True)
class Distribution:
    """A package's name and version, with the files its RECORD lists."""

    name: str
    version: str
    files: frozenset[str]
    """Paths relative to the folder that holds the ``.dist-info`` directory."""


def dist_info_file(path: str) -> tuple[str, str] | None:
    """``(dist-info folder, 'METADATA' | 'RECORD')`` when ``path`` is one of those files."""
    match = _DIST_INFO_RE.search(path)
    if match is None:
        return None
    folder = path[: match.end(1)] + ".dist-info"
    return folder, match.group(2)


def parse_metadata(data: bytes, source: str = "METADATA") -> tuple[str, str]:
    """``(name, version)`` from a METADATA file (RFC 822 headers)."""
    from email.parser import BytesHeaderParser  # ~7 ms to import; only when reading one

    headers = BytesHeaderParser().parsebytes(data[:METADATA_LIMIT])
    name = headers.get("Name")
    version = headers.get("Version")
    if not name or not version:
        raise FormatError(
            "METADATA",
            offset=0,
            expected="Name: and Version: headers",
            found=f"Name={name!r}, Version={version!r}",
            source=source,
        )
    return str(name).strip(), str(version).strip()


def parse_record(data: bytes, source: str = "RECORD") -> frozenset[str]:
    """The file paths a RECORD lists (first CSV column)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise FormatError(
            "RECORD", offset=error.start, expected="UTF-8 text", found="undecodable bytes",
            source=source,
        ) from None
    paths: set[str] = set()
    try:
        for row in csv.reader(io.StringIO(text)):
            if row and row[0]:
                paths.add(row[0].replace("\\", "/"))
    except csv.Error as error:
        raise FormatError(
            "RECORD", offset=0, expected="CSV rows path,hash,size", found=str(error),
            source=source,
        ) from None
    return frozenset(paths)
