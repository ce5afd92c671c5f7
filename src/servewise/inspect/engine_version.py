"""The engine a build holds: its distribution, version and what that version string says.

Kept apart from :mod:`servewise.inspect.diff` so that ``gate`` and ``inspect`` can name a
build's engine without importing the comparison code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from servewise.errors import UsageError
from servewise.inspect.report import BuildReport
from servewise.knowledge.engines import EngineTable, load_engine_table
from servewise.knowledge.version_reading import VersionReading, read_version
from servewise.versions import EngineVersion


@dataclass(frozen=True)
class BuildEngine:
    """The engine a build holds, by its distribution, and its version."""

    engine: str
    package: str
    version: str
    reading: VersionReading

    @property
    def engine_version(self) -> EngineVersion | None:
        """The version as the shared :class:`~servewise.versions.EngineVersion`."""
        return self.reading.engine_version

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: the reading's main parts."""
        return {
            "engine": self.engine, "package": self.package, "version": self.version,
            "commit": self.reading.commit, "build_date": self.reading.build_date,
            "dirty": self.reading.dirty, "channel": self.reading.channel,
        }


def engine_version(
    report: BuildReport, engines: EngineTable | None = None
) -> BuildEngine | None:
    """The engine version of a build: the distribution named like its engine, else its kin."""
    table = engines or load_engine_table()
    found: list[tuple[int, str, str, str]] = []
    for package, version in report.packages:
        owner = table.for_package(package)
        if owner is not None:
            found.append((0 if package.lower() == owner.id else 1, owner.id, package, version))
    if not found:
        return None
    _, engine, package, version = min(found)
    try:
        reading = read_version(f"{package}=={version}", table)
    except UsageError:  # a distribution whose version is no PEP 440 version
        return None
    return BuildEngine(engine, package, version, reading)


__all__ = ["BuildEngine", "engine_version"]
