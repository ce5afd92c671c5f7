"""How far the diagnose corpus's labels and servewise agree, on the measure-only part.

Three answers per measured excerpt: the label taken from its issue thread (the corpus), the
label a blind second labeller gave from the excerpt alone (``tests/data/diagnose/
second_labels.toml``), and servewise's root cause. The table shows, for category and library,
how often the two labels agree with each other, how often servewise agrees with each, and how
servewise does where both labels agree; then why servewise misses there. Usage::

    .venv/bin/python scripts/label_agreement.py
"""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "src"))

from servewise.diagnose import diagnose_text  # noqa: E402
from servewise.diagnose.ruleset import load_rules  # noqa: E402
from support.diagnose_corpus import load_corpus, load_second_labels, same_library  # noqa: E402


@dataclass(frozen=True)
class Row:
    """The three answers for one excerpt."""

    thread: tuple[str, str]
    second: tuple[str, str]
    found: tuple[str | None, str | None]
    determinable: bool
    confirmed: bool


def _rows() -> list[Row]:
    second = load_second_labels()
    rows = []
    for excerpt in load_corpus():
        if excerpt.part != "measure" or excerpt.id not in second:
            continue  # the second labelling covers the part measured when it was made
        label = second[excerpt.id]
        root = diagnose_text(excerpt.text).root_cause
        category = root.category if root else None
        library = (root.library if root else None) if category != "root_cause_missing" else "none"
        rows.append(Row((excerpt.category, excerpt.library), (label.category, label.library),
                        (category, library), label.determinable, excerpt.confirmed))
    return rows


def _share(hits: int, total: int) -> str:
    return f"{hits}/{total} ({100 * hits / total:.1f} %)" if total else "-"


def _line(name: str, rows: list[Row]) -> str:
    both_c = [r for r in rows if r.thread[0] == r.second[0]]
    both_l = [r for r in rows if same_library(r.second[1], r.thread[1])]
    cells = [
        name, str(len(rows)),
        _share(len(both_c), len(rows)), _share(len(both_l), len(rows)),
        _share(sum(r.found[0] == r.thread[0] for r in rows), len(rows)),
        _share(sum(same_library(r.found[1], r.thread[1]) for r in rows), len(rows)),
        _share(sum(r.found[0] == r.second[0] for r in rows), len(rows)),
        _share(sum(same_library(r.found[1], r.second[1]) for r in rows), len(rows)),
        _share(sum(r.found[0] == r.thread[0] for r in both_c), len(both_c)),
        _share(sum(same_library(r.found[1], r.thread[1]) for r in both_l), len(both_l)),
    ]
    return "| " + " | ".join(cells) + " |"


def _why(rows: list[Row]) -> Counter[str]:
    categories = load_rules().categories
    vague = ("unclassified", "root_cause_missing")
    why: Counter[str] = Counter()
    for row in rows:
        if row.thread[0] != row.second[0] or row.found[0] == row.thread[0]:
            continue
        category = categories.get(row.thread[0])
        if category is not None and not category.has_rule:
            why["the labels' category has no rule"] += 1
        elif row.found[0] in vague and row.thread[0] not in vague:
            why[f"servewise said {row.found[0]}"] += 1
        elif row.thread[0] in vague:
            why[f"both labels say {row.thread[0]}, servewise named a cause"] += 1
        else:
            why["servewise named another cause"] += 1
    return why


def main() -> None:
    """Print the agreement table and the misses where both labels agree."""
    rows = _rows()
    print("| excerpts | n | labels agree: category | labels agree: library "
          "| servewise = thread: category | library | servewise = blind: category | library "
          "| servewise where labels agree: category | library |")
    print("|---" * 10 + "|")
    print(_line("all measured", rows))
    print(_line("blind labeller sure", [r for r in rows if r.determinable]))
    print(_line("blind labeller unsure", [r for r in rows if not r.determinable]))
    print(_line("thread confirms the cause", [r for r in rows if r.confirmed]))
    print()
    print("Where both labels agree on the category and servewise does not:")
    for reason, count in _why(rows).most_common():
        print(f"- {reason}: {count}")


if __name__ == "__main__":
    main()
