"""Write the shipped snapshot of SGLang's cookbook from a clone of sgl-project/sglang.

Usage: python scripts/snapshot_sglang_cookbook.py [CLONE]
       (default: tests/data/recipes/sglang-configs, the cookbook files copied into the tests)

It converts the clone's ``docs_new/src/snippets/configs`` as ``servewise recipe import`` does
(with the shipped GPU catalog) and writes ``src/servewise/knowledge/data/recipes/
sglang-cookbook.json.gz`` (the converted recipe files by name, with the source commits; gzip
with a zero time stamp, so the same files give the same bytes), and beside it the license and
a notice. Any refused file stops it. ``tests/recipes/test_sglang_import.py`` checks that the
shipped snapshot is what this writes from the test files.
"""

from __future__ import annotations

import gzip
import json
import shutil
import sys
from pathlib import Path

from servewise.recipes.sglang_import import REPO_URL, convert_sglang_cookbook, source_commits

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "src" / "servewise" / "knowledge" / "data" / "recipes"
DEFAULT = ROOT / "tests" / "data" / "recipes" / "sglang-configs"
NOTICE = """\
sglang-cookbook.json.gz is converted from the SGLang cookbook's config files in
sgl-project/sglang ({url}), docs_new/src/snippets/configs/,
at the commits listed in the snapshot ("commits": file → commit).
Copyright 2023-2024 SGLang Team, licensed under the Apache License 2.0
(sglang-cookbook.LICENSE.txt beside this file). servewise changed their form: each config
file's cells (and the benchmark entries beside them) are turned into servewise recipe files
by servewise.recipes.sglang_import (scripts/snapshot_sglang_cookbook.py); the flags and
numbers are the cookbook's own.
"""


def snapshot(clone: Path) -> tuple[bytes, str]:
    """The snapshot's bytes and a one-line summary; raises when a file is refused."""
    report, texts = convert_sglang_cookbook(clone, strict=True)
    commits = source_commits(clone)
    distinct = sorted(set(commits.values()))
    files = {name: json.loads(text) for name, text in sorted(texts.items())}
    data = json.dumps({"source": REPO_URL,
                       "commit": distinct[0] if len(distinct) == 1 else "several (see commits)",
                       "commits": dict(sorted(commits.items())), "files": files},
                      ensure_ascii=False, separators=(",", ":"))
    counts = report.counts()
    summary = (f"{sum(report.recipes.values())} recipes of {counts.get('imported', 0)} "
               f"cookbook models ({counts.get('out of scope', 0)} out of scope) in "
               f"{len(files)} files")
    return gzip.compress(data.encode(), mtime=0), summary


def main(argv: list[str]) -> int:
    """Convert the clone and write the snapshot, its license and notice."""
    clone = Path(argv[0]) if argv else DEFAULT
    data, summary = snapshot(clone)
    (TARGET / "sglang-cookbook.json.gz").write_bytes(data)
    shutil.copyfile(TARGET / "vllm-recipes.LICENSE.txt", TARGET / "sglang-cookbook.LICENSE.txt")
    (TARGET / "sglang-cookbook.NOTICE.txt").write_text(NOTICE.format(url=REPO_URL), "utf-8")
    print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
