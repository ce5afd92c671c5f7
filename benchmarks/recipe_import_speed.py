"""Benchmark importing vLLM's whole recipe database, and `check` with the shipped snapshot.

Usage::

    .venv/bin/python benchmarks/recipe_import_speed.py [--runs 5] [--clone DIR] [--json OUT]

Every case is a fresh process (interpreter start included), from compiled bytecode; the median
of ``--runs``, interleaved:

* ``servewise recipe import CLONE --dry-run --json``: the 173 model files, the taxonomy and the
  strategies read, every combination put together and its flags checked (goal: under 3 s);
* baseline: the same files read with PyYAML's ``yaml.safe_load`` alone, nothing done with them
  (what any reader of the database pays at least without libyaml);
* ``servewise check openai/gpt-oss-120b --gpu h200:8 --json``: a bundled model whose recipe
  comes from the shipped snapshot, warm cache (goal: under 0.5 s); and the first ``check``
  after an install (cold cache: the snapshot read and checked once).
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

SW = str(Path(sys.executable).with_name("servewise"))
BASELINE = r"""
import sys, yaml
from pathlib import Path
root = Path(sys.argv[1])
files = [root / "taxonomy.yaml", *sorted((root / "strategies").glob("*.yaml")),
         *sorted((root / "models").glob("*/*.yaml"))]
print(sum(1 for f in files if yaml.safe_load(f.read_text("utf-8")) is not None))
"""


def _time(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"{argv}: exit {done.returncode}: {done.stderr[-400:]}")
    return elapsed


def main() -> None:
    """Run the cases and print the medians."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--clone", type=Path,
                        default=ROOT.parent / "shared" / "data" / "recipes" /
                        "vllm-project-recipes")
    parser.add_argument("--json", type=Path,
                        default=ROOT / "benchmarks" / "results" / "recipe_import_speed.json")
    args = parser.parse_args()
    bytecode_ready()
    cache = tempfile.mkdtemp(prefix="import-bench-")
    data = tempfile.mkdtemp(prefix="import-bench-data-")
    env = {**os.environ, "SERVEWISE_CACHE_DIR": cache, "SERVEWISE_DATA_DIR": data,
           "HF_HUB_OFFLINE": "1"}
    check = [SW, "check", "openai/gpt-oss-120b", "--gpu", "h200:8", "--json"]
    cases = {
        "recipe import (whole clone, --dry-run)": [SW, "recipe", "import", str(args.clone),
                                                   "--dry-run", "--json"],
        "baseline: yaml.safe_load of every file": [sys.executable, "-c", BASELINE,
                                                   str(args.clone)],
        "check, shipped snapshot, warm cache": check,
    }
    _time(check, env)  # fills the cache
    times: dict[str, list[float]] = {name: [] for name in cases}
    cold: list[float] = []
    for _ in range(args.runs):
        for name, argv in cases.items():
            times[name].append(_time(argv, env))
        cold.append(_time(check, {**env, "SERVEWISE_CACHE_DIR": tempfile.mkdtemp()}))
    times["check, first run after install (cold cache)"] = cold
    result = {name: {"median_s": round(statistics.median(values), 3),
                     "min_s": round(min(values), 3), "runs": len(values)}
              for name, values in times.items()}
    for name, row in result.items():
        print(f"{row['median_s']:7.3f} s median ({row['min_s']:.3f} min)  {name}")
    ratio = result["recipe import (whole clone, --dry-run)"]["median_s"] / \
        result["baseline: yaml.safe_load of every file"]["median_s"]
    print(f"import / baseline: {ratio:.2f}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"results": result, "import_over_baseline": ratio},
                                    indent=1), "utf-8")


if __name__ == "__main__":
    main()
