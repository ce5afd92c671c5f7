"""Write the shipped snapshot of vLLM's recipe database from a clone of vllm-project/recipes.

Usage: python scripts/snapshot_vllm_recipes.py [CLONE]
       (default: ../shared/data/recipes/vllm-project-recipes beside the checkout)

It converts the clone as ``servewise recipe import`` does (with the shipped GPU catalog) and
writes ``src/servewise/knowledge/data/recipes/vllm-recipes.json.gz`` (the converted recipe
files by name, with the source commit; gzip with a zero time stamp, so the same clone gives
the same bytes), and beside it the upstream license and a notice. Any refused file stops it.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
import sys
from pathlib import Path

from servewise.recipes.vllm_import import convert_vllm_recipes

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "src" / "servewise" / "knowledge" / "data" / "recipes"
NOTICE = """\
vllm-recipes.json.gz is converted from vllm-project/recipes
(https://github.com/vllm-project/recipes), commit {commit}.
Copyright the vllm-project/recipes contributors, licensed under the Apache License 2.0
(vllm-recipes.LICENSE.txt beside this file). servewise changed its form: each model file is
turned into servewise recipe files by servewise.recipes.vllm_import (scripts/
snapshot_vllm_recipes.py); the flags are the site's own, put together per hardware,
variant and strategy.
"""


def main(argv: list[str]) -> int:
    """Convert the clone and write the snapshot; 1 when a file was refused."""
    clone = Path(argv[0]) if argv else ROOT.parent / "shared" / "data" / "recipes" / \
        "vllm-project-recipes"
    report, texts = convert_vllm_recipes(clone)
    if report.problems:
        for problem in report.problems:
            print(problem, file=sys.stderr)
        return 1
    source = (clone / "SOURCE.md").read_text("utf-8") if (clone / "SOURCE.md").is_file() else ""
    found = re.search(r"\*\*Commit:\*\* `([0-9a-f]{40})`", source)
    commit = found.group(1) if found else "unknown"
    files = {name: json.loads(text) for name, text in sorted(texts.items())}
    data = json.dumps({"source": "https://github.com/vllm-project/recipes", "commit": commit,
                       "files": files}, ensure_ascii=False, separators=(",", ":"))
    (TARGET / "vllm-recipes.json.gz").write_bytes(gzip.compress(data.encode(), mtime=0))
    shutil.copyfile(clone / "LICENSE.txt", TARGET / "vllm-recipes.LICENSE.txt")
    (TARGET / "vllm-recipes.NOTICE.txt").write_text(NOTICE.format(commit=commit), "utf-8")
    counts = report.counts()
    print(f"{sum(report.recipes.values())} recipes of {counts.get('imported', 0)} models "
          f"({counts.get('out of scope', 0)} out of scope) from {commit}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
