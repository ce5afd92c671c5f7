"""Remake ``tests/slow.txt`` from measured test durations.

Usage::

    .venv/bin/pytest -m "not engine and not registry" --durations=0 -vv -p no:randomly \\
        > durations.log
    .venv/bin/python scripts/slow_tests.py durations.log > tests/slow.txt

It reads pytest's durations report (``1.23s call     tests/x.py::test_y[param]``), adds each
test's setup, call and teardown, and lists a test function as slow when one of its cases
takes :data:`CASE_S` or more, or all its cases together take :data:`FUNCTION_S` or more. A
file all of whose functions are slow is listed whole.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict
from pathlib import Path

CASE_S = 0.5
"""One case (a test, or one parameter of it) this long is slow."""
FUNCTION_S = 2.0
"""All the cases of one function this long together are slow."""

_LINE = re.compile(r"^\s*(?P<seconds>\d+(?:\.\d+)?)s\s+(?:setup|call|teardown)\s+(?P<node>\S+)")


def read_durations(text: str) -> dict[str, float]:
    """Seconds per test case (node id), setup, call and teardown added."""
    cases: dict[str, float] = defaultdict(float)
    for line in text.splitlines():
        match = _LINE.match(line)
        if match:
            cases[match["node"]] += float(match["seconds"])
    return dict(cases)


def slow_entries(cases: dict[str, float]) -> list[tuple[str, float]]:
    """``(PATH or PATH::NAME, seconds)`` for the slow functions, and files whose every
    function is slow."""
    functions: dict[str, list[float]] = defaultdict(list)
    files: dict[str, float] = defaultdict(float)
    for node, seconds in cases.items():
        function = node.split("[", 1)[0]
        functions[function].append(seconds)
        files[node.split("::", 1)[0]] += seconds
    slow = {name: sum(times) for name, times in functions.items()
            if max(times) >= CASE_S or sum(times) >= FUNCTION_S}
    fast_files = {name.split("::", 1)[0] for name in functions if name not in slow}
    whole = set(files) - fast_files
    entries = [(path, files[path]) for path in whole]
    entries += [(name, seconds) for name, seconds in slow.items()
                if name.split("::", 1)[0] not in whole]
    return sorted(entries)


def main(argv: list[str] | None = None) -> int:
    """Print the new list for the durations report named on the command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path, help="pytest output with --durations=0 -vv")
    args = parser.parse_args(argv)
    entries = slow_entries(read_durations(args.report.read_text("utf-8")))
    sys.stdout.write(
        "# Tests of half a second or more on the 2-core machine, or of 2 s or more over all\n"
        "# their parameters: marked `slow` (tests/support/slow.py) and left out by\n"
        "# `make test-fast`. Remade by scripts/slow_tests.py from measured durations; the\n"
        "# figure after each entry is its seconds in that measurement.\n")
    for entry, seconds in entries:
        sys.stdout.write(f"{entry}  # {seconds:.1f} s\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
