"""Engine versions: the one type every operation compares versions with.

:class:`EngineVersion` reads a version as PEP 440 does (``packaging``), so pre-releases and
development builds order the way the engines publish them. It imports nothing of servewise
but the error tree, so every layer can use it; reading a whole version string, image tag or
wheel name is :func:`servewise.knowledge.version_reading.read_version`.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

from servewise.errors import UsageError

_ENGINE_VERSION = re.compile(r"^[vV]?(?P<version>\d+(?:\.\d+)*\S*)$")


@functools.total_ordering
@dataclass(frozen=True, eq=False)
class EngineVersion:
    """An engine version: the one type every operation compares versions with.

    Built on :class:`packaging.version.Version`, so pre-releases and development builds
    order as PEP 440 says: ``0.26.1rc1.dev229 < 0.26.1rc1 < 0.26.1 < 0.26.1.post1``. A
    leading ``v`` is dropped (``v0.10.1`` is 0.10.1). ``raw`` keeps the text as given; the
    local part (``+g6f91edf96.d20260731``) is kept for display and ignored in comparisons.

    >>> EngineVersion.parse("0.26.1rc1") < EngineVersion.parse("0.26.1")
    True
    """

    version: Version
    raw: str

    @classmethod
    def parse(cls, text: str) -> EngineVersion:
        """Read ``text``; raises :class:`~servewise.errors.UsageError` when it is no version.

        ``V0`` and ``V1`` name vLLM's engine generations: 0.0.0 and 0.8.0 (the release
        where V1 became the default).
        """
        given = text.strip()
        generation = {"v0": "0.0.0", "v0 engine": "0.0.0", "v1": "0.8.0"}.get(given.lower())
        match = _ENGINE_VERSION.match(given)
        try:
            if generation is not None:
                return cls(Version(generation), given)
            if match is None:
                raise InvalidVersion(given)
            return cls(Version(match["version"]), given)
        except InvalidVersion:
            raise UsageError(
                f"cannot read engine version {text!r}",
                hint="give a PEP 440 version such as 0.32.0, 0.26.1rc1 or "
                "0.26.1rc1.dev229+g6f91edf96 (`servewise version TEXT` reads image tags)",
                found=text,
            ) from None

    @classmethod
    def coerce(cls, value: EngineVersion | str) -> EngineVersion:
        """``value`` itself, or parsed when it is text."""
        return value if isinstance(value, EngineVersion) else cls.parse(value)

    @property
    def comparable(self) -> Version:
        """The version without its local part: what comparisons use."""
        return Version(self.version.public)

    @property
    def major(self) -> int:
        """The first release number."""
        return self.version.major

    @property
    def minor(self) -> int:
        """The second release number (0 when absent)."""
        return self.version.minor

    @property
    def patch(self) -> int:
        """The third release number (0 when absent)."""
        return self.version.micro

    @property
    def is_prerelease(self) -> bool:
        """Whether this is an alpha, beta, release candidate or development build."""
        return self.version.is_prerelease

    def at_least(self, other: EngineVersion | str) -> bool:
        """Whether this version is ``other`` or later (PEP 440 order, local part ignored)."""
        return self.comparable >= EngineVersion.coerce(other).comparable

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, EngineVersion):
            return NotImplemented
        return self.comparable == other.comparable

    def __lt__(self, other: EngineVersion) -> bool:
        return self.comparable < other.comparable

    def __hash__(self) -> int:
        return hash(self.comparable)

    def __str__(self) -> str:
        return self.raw or str(self.version)


