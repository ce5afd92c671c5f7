"""Write docs/diagnose/rules/: one Markdown page per diagnose rule, the index, and the page of
the knowledge tables (tables.md).

The pages come from the rule files (src/servewise/knowledge/data/diagnose/*.toml) through
servewise.diagnose.docs; tests/test_diagnose_docs.py fails when a committed page differs
from what this script writes. Usage::

    .venv/bin/python scripts/gen_diagnose_docs.py
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from servewise.diagnose.docs import rule_page, rules_index, signal_tables_page  # noqa: E402
from servewise.diagnose.ruleset import load_rules  # noqa: E402

OUT = ROOT / "docs" / "diagnose" / "rules"


def pages() -> dict[str, str]:
    """File name → content of every generated page."""
    rules = load_rules(Path("/nonexistent"))  # the shipped rules only
    out = {"index.md": rules_index(rules), "tables.md": signal_tables_page(rules)}
    for rule in rules.rules:
        out[f"{rule.id}.md"] = rule_page(rule, rules)
    return out


def main() -> None:
    """Rewrite the folder."""
    OUT.mkdir(parents=True, exist_ok=True)
    wanted = pages()
    for stale in OUT.glob("*.md"):
        if stale.name not in wanted:
            stale.unlink()
    for name, text in wanted.items():
        (OUT / name).write_text(text)
    print(f"wrote {len(wanted)} pages under {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
