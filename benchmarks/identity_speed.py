"""Does library identity slow the scan? ``servewise inspect --no-cache`` before and after, one run.

Library identity reads each library's dynamic symbols (SONAME, ``PyInit_`` names,
exported namespaces) and version strings during the same pass that lists its
GPU code. The goal: no measurable slowdown of a fresh scan of the real
``vllm==0.33.0`` wheel. Side by side, interleaved, ``--runs`` times each:

* baseline: ``python -m servewise inspect WHEEL --json --no-cache`` with the sources of
  ``--baseline`` (a git ref, default ``750a8f6``: main before library identity), taken
  with ``git archive`` into a temporary folder and put first on ``PYTHONPATH``;
* current: the same command on this working tree.

Both use this checkout's ``.venv`` interpreter. It prints the medians of wall time and of
CPU time (user + system of the command and its worker processes, which a loaded machine
disturbs less), the ratios, what the current scan identified (signals per library), and a
JSON summary. Usage::

    .venv/bin/python benchmarks/identity_speed.py [--wheel PATH] [--runs 7] [--baseline REF]

Without ``--wheel`` the wheel is downloaded once with pip into ``~/.cache/servewise-bench``
(the same place as ``benchmarks/gate_speed.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from _startup import bytecode_ready  # noqa: E402
from gate_speed import fetch_wheel  # noqa: E402

DEFAULT_BASELINE = "750a8f6"


def baseline_sources(ref: str, into: Path) -> Path:
    """The ``src`` folder of git ref ``ref``, extracted under ``into``."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "src"],
                             check=True, capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float, bytes]:
    """Wall seconds, CPU seconds (user + system, the command and its workers) and stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr[-500:]!r}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu, done.stdout


def load_average() -> str:
    """The 1/5/15-minute load averages, to say whether the machine was busy."""
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> None:
    """Run both versions interleaved and print the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheel", type=Path)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--baseline", default=DEFAULT_BASELINE)
    args = parser.parse_args()
    wheel = args.wheel or fetch_wheel()
    python = str(ROOT / ".venv" / "bin" / "python")
    with tempfile.TemporaryDirectory(prefix="servewise-identity-") as tmp:
        old_src = baseline_sources(args.baseline, Path(tmp) / "baseline")
        bytecode_ready(old_src, ROOT / "src")
        base_env = {**os.environ, "SERVEWISE_CACHE_DIR": str(Path(tmp) / "cache")}
        envs = {
            "baseline": {**base_env, "PYTHONPATH": str(old_src)},
            "current": {**base_env, "PYTHONPATH": str(ROOT / "src")},
        }
        command = [python, "-m", "servewise", "inspect", str(wheel), "--json", "--no-cache"]
        times: dict[str, list[float]] = {"baseline": [], "current": []}
        cpu: dict[str, list[float]] = {"baseline": [], "current": []}
        listing: dict[str, object] = {}
        loads = [load_average()]
        for _ in range(args.runs):
            for name, env in envs.items():
                seconds, cpu_seconds, out = timed(command, env)
                times[name].append(seconds)
                cpu[name].append(cpu_seconds)
                if name == "current":
                    listing = json.loads(out)
            loads.append(load_average())
    baseline = statistics.median(times["baseline"])
    current = statistics.median(times["current"])
    cpu_baseline = statistics.median(cpu["baseline"])
    cpu_current = statistics.median(cpu["current"])
    libraries = listing.get("libraries", [])
    assert isinstance(libraries, list)
    print(f"{'library':58} {'id':22} signals")
    for lib in libraries:
        print(f"{lib['path']:58} {lib['library_id'] or '-':22} {','.join(lib['identified_by'])}")
    print(f"\nwall: baseline ({args.baseline}) median {baseline:.3f} s, current {current:.3f} s, "
          f"ratio {current / baseline:.3f}")
    print(f"CPU:  baseline median {cpu_baseline:.3f} s, current {cpu_current:.3f} s, "
          f"ratio {cpu_current / cpu_baseline:.3f}")
    figures = {
        "machine": f"{platform.node()} {platform.machine()} {os.cpu_count()} cores",
        "date": time.strftime("%Y-%m-%d"),
        "wheel": wheel.name,
        "runs": args.runs,
        "baseline_ref": args.baseline,
        "baseline_no_cache_s": round(baseline, 3),
        "current_no_cache_s": round(current, 3),
        "ratio_current_to_baseline": round(current / baseline, 3),
        "baseline_cpu_s": round(cpu_baseline, 3),
        "current_cpu_s": round(cpu_current, 3),
        "cpu_ratio_current_to_baseline": round(cpu_current / cpu_baseline, 3),
        "identified_libraries": sum(1 for lib in libraries if lib["library_id"]),
        "libraries": len(libraries),
        "load_average_during_runs": loads,
        "all_runs": times,
        "all_runs_cpu": cpu,
    }
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
