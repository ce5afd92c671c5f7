"""JIT-dispatch evidence: which architectures a library's host code dispatches to.

Libraries such as DeepGEMM carry no compiled GPU code of their own: they
JIT-compile kernels at run time and choose them by architecture in host code.
What they support shows in their symbols and read-only strings:

* names starting with an arch prefix: ``sm90_fp8_gemm_1d2d``, ``sm120_split_k_reduce``
  (also inside mangled names, after the length digits: ``15sm120_fp8_gemm``);
* mangled class names: ``SM120ArchSpec``, ``SM100FP8FP4Gemm1D1DRuntime``;
* asserts on the major revision: ``arch_major == 12``;
* compiler flags: ``-gencode=arch=compute_120f,code=sm_120f``;
* shipped kernel headers: ``deep_gemm/include/deep_gemm/impls/sm120_*.cuh``.

:class:`DispatchStringCollector` is fed the host bytes of a library in chunks (never
the payloads of its fatbins) and keeps the distinct names found per arch, plus
git hashes found beside the word ``git`` or pinned as ``repo@hash``, and
version strings such as ``NCCL version 2.27.3+cuda13.0``. It is pure: bytes in,
data out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from servewise.archs import Arch, arch_of_name

#: Longest name kept; a match that reaches a chunk boundary is rescanned with the next chunk.
MAX_NAME = 160

_PREFIX_RE = re.compile(rb"sm(\d{2,3})([af]?)_([A-Za-z0-9_]{1,%d})" % MAX_NAME)
_CLASS_RE = re.compile(rb"SM(\d{2,3})([af]?)([A-Z][A-Za-z0-9_]{1,%d})" % MAX_NAME)
_MAJOR_RE = re.compile(rb"arch_major(?:\(\))? ?== ?(\d{1,2})\b")
_GENCODE_RE = re.compile(rb"arch=compute_(\d{2,3})([af]?)")
_GIT_RE = re.compile(rb"git[-_ :=]{0,3}(?:hash|sha|rev|commit)?[-_ :=]{0,3}([0-9a-f]{7,40})\b")
#: A pinned source: ``vllm-project/DeepGEMM@e21c821f``.
_PIN_RE = re.compile(rb"@([0-9a-f]{7,40})\b")
#: ``NAME version X.Y[.Z][suffix]``: the literal `` version `` is searched, the name read back.
_VERSION_RE = re.compile(
    rb" version v?(\d{1,4}(?:\.\d{1,6}){1,3}(?:[-+.~_]?[0-9A-Za-z][0-9A-Za-z.+~_-]{0,40})?)"
)
_VERSION_NAME_RE = re.compile(rb"[A-Za-z][A-Za-z0-9_+-]{0,39}\Z")
#: Bytes read back before `` version `` for the name (the carry keeps at least this many).
_LOOKBACK = 40
#: Distinct version strings kept per library.
MAX_VERSIONS = 32
_HEADER_RE = re.compile(r"(?:^|/)impls/sm(\d{2,3})([af]?)_[A-Za-z0-9_]+\.cuh$")

#: Bytes that may stand before an arch prefix: anything but a letter or underscore
#: (a digit is the length prefix of a mangled name).
_WORD_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")

_LETTERS = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_NAME_BYTES = _WORD_BYTES | frozenset(b"0123456789-.")

_OVERLAP = MAX_NAME + 64

#: What each pattern finds, the pattern, and a substring that must be present for it to run.
_PATTERNS: tuple[tuple[str, re.Pattern[bytes], bytes | None], ...] = (
    ("name", _PREFIX_RE, None),
    ("name", _CLASS_RE, None),
    ("major", _MAJOR_RE, b"arch_major"),
    ("gencode", _GENCODE_RE, b"arch=compute_"),
    ("git", _GIT_RE, b"git"),
    ("pin", _PIN_RE, b"@"),
    ("version", _VERSION_RE, b" version "),
)


@dataclass(frozen=True)
class DispatchStrings:
    """Distinct dispatch names per architecture, with git hashes seen in the strings."""

    names: dict[str, tuple[str, ...]]
    """Arch in NVIDIA spelling (``sm_120``) → sorted distinct names that point at it."""
    git_hashes: tuple[str, ...]
    """Hex strings next to the word ``git`` or after ``repo@`` (build provenance)."""
    versions: tuple[str, ...] = ()
    """Embedded ``NAME version X.Y.Z`` strings, sorted and distinct."""

    def counts(self) -> dict[str, int]:
        """Number of distinct names per arch."""
        return {arch: len(names) for arch, names in self.names.items()}

    @property
    def archs(self) -> tuple[Arch, ...]:
        """The architectures with any evidence, in order."""
        return tuple(sorted(arch_of_name(name) for name in self.names))


def _arch_name(number: bytes, suffix: bytes) -> str | None:
    value = int(number)
    if not 20 <= value <= 199:
        return None
    return f"sm_{value}{suffix.decode()}"


def header_arch(path: str) -> str | None:
    """The arch a shipped kernel header is for (``.../impls/sm120_x.cuh`` → ``sm_120``)."""
    match = _HEADER_RE.search(path)
    if match is None:
        return None
    return _arch_name(match.group(1).encode(), match.group(2).encode())


class DispatchStringCollector:
    """Incremental search of host bytes for dispatch evidence.

    Call :meth:`feed` with consecutive chunks of one host region, :meth:`cut` where
    the region is interrupted (a fatbin or cubin lies between two regions), and
    :meth:`result` at the end.
    """

    def __init__(self) -> None:
        self._names: dict[str, set[str]] = {}
        self._git: set[str] = set()
        self._versions: set[str] = set()
        self._carry = b""
        # Per pattern: where its search resumes in ``self._carry``. The carry keeps
        # already-scanned bytes in front (the byte before a name decides whether it counts;
        # a version string's name is read back up to _LOOKBACK bytes), and a search never
        # restarts inside a match already taken, so chunking cannot change what is found.
        self._resume = [0] * len(_PATTERNS)

    def feed(self, chunk: bytes) -> None:
        """Scan one more chunk of the current host region."""
        if not chunk:
            return
        data = self._carry + chunk if self._carry else bytes(chunk)
        if len(data) - min(self._resume) <= _OVERLAP:
            self._carry = data
            return
        limit = len(data) - _OVERLAP
        self._scan(data, limit)
        keep = max(limit - 1 - _LOOKBACK, 0)
        self._carry = data[keep:]
        self._resume = [position - keep for position in self._resume]

    def cut(self) -> None:
        """End the current host region: scan what is held back and start afresh."""
        if self._carry:
            self._scan(self._carry, len(self._carry))
            self._carry = b""
        self._resume = [0] * len(_PATTERNS)

    def result(self) -> DispatchStrings:
        """The evidence gathered so far (ends the current region first)."""
        self.cut()
        return DispatchStrings(
            names={arch: tuple(sorted(names)) for arch, names in sorted(self._names.items())},
            git_hashes=tuple(sorted(self._git)),
            versions=tuple(sorted(self._versions)),
        )

    def _add(self, arch: str | None, name: bytes) -> None:
        if arch is not None:
            self._names.setdefault(arch, set()).add(name.decode("ascii", "replace"))

    def _scan(self, data: bytes, limit: int) -> None:
        """Record matches that start before ``limit`` (later ones are seen again)."""
        for index, (kind, pattern, keyword) in enumerate(_PATTERNS):
            position = self._resume[index]
            if keyword is None or keyword in data:
                for match in pattern.finditer(data, position):
                    if match.start() >= limit:
                        break
                    position = match.end()
                    self._take(kind, match, data)
            self._resume[index] = max(position, limit)

    def _take(self, kind: str, match: re.Match[bytes], data: bytes) -> None:
        start = match.start()
        before = data[start - 1] if start else 0
        if kind == "name":  # not when it continues a word
            if before not in _WORD_BYTES:
                self._add(_arch_name(match.group(1), match.group(2)), match.group(0))
        elif kind == "major":
            self._add(_arch_name(match.group(1) + b"0", b""), match.group(0))
        elif kind == "gencode":
            self._add(_arch_name(match.group(1), match.group(2)), match.group(0))
        elif kind == "version":
            self._take_version(match, data)
        elif (kind == "git" and before not in _LETTERS) or (
            kind == "pin" and before in _NAME_BYTES
        ):
            # "git" must start a word (not "digit"); "@" must follow a name ("repo@hash").
            self._git.add(match.group(1).decode())

    def _take_version(self, match: re.Match[bytes], data: bytes) -> None:
        """Record ``NAME version X`` when a whole name stands before `` version ``."""
        start = match.start()
        window = data[max(start - _LOOKBACK - 1, 0) : start]
        name = _VERSION_NAME_RE.search(window)
        if name is None or len(self._versions) >= MAX_VERSIONS:
            return
        # A name longer than the window shows as a byte of a name just before it.
        if name.start() > 0 and window[name.start() - 1] in _NAME_BYTES:
            return
        text = name.group(0) + match.group(0)
        self._versions.add(text.decode("ascii", "replace"))
