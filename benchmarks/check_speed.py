"""Benchmark ``servewise check`` on a bundled model without ``--build``: goal under 0.5 s.

Usage::

    .venv/bin/python benchmarks/check_speed.py [--runs 9] [--json OUT]

Each command runs as a fresh process (interpreter start included), from compiled bytecode
as after a ``pip install``; the median of ``--runs`` is reported. In the same run:

* ``check`` on the seed's deployment (DeepSeek-V4-Flash-0731 NVFP4, 2 x RTX PRO 6000 Max-Q)
  and on SGLang with DeepSeek-V4-Flash-0731 on 8 x H200;
* the floor: ``servewise --version`` (interpreter, Typer and the CLI's imports);
* the manual path it replaces: ``plan`` then ``recipe match`` for the same question, each a
  process of its own, as a user combines them by hand.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from _startup import bytecode_ready  # noqa: E402

SW = str(Path(sys.executable).with_name("servewise"))
SEED = ["MJPansa/DeepSeek-V4-Flash-0731-NVFP4", "--gpu", "rtx-pro-6000-blackwell-max-q:2"]
H200 = ["deepseek-ai/DeepSeek-V4-Flash-0731", "--gpu", "h200:8", "--engine", "sglang"]
CASES: dict[str, list[list[str]]] = {
    "check, seed (vLLM, 2 x RTX PRO 6000)": [[SW, "check", *SEED, "--json"]],
    "check, SGLang on 8 x H200": [[SW, "check", *H200, "--json"]],
    "floor: servewise --version": [[SW, "--version"]],
    "by hand: plan + recipe match": [
        [SW, "plan", *SEED, "--tp", "2", "--max-model-len", "250000", "--kv-cache-dtype",
         "fp8", "--gpu-memory-utilization", "0.95", "--json"],
        [SW, "recipe", "match", SEED[0], "--gpu", SEED[2], "--json"],
    ],
}


def _wall(commands: list[list[str]], env: dict[str, str]) -> float:
    start = time.perf_counter()
    for command in commands:
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                       check=False)
    return time.perf_counter() - start


def main() -> int:
    """Run every case ``--runs`` times, interleaved; print and write the medians."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--json", type=Path,
                        default=ROOT / "benchmarks" / "results" / "check_speed.json")
    args = parser.parse_args()
    bytecode_ready()
    env = {**os.environ, "SERVEWISE_CACHE_DIR": str(ROOT / ".bench-cache")}
    for commands in CASES.values():  # warm the page cache and the bytecode once
        _wall(commands, env)
    times: dict[str, list[float]] = {name: [] for name in CASES}
    for _ in range(args.runs):
        for name, commands in CASES.items():
            times[name].append(_wall(commands, env))
    rows: list[dict[str, Any]] = []
    for name, values in times.items():
        rows.append({"case": name, "median_s": round(statistics.median(values), 3),
                     "min_s": round(min(values), 3), "runs": len(values)})
    seed = rows[0]["median_s"]
    for row in rows:
        row["ratio_to_seed_check"] = round(row["median_s"] / seed, 2)
        print(f"{row['case']:<40} median {row['median_s']:.3f} s  (min {row['min_s']:.3f}, "
              f"x{row['ratio_to_seed_check']:.2f} of check)")
    print(f"goal: check under 0.5 s -> {'met' if seed < 0.5 else 'MISSED'}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"machine": os.uname().nodename, "cpus": os.cpu_count(),
                                     "date": time.strftime("%Y-%m-%d"), "rows": rows},
                                    indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
