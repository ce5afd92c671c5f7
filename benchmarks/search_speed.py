"""Benchmark: launches and wall time of a max-model-len search on the real CPU engine.

servewise's search (the planner's prior, then the engine's own figure) against the baseline
of the seed's manual search: plain doubling from 8k, then bisection to 256 tokens, without
the planner or the engine's hints. Both run in this one process on the same tiny model
(8 layers x 8 KV heads x 64, bf16: 16 KiB of KV per token) with VLLM_CPU_KVCACHE_SPACE=1.

    .venv/bin/python benchmarks/search_speed.py [--repeat N]

Needs ``make engine`` (``.venv-engine``). Prints one JSON object per run and a summary.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from servewise.launch.search import SearchOptions, planner_prior, run_search  # noqa: E402
from servewise.launch.strategy import PARAMS  # noqa: E402
from support.tiny_model import OFFLINE_ENV, write_tiny_model  # noqa: E402

ENGINE_PYTHON = REPO / ".venv-engine" / "bin" / "python"
ENV = {**OFFLINE_ENV, "VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_NO_USAGE_STATS": "1",
       "DO_NOT_TRACK": "1"}


def command(model: Path) -> tuple[str, ...]:
    """The searched command: {value} and {port} filled per attempt."""
    return (str(ENGINE_PYTHON), "-m", "vllm.entrypoints.openai.api_server", "--model",
            str(model), "--host", "127.0.0.1", "--port", "{port}", "--max-model-len",
            "{value}", "--enforce-eager")


def one(model: Path, logs: Path, hints: bool) -> dict[str, Any]:
    """One search; its launches, wall time and answer."""
    param = PARAMS["max-model-len"]
    argv = command(model)
    prior = planner_prior(param, argv, ENV, None)[0] if hints else None
    options = SearchOptions(param=param, argv=argv, log_dir=logs, minimum=256,
                            maximum=262144, resolution=256, start=8192, prior=prior, env=ENV,
                            timeout_s=600, use_hints=hints)
    began = time.monotonic()
    result = run_search(options)
    return {"mode": "servewise" if hints else "baseline", "best": result.best,
            "launches": len(result.attempts), "wall_s": round(time.monotonic() - began, 1),
            "values": [a.value for a in result.attempts], "status": result.status}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    if not ENGINE_PYTHON.exists():
        print("needs .venv-engine: run `make engine`", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="search-speed-"))
    model = write_tiny_model(ENGINE_PYTHON, work / "model", layers=8, heads=8, kv_heads=8,
                             head_dim=64, max_position=262144)
    runs = []
    for _ in range(args.repeat):
        for hints in (True, False):
            row = one(model, work / "logs", hints)
            print(json.dumps(row), flush=True)
            runs.append(row)
    summary: dict[str, Any] = {}
    for mode in ("servewise", "baseline"):
        rows = [r for r in runs if r["mode"] == mode]
        summary[mode] = {"launches": statistics.median(r["launches"] for r in rows),
                         "wall_s": statistics.median(r["wall_s"] for r in rows),
                         "best": rows[0]["best"]}
    cpu = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
    summary["ratio_launches"] = round(summary["servewise"]["launches"]
                                      / summary["baseline"]["launches"], 3)
    summary["ratio_wall"] = round(summary["servewise"]["wall_s"]
                                  / summary["baseline"]["wall_s"], 3)
    summary["machine"] = f"{platform.machine()}, {cpu} cores, {platform.python_version()}"
    summary["date"] = time.strftime("%Y-%m-%d")
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
