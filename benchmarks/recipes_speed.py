"""Benchmark reading the recipe book: what `servewise check` pays before it can match.

Usage::

    .venv/bin/python benchmarks/recipes_speed.py [--runs 7] [--json OUT]

Each run is a fresh interpreter that imports ``servewise.recipes``, loads the shipped
recipes and matches DeepSeek-V4-Flash-0731 on 8 x H200 with SGLang, timed inside the process
from before the import to after the match; the median of ``--runs`` is reported for:

* warm: the checked recipes come from the cache (every run after the first);
* cold: an empty cache folder, so every file is parsed with libyaml and checked field by
  field (the first run after an install or a change of the data);
* baseline: cold with PyYAML's pure-Python ``SafeLoader`` (what ``yaml.safe_load`` does).

A last line times ``servewise recipe match … --json`` as a whole command, warm (interpreter
start and the Typer app included).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from _startup import bytecode_ready  # noqa: E402

PROBE = r"""
import sys, time
start = time.perf_counter()
if sys.argv[1] == "python":
    import yaml
    import servewise.recipes.load as load
    load._LOADER = yaml.SafeLoader
from servewise.recipes import load_recipes
book = load_recipes()
best = book.match(model="deepseek-ai/DeepSeek-V4-Flash-0731", hw="h200:8", engine="sglang")
assert best[0].recipe.status == "verified"
print(len(book), time.perf_counter() - start)
"""


def _probe(loader: str, env: dict[str, str], cold: bool) -> tuple[int, float]:
    if cold:
        env = {**env, "SERVEWISE_CACHE_DIR": tempfile.mkdtemp(prefix="recipes-bench-")}
    done = subprocess.run([sys.executable, "-c", PROBE, loader], capture_output=True,
                          text=True, check=True, env=env)
    count, seconds = done.stdout.split()
    return int(count), float(seconds)


def _command(env: dict[str, str]) -> float:
    exe = Path(sys.executable).with_name("servewise")
    start = time.perf_counter()
    subprocess.run([str(exe), "recipe", "match", "deepseek-ai/DeepSeek-V4-Flash-0731",
                    "--gpu", "h200:8", "--engine", "sglang", "--json"],
                   capture_output=True, check=True, env=env)
    return time.perf_counter() - start


def main() -> int:
    """Run the benchmark and print a table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json", type=Path, default=ROOT / "benchmarks" / "results" /
                        "recipes_speed.json")
    args = parser.parse_args()
    bytecode_ready()
    env = {**os.environ, "SERVEWISE_DATA_DIR": str(ROOT / "benchmarks" / "results" / "empty")}
    results: dict[str, float] = {}
    count = 0
    env["SERVEWISE_CACHE_DIR"] = tempfile.mkdtemp(prefix="recipes-bench-")
    for label, loader, cold in (("warm (cached)", "c", False), ("cold, libyaml", "c", True),
                                ("baseline: cold, pure-Python YAML", "python", True)):
        _probe(loader, env, cold)  # warm the file cache (and, warm, the recipe cache)
        runs = [_probe(loader, env, cold) for _ in range(args.runs)]
        count = runs[0][0]
        results[label] = statistics.median(seconds for _, seconds in runs)
    _command(env)
    results["servewise recipe match --json (whole command)"] = statistics.median(
        _command(env) for _ in range(args.runs))
    print(f"{count} recipes, median of {args.runs} runs")
    for label, seconds in results.items():
        print(f"  {label:48} {seconds:.3f} s")
    ratio = results["baseline: cold, pure-Python YAML"] / results["warm (cached)"]
    print(f"  baseline / warm: {ratio:.1f}x")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"recipes": count, "runs": args.runs, "median_s": results,
                                     "ratio": ratio}, indent=2) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
