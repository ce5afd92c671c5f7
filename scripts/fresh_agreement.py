"""Fresh rounds against two labellings: is diagnose's precision its own, or the labels'?

For each excerpt of fresh rounds 18 to 25, ``tests/data/diagnose/fresh_second_labels.toml``
holds a blind second label (given from the excerpt's text alone: anonymous ids, no thread, no
servewise output, no rules) and servewise's answer *as scored when the round was fresh*. This
prints, for category and library, how often the two labellings agree, and servewise's fresh
figures against the thread's label, against the blind label, and where both agree; precision
is among the answers that name a category (not ``unclassified``/``unknown``/
``root_cause_missing``). Usage::

    .venv/bin/python scripts/fresh_agreement.py
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from support.diagnose_corpus import (  # noqa: E402
    UNNAMED,
    load_corpus,
    same_category,
    same_library,
)

LABELS = ROOT / "tests" / "data" / "diagnose" / "fresh_second_labels.toml"


def _pct(part: int, whole: int) -> str:
    return f"{part} of {whole} ({100 * part / whole:.1f} %)" if whole else "-"


def main() -> None:
    """Print the table."""
    corpus = {e.id: e for e in load_corpus()}
    rows = tomllib.loads(LABELS.read_text(encoding="utf-8"))["label"]
    subsets = {"all": rows, "blind labeller sure": [r for r in rows if r["sure"]]}
    for name, chosen in subsets.items():
        agree_c = [r for r in chosen if same_category(r["category"], corpus[r["id"]].category)]
        agree_l = [r for r in chosen
                   if same_library(r["library"], corpus[r["id"]].library)]
        named = [r for r in chosen if r["fresh_category"] not in UNNAMED]
        print(f"{name}: {len(chosen)} excerpts")
        print(f"  labels agree: category {_pct(len(agree_c), len(chosen))}, "
              f"library {_pct(len(agree_l), len(chosen))}")
        for label, pick in (("thread label", lambda r: corpus[r["id"]].category),
                            ("blind label", lambda r: r["category"])):
            right = [r for r in chosen if same_category(r["fresh_category"], pick(r))]
            precise = [r for r in named if same_category(r["fresh_category"], pick(r))]
            print(f"  servewise (fresh) = {label}: category {_pct(len(right), len(chosen))}, "
                  f"precision {_pct(len(precise), len(named))}")
        both = [r for r in named if r in agree_c]
        precise = [r for r in both if same_category(r["fresh_category"], r["category"])]
        right = [r for r in agree_c if same_category(r["fresh_category"], r["category"])]
        print(f"  where both labels agree: category {_pct(len(right), len(agree_c))}, "
              f"precision {_pct(len(precise), len(both))}")
        wrong = [r["id"] for r in both if not same_category(r["fresh_category"], r["category"])]
        if wrong:
            print(f"  named wrong where both labels agree: {', '.join(wrong)}")


if __name__ == "__main__":
    main()
