"""Check every combination vLLM's recipe database offers (models servewise reads offline).

Usage: python scripts/recipe_agreement.py [--json FILE] [--write]

Prints the Markdown table of disagreements that ``docs/recipes.md`` keeps (between the
``<!-- agreement -->`` markers), with the counts; ``--write`` puts it there. Each
disagreement is a recipe that says it runs where ``check`` answers WILL NOT START, with
``check``'s cause and the cause's owner (importer, planner or the recipe itself) read from
:data:`OWNERS`.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import sys
from pathlib import Path

from servewise.check.agreement import Agreement, agreement
from servewise.recipes import load_recipes

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "recipes.md"
START, END = "<!-- agreement -->", "<!-- /agreement -->"

OWNERS = [
    (r"does not divide the \d+ attention heads", "recipe",
     "the site's multi-node TP spans every GPU of the nodes; vLLM needs the heads divisible"),
    (r"the layout TP\d+ DP\d+ EP\d+ needs \d+ GPUs", "recipe",
     "an AMD hardware override sets --tensor-parallel-size 2 on top of the DEP strategy's "
     "--data-parallel-size 8: the site's command asks for twice the node's GPUs"),
    (r"max seq len|No available memory|will not start", "planner",
     "the planner finds less KV memory than the engine (issue 30: MoE activation, hybrid and "
     "DeepSeek-V4 accounting)"),
]


NEEDED = re.compile(r"\(([\d.]+) GiB KV cache is needed, which is larger than the available KV "
                    r"cache memory \(([\d.]+) GiB\)")


def owner(cause: str) -> tuple[str, str]:
    """Who a disagreement's cause belongs to, and why."""
    found = NEEDED.search(cause)
    if found and float(found.group(1)) > 1.5 * float(found.group(2)):
        return "recipe", ("the recipe leaves --max-model-len at the model's own length, which "
                          "needs far more KV memory than the GPUs have: vLLM refuses it too")
    for pattern, who, why in OWNERS:
        if re.search(pattern, cause):
            return who, why
    return "unexplained", "not yet traced"


def table(results: list[Agreement]) -> str:
    """The Markdown summary and the table of disagreements."""
    agree = sum(1 for r in results if r.will_start)
    lines = [f"{len(results)} combinations checked (offline-readable models), "
             f"**{agree} WILL START**, {len(results) - agree} WILL NOT START.", ""]
    by_owner = collections.Counter(owner(r.cause)[0] for r in results if not r.will_start)
    lines.append("Disagreements by cause: " + ", ".join(
        f"{who} {count}" for who, count in sorted(by_owner.items())) + ".")
    lines += ["", "| recipe | status | owner | check's cause |", "|---|---|---|---|"]
    for result in sorted(results, key=lambda r: r.recipe):
        if result.will_start:
            continue
        cause = result.cause.replace("|", "\\|")
        if len(cause) > 160:
            cause = cause[:157] + "..."
        lines.append(f"| `{result.recipe}` | {result.status} | {owner(result.cause)[0]} | "
                     f"{cause} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    """Check the combinations, print (or write) the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", type=Path, help="also write every result as JSON here")
    parser.add_argument("--write", action="store_true", help="update docs/recipes.md")
    args = parser.parse_args(argv)
    results = agreement(load_recipes())
    text = table(results)
    if args.json:
        args.json.write_text(json.dumps([r.to_dict() for r in results], indent=1), "utf-8")
    if args.write:
        doc = DOC.read_text("utf-8")
        before, _, rest = doc.partition(START)
        _, _, after = rest.partition(END)
        DOC.write_text(f"{before}{START}\n{text}{END}{after}", "utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
