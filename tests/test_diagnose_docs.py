"""The committed rule pages are what the rule files say (scripts/gen_diagnose_docs.py)."""

from __future__ import annotations

import importlib.util

from support.paths import ROOT

SCRIPT = ROOT / "scripts" / "gen_diagnose_docs.py"


def test_committed_rule_pages_match_the_rules() -> None:
    spec = importlib.util.spec_from_file_location("gen_diagnose_docs", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    wanted = module.pages()
    folder = ROOT / "docs" / "diagnose" / "rules"
    committed = {path.name: path.read_text() for path in folder.glob("*.md")}
    assert set(committed) == set(wanted), "run scripts/gen_diagnose_docs.py"
    for name, text in wanted.items():
        assert committed[name] == text, f"{name} is stale: run scripts/gen_diagnose_docs.py"
