"""Score diagnose on a fresh round of the corpus: excerpts gathered after the rules were frozen.

For each excerpt of the round (``round = N`` at the top of its corpus file) it compares
servewise's root cause with the labels and prints, per excerpt and in total:

- category right (``unknown`` and ``unclassified`` count as the same answer);
- library right (as ``tests/diagnose/test_corpus.py`` counts it);
- named: a category other than ``unclassified``/``unknown``/``root_cause_missing``;
- precision: right where a category was named;
- root line cited: one of the labelled root lines is among the answer's evidence lines;
- located: the answer cites at least one line.

Usage::

    .venv/bin/python scripts/diagnose_fresh.py 13          # one round
    .venv/bin/python scripts/diagnose_fresh.py 13 --quiet  # totals only
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "src"))

from servewise.diagnose import diagnose_text  # noqa: E402
from support.diagnose_corpus import (  # noqa: E402
    UNNAMED,
    Excerpt,
    load_corpus,
    same_category,
    same_library,
)


@dataclass(frozen=True)
class Score:
    """How one answer compares with its labels."""

    excerpt: Excerpt
    category: str
    library: str | None
    lines: tuple[int, ...]
    confidence: float

    @property
    def category_right(self) -> bool:
        """The category is the label's."""
        return same_category(self.category, self.excerpt.category)

    @property
    def library_right(self) -> bool:
        """The library is the label's (``none`` for a missing cause)."""
        library = "none" if self.category == "root_cause_missing" else self.library
        return same_library(library, self.excerpt.library)

    @property
    def named(self) -> bool:
        """A specific category was named."""
        return self.category not in UNNAMED

    @property
    def root_cited(self) -> bool:
        """A labelled root line is among the lines the answer cites."""
        return bool(set(self.lines) & set(self.excerpt.root_lines))


def score(excerpt: Excerpt) -> Score:
    """Diagnose one excerpt and keep what the measures need."""
    root = diagnose_text(excerpt.text).root_cause
    if root is None:
        return Score(excerpt, "none", None, (), 0.0)
    return Score(excerpt, root.category, root.library,
                 tuple(item.line for item in root.evidence), root.confidence)


def totals(scores: list[Score]) -> dict[str, tuple[int, int]]:
    """Each measure as (count, out of)."""
    named = [s for s in scores if s.named]
    return {
        "category right": (sum(s.category_right for s in scores), len(scores)),
        "library right": (sum(s.library_right for s in scores), len(scores)),
        "precision (right when named)": (sum(s.category_right for s in named), len(named)),
        "root line cited": (sum(s.root_cited for s in scores), len(scores)),
        "located (cites a line)": (sum(bool(s.lines) for s in scores), len(scores)),
    }


def main() -> int:
    """Print the round's table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("round", type=int)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args()
    excerpts = [e for e in load_corpus() if e.round == args.round]
    if not excerpts:
        print(f"no excerpt of round {args.round}", file=sys.stderr)
        return 2
    scores = [score(e) for e in excerpts]
    if not args.quiet:
        for s in scores:
            marks = "".join(("C" if s.category_right else "-", "L" if s.library_right else "-",
                             "R" if s.root_cited else "-", "N" if s.named else " "))
            print(f"{marks} {s.excerpt.id:28} {s.category:32} {s.library or '-':20} "
                  f"{s.confidence:.2f} lines {list(s.lines)[:4]}  label {s.excerpt.category}"
                  f" / {s.excerpt.library} @ {list(s.excerpt.root_lines)}")
    print(f"round {args.round}: {len(scores)} excerpts")
    for name, (count, total) in totals(scores).items():
        share = f"{100 * count / total:.1f} %" if total else "-"
        print(f"  {name:30} {count:3} / {total:<3} {share}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
