"""``tests/slow.txt`` names tests that exist, and the script that remakes it reads pytest."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

from support.paths import ROOT
from support.slow import read_slow_list


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("slow_tests", ROOT / "scripts" / "slow_tests.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_entry_names_a_test_that_exists() -> None:
    for entry in read_slow_list():
        path, _, name = entry.partition("::")
        source = ROOT / path
        assert source.is_file(), entry
        if name:
            function = name.rsplit("::", 1)[-1]
            assert re.search(rf"def {re.escape(function)}\(", source.read_text("utf-8")), entry


def test_the_script_lists_slow_functions_and_whole_files() -> None:
    script = _script()
    report = "\n".join([
        "============================= slowest durations =============================",
        "2.50s call     tests/a.py::test_slow[1]",
        "0.20s setup    tests/a.py::test_slow[1]",
        "0.10s call     tests/a.py::test_fast",
        "0.40s call     tests/b.py::test_many[x]",
        "0.40s call     tests/b.py::test_many[y]",
        "0.40s call     tests/b.py::test_many[z]",
        "0.90s call     tests/b.py::test_many[w]",
        "0.60s call     tests/b.py::test_also[v]",
        "0.40s call     tests/c.py::test_fine",
    ])
    cases = script.read_durations(report)
    assert cases["tests/a.py::test_slow[1]"] == 2.7
    entries = dict(script.slow_entries(cases))
    assert set(entries) == {"tests/a.py::test_slow", "tests/b.py"}
    assert round(entries["tests/b.py"], 2) == 2.70


def test_a_listed_test_is_marked_slow(tmp_path: Path) -> None:
    from support.slow import _key

    class Item:
        nodeid = "tests/a.py::test_slow[param-1]"

    assert _key(Item()) == ("tests/a.py", "test_slow")  # type: ignore[arg-type]
