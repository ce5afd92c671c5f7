"""CUDA architectures and the rules for where compiled code runs.

An :class:`Arch` is an SM number plus NVIDIA's suffix: ``""`` (plain), ``"a"``
(arch-specific, runs on exactly that compute capability) or ``"f"``
(family-specific, runs on the same major revision at an equal or higher minor).
SASS (``sm_XY``) runs on the same major at an equal or higher minor; PTX
(``compute_XY``) is JIT-compiled by the driver for any device at or above it,
unless it carries ``a`` (exact) or ``f`` (family) — ``research/gate.md`` §2.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from servewise.errors import UsageError

SUFFIXES = ("", "a", "f")

_ARCH_RE = re.compile(
    r"^(?:(?P<prefix>sm|compute)_?)?(?P<num>\d{2,3})(?P<suffix>[af]?)$"
    r"|^(?P<major>\d{1,2})\.(?P<minor>\d)(?P<suffix2>[af]?)$"
)


@dataclass(frozen=True, order=True)
class Arch:
    """An SM number (``90``, ``100``, ``120``) with its suffix (``""``, ``"a"``, ``"f"``)."""

    number: int
    suffix: str = ""

    @property
    def major(self) -> int:
        """The compute-capability major revision (``120`` → 12, ``90`` → 9)."""
        return self.number // 10

    @property
    def minor(self) -> int:
        """The compute-capability minor revision (``121`` → 1)."""
        return self.number % 10

    @property
    def sass_name(self) -> str:
        """NVIDIA's spelling for compiled code: ``sm_90a``."""
        return f"sm_{self.number}{self.suffix}"

    @property
    def ptx_name(self) -> str:
        """NVIDIA's spelling for virtual (PTX) code: ``compute_90a``."""
        return f"compute_{self.number}{self.suffix}"

    @classmethod
    def parse(cls, text: str) -> Arch:
        """Read ``sm_90a``, ``compute_120f``, ``sm120``, ``90`` or ``12.0f``."""
        match = _ARCH_RE.match(text.strip().lower())
        if match is None:
            raise UsageError(
                f"not a CUDA architecture: {text!r}",
                hint="write it as sm_90, sm_90a, sm_120f, compute_80 or 12.0",
                expected="sm_NN[a|f], compute_NN[a|f] or MAJOR.MINOR",
                found=text,
            )
        if match.group("num") is not None:
            number = int(match.group("num"))
            if number < 20 and match.group("prefix") is None:
                # A bare "12" is far likelier a major revision than the old sm_12.
                raise UsageError(
                    f"ambiguous CUDA architecture: {text!r}",
                    hint="write a compute capability with its dot (12.0) or an SM number (sm_120)",
                    expected="sm_NN, compute_NN or MAJOR.MINOR",
                    found=text,
                )
            return cls(number, match.group("suffix"))
        number = int(match.group("major")) * 10 + int(match.group("minor"))
        return cls(number, match.group("suffix2"))


_NAME_RE = re.compile(r"^(?:sm|compute)_(\d+)([af]?)$")


def arch_of_name(name: str) -> Arch:
    """The arch of a name servewise itself wrote from a binary (``sm_90a``, ``compute_80``).

    Unlike :meth:`Arch.parse`, which checks what a person typed, any SM number is
    accepted here: whatever a binary declares is reported, not rejected.
    """
    match = _NAME_RE.match(name)
    if match is None:
        raise ValueError(f"not an arch name written by servewise: {name!r}")
    return Arch(int(match.group(1)), match.group(2))


@dataclass(frozen=True, order=True)
class ComputeCapability:
    """A device's compute capability, ``12.0`` for an RTX PRO 6000 Blackwell."""

    major: int
    minor: int

    @property
    def number(self) -> int:
        """The SM number of this device (``12.0`` → 120)."""
        return self.major * 10 + self.minor

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"

    @classmethod
    def parse(cls, text: str) -> ComputeCapability:
        """Read ``12.0``, ``sm_120`` or ``120``."""
        arch = Arch.parse(text)
        return cls(arch.major, arch.minor)


def sass_runs_on(arch: Arch, device: ComputeCapability) -> bool:
    """Whether a cubin compiled for ``arch`` loads on ``device``.

    Same major revision and a minor at or below the device's; ``a`` only on
    exactly that compute capability; ``f`` like plain SASS within the family.
    """
    if arch.major != device.major:
        return False
    if arch.suffix == "a":
        return arch.minor == device.minor
    return arch.minor <= device.minor


def ptx_runs_on(arch: Arch, device: ComputeCapability) -> bool:
    """Whether PTX for ``arch`` can be JIT-compiled by the driver for ``device``.

    Plain PTX compiles forward to any device at or above it; ``a`` PTX only for
    exactly that device; ``f`` PTX only within the family at or above it.
    """
    if arch.suffix == "a":
        return arch.number == device.number
    if arch.suffix == "f":
        return arch.major == device.major and arch.minor <= device.minor
    return arch.number <= device.number
