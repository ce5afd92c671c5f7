"""A whole build's report kept in the store, for images whose layers are all known.

An image, an OCI layout or a ``docker save`` archive is fully named by its ordered layer
digests: once every layer's scan is in the store, merging the layers, reading
distributions and identifying libraries gives the same report every time, as long as
the scanner and the known-library table are the same. :func:`summary_key` names that
report (scanner version, source kind, ordered layer keys, the library table's
fingerprint); :func:`to_record` and :func:`from_record` keep it as JSON. A second
``gate`` on an image then reads its manifest and one store row, nothing else.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from typing import Any

from servewise.inspect.report import (
    BuildReport,
    LibraryProvenance,
    LibraryReport,
    LibraryScan,
    UnitCounts,
)
from servewise.knowledge._load import fingerprint
from servewise.knowledge.libraries import FILENAME as LIBRARIES_FILE

#: Source kinds whose units (layers) name all of their content.
LAYERED = frozenset({"image", "docker-archive", "oci-layout"})


def summary_key(source_kind: str, unit_keys: list[str], scanner: int) -> str | None:
    """The store key of a layered build's report; ``None`` for other sources.

    Folders and wheels are left out: their provenance reads files (RECORD, version
    files) that are not units, so unit keys alone do not name the result.
    """
    if source_kind not in LAYERED:
        return None
    payload = json.dumps([scanner, source_kind, unit_keys, fingerprint(LIBRARIES_FILE)])
    return "build:" + hashlib.sha256(payload.encode()).hexdigest()


def to_record(report: BuildReport) -> dict[str, Any]:
    """The parts of a report that depend only on the build's content, as JSON data."""
    return {
        "libraries": [
            {"path": lib.path, "size": lib.size, "scan": lib.scan.to_dict(),
             "provenance": asdict(lib.provenance),
             "headers": {arch: list(names) for arch, names in lib.headers.items()}}
            for lib in report.libraries
        ],
        "notes": list(report.notes),
        "packages": [list(pair) for pair in report.packages],
        "files_listed": report.files_listed,
        "files_read": report.files_read,
    }


def from_record(record: dict[str, Any], *, ref: str, source_kind: str,
                metadata: dict[str, Any], units: UnitCounts) -> BuildReport:
    """The report :func:`to_record` kept, for ``ref`` as named now (every library cached).

    Raises ``KeyError``, ``TypeError`` or ``ValueError`` on a record it cannot read.
    """
    libraries = tuple(
        LibraryReport(
            path=str(lib["path"]), size=int(lib["size"]),
            scan=LibraryScan.from_dict(lib["scan"]),
            provenance=_provenance(lib["provenance"]),
            headers={str(arch): tuple(names) for arch, names in lib["headers"].items()},
            cached=True,
        )
        for lib in record["libraries"]
    )
    return BuildReport(
        ref=ref, source_kind=source_kind, libraries=libraries,
        notes=tuple(str(note) for note in record["notes"]), scanned_bytes=0,
        metadata=metadata, units=units,
        packages=tuple((str(name), str(version)) for name, version in record["packages"]),
        files_listed=int(record["files_listed"]), files_read=int(record["files_read"]),
    )


def _provenance(data: dict[str, Any]) -> LibraryProvenance:
    def text(key: str) -> str | None:
        value = data.get(key)
        return None if value is None else str(value)

    return LibraryProvenance(
        package=text("package"), package_version=text("package_version"),
        library_id=text("library_id"), library_name=text("library_name"),
        bundled_version=text("bundled_version"),
        git_hashes=tuple(str(h) for h in data["git_hashes"]),
        identified_by=tuple(str(s) for s in data["identified_by"]),
        library_version=text("library_version"),
    )


__all__ = ["LAYERED", "from_record", "summary_key", "to_record"]
