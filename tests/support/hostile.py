"""The hostile-input suite's harness (``tests/hostile``): each case within its memory and time.

:func:`bounded` runs a snippet of Python in a fresh interpreter under an address-space cap
(``resource.setrlimit``), and reports its wall time, peak resident memory and what it
printed; a case passes when the answer is right (or the error clear) *and* both stay under
the issue's limits: :data:`MEMORY_MB` and :data:`SECONDS`.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

MEMORY_MB = 500
"""The most resident memory a hostile case may reach."""
SECONDS = 10.0
"""The most wall time a hostile case may take."""
_CAP_BYTES = 2 * 2**30
"""The address-space cap of the child (virtual memory runs above resident)."""
_REPORT = "\n__report__ = __import__('resource').getrusage(__import__('resource').RUSAGE_SELF)\n" \
          "print('@@' + __import__('json').dumps({'rss_kb': __report__.ru_maxrss}))\n"


@dataclass(frozen=True)
class Outcome:
    """How a bounded snippet ended."""

    returncode: int
    seconds: float
    rss_mb: float
    stdout: str
    stderr: str


def _cap() -> None:  # pragma: no cover - runs in the child before exec
    resource.setrlimit(resource.RLIMIT_AS, (_CAP_BYTES, _CAP_BYTES))


def bounded(code: str, *, env: dict[str, str] | None = None, cwd: Path | None = None,
            timeout: float = 60.0) -> Outcome:
    """Run ``code`` in a fresh interpreter under the memory cap; its time and peak memory."""
    begin = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code) + _REPORT], capture_output=True,
        text=True, timeout=timeout, preexec_fn=_cap, env={**os.environ, **(env or {})},
        cwd=cwd)
    seconds = time.monotonic() - begin
    rss = 0.0
    lines = []
    for line in done.stdout.splitlines():
        if line.startswith("@@"):
            rss = json.loads(line[2:])["rss_kb"] / 1024
        else:
            lines.append(line)
    return Outcome(done.returncode, seconds, rss, "\n".join(lines), done.stderr)


def within_limits(outcome: Outcome) -> None:
    """Assert the snippet ended normally within :data:`MEMORY_MB` and :data:`SECONDS` (the
    figures are printed: ``pytest -s tests/hostile`` shows each case's)."""
    print(f"hostile case: {outcome.seconds:.2f} s, peak {outcome.rss_mb:.0f} MB")
    assert outcome.returncode == 0, outcome.stderr[-3000:]
    assert outcome.seconds < SECONDS, f"took {outcome.seconds:.1f} s"
    assert 0 < outcome.rss_mb < MEMORY_MB, f"peak {outcome.rss_mb:.0f} MB"
