"""The ``slow`` marker from one list: ``tests/slow.txt``.

A test that takes half a second or more on the 2-core machine (a real server or subprocess, a
timed run, a sweep over a corpus) is named in ``tests/slow.txt`` instead of being marked in
its file, so the list is kept in one place and remade from measured durations
(``scripts/slow_tests.py``). ``make test-fast`` deselects ``slow`` along with ``engine``,
``registry`` and ``online``; ``make test`` runs everything.

Each line of the list is ``PATH`` (every test of the file) or ``PATH::NAME`` (a test
function, every parameter of it; a method as ``PATH::Class::NAME``); ``#`` starts a comment.
"""

from __future__ import annotations

from pathlib import Path

import pytest

LIST = Path(__file__).resolve().parents[1] / "slow.txt"


def read_slow_list(path: Path = LIST) -> list[str]:
    """The entries of the list: ``PATH`` or ``PATH::NAME``, comments and blanks left out."""
    entries = []
    for line in path.read_text("utf-8").splitlines():
        entry = line.split("#", 1)[0].strip()
        if entry:
            entries.append(entry)
    return entries


def _key(item: pytest.Item) -> tuple[str, str]:
    """``(path relative to the repository, test name without its parameters)``."""
    path, _, rest = item.nodeid.partition("::")
    return path, rest.split("[", 1)[0]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every listed test ``slow``."""
    files: set[str] = set()
    tests: set[tuple[str, str]] = set()
    for entry in read_slow_list():
        path, _, name = entry.partition("::")
        if name:
            tests.add((path, name))
        else:
            files.add(path)
    for item in items:
        path, name = _key(item)
        if path in files or (path, name) in tests:
            item.add_marker(pytest.mark.slow)
