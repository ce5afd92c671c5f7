"""Benchmark: benchmark runs and wall time of ``bench --sla`` against a plain doubling search.

Both search the largest concurrency meeting a TTFT p99 limit on the synthetic server with a
known load curve (``ttft_per_active_s``: each request in flight adds a fixed delay to the time
to first token), so the true boundary is known: 10 ms + 20 ms x C under 300 ms gives C = 14
("near"); 10 ms + 10 ms x C under 1500 ms gives C = 149 ("far"). A step of the curve is
wider than the noise of a p99 on a busy machine (a 2 ms step at C = 145 was not).
servewise's search (bracket by the measured ratio, then Illinois regula falsi) against the
baseline: doubling from 1 until a run fails, then halving the interval to one request
(``SlaOptions(method="doubling")``). Same client, same runs (5 requests per slot), in this
one process, alternating.

    .venv/bin/python benchmarks/sla_search_speed.py [--repeat N] [--curve near|far|both]

Prints one JSON object per search and a summary (medians, ratios).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from servewise.bench.run import BenchConfig  # noqa: E402
from servewise.bench.sla import SlaOptions, parse_sla, run_sla_search  # noqa: E402
from servewise.bench.workload import WorkloadSpec  # noqa: E402
from support.sse_server import Behaviour, start_sse_server  # noqa: E402

#: name: (seconds added per request in flight, the limit, the true boundary)
CURVES = {"near": (0.02, "ttft_p99<=300ms", 14), "far": (0.01, "ttft_p99<=1500ms", 149)}


def one(url: str, method: str, curve: str) -> dict[str, Any]:
    """One search; its runs, wall time and answer."""
    config = BenchConfig(url=url, model="synthetic", workload=WorkloadSpec(isl=16, osl=4),
                         levels=(), seed=1)
    options = SlaOptions(max_runs=8 if method == "bracket" else 64,
                         method="bracket" if method == "bracket" else "doubling")
    began = time.monotonic()
    result = run_sla_search(config, parse_sla(CURVES[curve][1]), options)
    best = result.best
    return {"curve": curve, "method": method, "best": best.value if best else None,
            "truth": CURVES[curve][2], "runs": len(result.probes),
            "wall_s": round(time.monotonic() - began, 2), "status": result.status,
            "values": [p.value for p in result.probes]}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--curve", choices=("near", "far", "both"), default="both")
    args = parser.parse_args()
    curves = list(CURVES) if args.curve == "both" else [args.curve]
    rows = []
    for curve in curves:
        step = CURVES[curve][0]
        with start_sse_server(Behaviour(ttft_s=0.01, ttft_per_active_s=step,
                                        itl_s=0.002)) as server:
            for _ in range(args.repeat):
                for method in ("bracket", "doubling"):
                    row = one(server.base_url, method, curve)
                    print(json.dumps(row), flush=True)
                    rows.append(row)
    summary: dict[str, Any] = {}
    for curve in curves:
        found: dict[str, Any] = {}
        for method in ("bracket", "doubling"):
            mine = [r for r in rows if r["curve"] == curve and r["method"] == method]
            found[method] = {
                "runs": statistics.median(r["runs"] for r in mine),
                "wall_s": statistics.median(r["wall_s"] for r in mine),
                "answers": sorted({r["best"] for r in mine}),
                "within_one_step": sum(abs((r["best"] or 0) - r["truth"]) <= 1 for r in mine),
                "of": len(mine)}
        found["ratio_runs"] = round(found["bracket"]["runs"] / found["doubling"]["runs"], 3)
        found["ratio_wall"] = round(found["bracket"]["wall_s"] / found["doubling"]["wall_s"], 3)
        summary[curve] = found
    summary["machine"] = (f"{platform.machine()}, {len(os.sched_getaffinity(0))} "
                          f"cores, Python {platform.python_version()}")
    summary["date"] = time.strftime("%Y-%m-%d %H:%M")
    summary["repeat"] = args.repeat
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
