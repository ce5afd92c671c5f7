"""Benchmark the memory planner: start-up speed, Hub reads, and accuracy against peers.

Usage::

    .venv/bin/python benchmarks/plan_speed.py [--runs 7] [--peers-venv DIR] [--json OUT]

Three parts, each printed as a table and written to JSON (default
``benchmarks/results/plan_speed.json``):

1. **plan on a bundled card**: wall time of ``servewise plan CARD --gpu ... --json`` as a
   fresh process (interpreter start included), median of ``--runs``; the baseline is the
   same process running ``servewise gpus --json`` through the Typer/rich path, the cost every
   other command pays. Goal: under 0.3 s.
2. **Hub reading**: the DeepSeek-V4-Flash-0731 NVFP4 card written out as a 48-shard
   repository (real headers, sparse data) on a local Hub-like HTTP server; servewise's
   ranged reads per shard (goal: at most 2) and time, against ``huggingface_hub``'s own
   ``get_safetensors_metadata`` on the same server.
3. **peers**: ``hf-mem`` 0.5.6 and ``kvfit`` 0.3.0 (from PyPI, in ``--peers-venv``; the
   script creates it with pip when missing) on the same scenarios, each model served from
   the local server. Both hard-code ``https://huggingface.co`` (neither reads
   ``HF_ENDPOINT``), so a shim run with their interpreter rewrites that host to the local
   server in-process; their own code does the rest. The correct value (a real engine log or
   the seed) is printed beside each.
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
sys.path.insert(0, str(ROOT / "tests"))

from _startup import bytecode_ready  # noqa: E402

from servewise.knowledge.cards import card_document, find_card  # noqa: E402
from support.hub_server import HubRepo, run_hub, safetensors_bytes  # noqa: E402

GIB = 2**30
PEERS = ("hf-mem==0.5.6", "kvfit==0.3.0")
SHIM = r'''
import asyncio, os, sys
endpoint = os.environ["SHIM_ENDPOINT"]
tool = sys.argv[1]
sys.argv = [tool] + sys.argv[2:]
if tool == "kvfit":
    import kvfit.hf
    kvfit.hf.HF_BASE = endpoint
    from kvfit.cli import main
    raise SystemExit(main())
import httpx2
_send = httpx2.AsyncClient.send
async def send(self, request, **kw):
    url = str(request.url).replace("https://huggingface.co", endpoint)
    request.url = httpx2.URL(url)
    request.headers["host"] = request.url.netloc.decode()
    return await _send(self, request, **kw)
httpx2.AsyncClient.send = send
from hf_mem.cli import main
main()
'''

#: Scenarios: card, GPU and settings, and the correct value (engine log or seed) beside.
SCENARIOS: list[dict[str, Any]] = [
    {"name": "Llama-3.1-8B, H100, 8192 ctx, fp8 KV (vLLM 0.19.0 log)",
     "card": "llama-3.1-8b-instruct", "gpu": "h100-sxm", "kvfit_hw": "h100-80", "gpus": 1,
     "ctx": 8192,
     "kv": "fp8", "plan": ["--engine-version", "0.19.0", "--gpu-memory-utilization", "0.95"],
     "util": 0.95,
     "correct": {"weights_gib_per_gpu": 14.99, "kv_bytes_per_token": 65536,
                 "max_concurrency": 116.21, "fits": True}},
    {"name": "Gemma-3-27B, H100, 8192 ctx (vLLM 0.19.0 log)",
     "card": "gemma-3-27b-it", "gpu": "h100-sxm", "kvfit_hw": "h100-80", "gpus": 1,
     "ctx": 8192, "kv": "auto",
     "plan": ["--engine-version", "0.19.0", "--gpu-memory-utilization", "0.95"],
     "util": 0.95,
     "correct": {"weights_gib_per_gpu": 51.45, "max_concurrency": 4.46, "fits": True,
                 # the log's pool over its concurrency: 19.53 GiB / 4.46 / 8192 tokens
                 "kv_bytes_per_token": round(19.53 * GIB / 4.46 / 8192)}},
    {"name": "DeepSeek-R1 (MLA), KV per token, bf16",
     "card": "deepseek-r1", "gpu": "h200", "kvfit_hw": "h200-141", "gpus": 8, "ctx": 32768,
     "kv": "auto",
     "plan": ["--tp", "8"], "util": 0.9,
     "correct": {"kv_bytes_per_token": 61 * 576 * 2}},
    {"name": "seed: DeepSeek-V4-Flash-0731 NVFP4, 2 x RTX PRO 6000, 250k ctx",
     "card": "deepseek-v4-flash-0731-nvfp4", "gpu": "rtx-pro-6000-blackwell-max-q",
     "kvfit_hw": "rtx-pro-6000-96", "gpus": 2,
     "ctx": 250000, "kv": "fp8", "shards": 48,
     "plan": ["--tp", "2", "--gpu-memory-utilization", "0.95", "--max-num-seqs", "8",
              "--max-num-batched-tokens", "4096", "--enforce-eager"],
     "util": 0.95,
     "correct": {"weights_gib_per_gpu": round(175.6e9 / 2 / GIB, 2), "fits": True}},
]


def _median_wall(cmd: list[str], runs: int, env: dict[str, str]) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                       check=False)
        times.append(time.perf_counter() - start)
    return times


def part_speed(runs: int) -> dict[str, Any]:
    """Wall time of plan (light path) and of a Typer command, as fresh processes."""
    exe = str(Path(sys.executable).with_name("servewise"))
    env = {**os.environ, "SERVEWISE_CACHE_DIR": "/tmp/servewise-bench-cache"}
    plan = [exe, "plan", "deepseek-v4-flash-0731-nvfp4", "--gpu",
            "rtx-pro-6000-blackwell-max-q:2", "--kv-cache-dtype", "fp8", "--max-model-len",
            "250000", "--json"]
    gpus = [exe, "gpus", "--json"]
    python = [sys.executable, "-c", "pass"]
    result = {}
    for label, cmd in (("plan (bundled card, 2 GPUs, all layouts)", plan),
                       ("baseline: servewise gpus --json (Typer + rich)", gpus),
                       ("bare interpreter start", python)):
        times = _median_wall(cmd, runs, env)
        result[label] = {"median_s": statistics.median(times), "runs_s": times}
    return result


def repo_from_card(card_id: str, shards: int) -> HubRepo:
    """A card as a Hub repository: its config and its tensors in ``shards`` header-only files."""
    document = card_document(card_id)
    bits = {"BF16": 16, "F16": 16, "F32": 32, "I64": 64, "I32": 32, "U8": 8, "I8": 8,
            "F8_E4M3": 8, "F8_E8M0": 8}
    rows: list[tuple[str, str, list[int], int]] = []
    for name, dtype, shape, count in document["tensors"]:
        nbytes = bits[dtype] // 8
        for dim in shape:
            nbytes *= dim
        names = [name.replace(".*.", f".{i}.") for i in range(count)] if count > 1 else [name]
        rows.extend((n, dtype, shape, nbytes) for n in names)
    per = -(-len(rows) // shards)
    files = {"config.json": json.dumps(document["config"]).encode()}
    if document.get("quant_config"):
        files["hf_quant_config.json"] = json.dumps(document["quant_config"]).encode()
    sizes = {}
    weight_map = {}
    total = 0
    for index in range(shards):
        chunk = rows[index * per:(index + 1) * per]
        shard = (f"model-{index + 1:05d}-of-{shards:05d}.safetensors" if shards > 1
                 else "model.safetensors")
        data, size = safetensors_bytes({n: (d, s, b) for n, d, s, b in chunk},
                                       {"format": "pt"}, data=False)
        files[shard] = data
        sizes[shard] = size
        total += sum(b for *_, b in chunk)
        weight_map.update({n: shard for n, *_ in chunk})
    if shards > 1:
        files["model.safetensors.index.json"] = json.dumps(
            {"metadata": {"total_size": total}, "weight_map": weight_map}).encode()
    return HubRepo(files, sizes=sizes)


def part_hub(runs: int) -> dict[str, Any]:
    """48 shards from the local server: servewise vs huggingface_hub."""
    from huggingface_hub import HfApi

    from servewise.sources.hub import HubReader

    repo = repo_from_card("deepseek-v4-flash-0731-nvfp4", 48)
    out: dict[str, Any] = {}
    with run_hub({"MJPansa/DeepSeek-V4-Flash-0731-NVFP4": repo}) as hub:
        ours, theirs = [], []
        for _ in range(runs):
            hub.reset()
            start = time.perf_counter()
            model = HubReader(endpoint=hub.url).read("MJPansa/DeepSeek-V4-Flash-0731-NVFP4")
            ours.append(time.perf_counter() - start)
            counts = dict(hub.counts)
            per_shard = max(hub.ranges.values())
        hub.reset()
        for _ in range(runs):
            hub.reset()
            start = time.perf_counter()
            HfApi(endpoint=hub.url).get_safetensors_metadata(
                "MJPansa/DeepSeek-V4-Flash-0731-NVFP4")
            theirs.append(time.perf_counter() - start)
            their_counts = dict(hub.counts)
            their_per_shard = max(hub.ranges.values())
    import tempfile

    from servewise.store import Store

    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "s.db") as store, \
            run_hub({"MJPansa/DeepSeek-V4-Flash-0731-NVFP4": repo}) as hub:
        HubReader(endpoint=hub.url, store=store).read("MJPansa/DeepSeek-V4-Flash-0731-NVFP4")
        stored = []
        for _ in range(runs):
            hub.reset()
            start = time.perf_counter()
            HubReader(endpoint=hub.url, store=store).read("MJPansa/DeepSeek-V4-Flash-0731-NVFP4")
            stored.append(time.perf_counter() - start)
        stored_counts = dict(hub.counts)
    out["servewise, same commit again (store)"] = {
        "median_s": statistics.median(stored), "requests": stored_counts,
        "max_ranged_reads_per_shard": 0}
    out["servewise"] = {"median_s": statistics.median(ours), "requests": counts,
                        "max_ranged_reads_per_shard": per_shard, "shards": model.files,
                        "weights_bytes": model.tensor_bytes}
    out["huggingface_hub.get_safetensors_metadata"] = {
        "median_s": statistics.median(theirs), "requests": their_counts,
        "max_ranged_reads_per_shard": their_per_shard}
    return out


def _peers_python(venv: Path) -> Path:
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", *PEERS], check=True)
    return python


def _run_peer(python: Path, endpoint: str, tool: str, args: list[str]) -> tuple[Any, float]:
    env = {**os.environ, "SHIM_ENDPOINT": endpoint, "HF_HUB_DISABLE_TELEMETRY": "1"}
    start = time.perf_counter()
    proc = subprocess.run([str(python), "-c", SHIM, tool, *args], capture_output=True,
                          text=True, env=env, timeout=600, check=False)
    elapsed = time.perf_counter() - start
    try:
        return json.loads(proc.stdout), elapsed
    except json.JSONDecodeError:
        return {"error": (proc.stdout + proc.stderr).strip()[-400:]}, elapsed


def part_peers(venv: Path) -> list[dict[str, Any]]:
    """Each scenario through servewise, hf-mem and kvfit."""
    python = _peers_python(venv)
    exe = str(Path(sys.executable).with_name("servewise"))
    rows = []
    for scenario in SCENARIOS:
        card = find_card(scenario["card"])
        assert card is not None
        repo_id = card.repo
        repo = repo_from_card(scenario["card"], scenario.get("shards", 4))
        with run_hub({repo_id: repo}) as hub:
            cmd = [exe, "plan", scenario["card"], "--gpu",
                   f"{scenario['gpu']}:{scenario['gpus']}", "--max-model-len",
                   str(scenario["ctx"]), "--kv-cache-dtype", scenario["kv"], "--json",
                   *scenario["plan"]]
            start = time.perf_counter()
            ours = json.loads(subprocess.run(cmd, capture_output=True, text=True,
                                             check=False).stdout)
            ours_s = time.perf_counter() - start
            kv = {"auto": "auto", "fp8": "fp8"}[scenario["kv"]]
            hf_mem, hf_s = _run_peer(python, hub.url, "hf-mem", [
                "--model-id", repo_id, "--experimental", "--max-model-len",
                str(scenario["ctx"]), "--kv-cache-dtype", kv, "--json-output"])
            kvfit, kv_s = _run_peer(python, hub.url, "kvfit", [
                repo_id, "--context", str(scenario["ctx"]), "--gpus", str(scenario["gpus"]),
                "--hardware", scenario["kvfit_hw"], "--tp", str(scenario["gpus"]),
                "--utilization", str(scenario["util"]),
                "--kv-dtype", "fp8" if kv == "fp8" else "auto", "--json"])
        rows.append({"scenario": scenario["name"], "correct": scenario["correct"],
                     "servewise": {"seconds": ours_s, **_ours(ours)},
                     "hf-mem": {"seconds": hf_s, **_hf_mem(hf_mem, scenario)},
                     "kvfit": {"seconds": kv_s, **_kvfit(kvfit, scenario)},
                     "raw": {"hf-mem": hf_mem, "kvfit": kvfit}})
    return rows


def _ours(plan: dict[str, Any]) -> dict[str, Any]:
    s = plan.get("startup") or {}
    return {"weights_gib_per_gpu": round(s.get("weights_bytes_per_gpu", 0) / GIB, 2),
            "kv_bytes_per_token": s.get("kv_bytes_per_token"),
            "max_concurrency": s.get("max_concurrency"), "fits": s.get("fits")}


def _hf_mem(out: dict[str, Any], scenario: dict[str, Any]) -> dict[str, Any]:
    if "memory" not in out:
        return {"error": out.get("error")}
    return {"weights_gib_per_gpu": round(out["memory"] / GIB, 2),  # whole model, no TP
            "kv_bytes_per_token": round(out.get("kv_cache", 0) / scenario["ctx"], 1),
            "max_concurrency": None, "fits": None}


def _kvfit(out: dict[str, Any], scenario: dict[str, Any]) -> dict[str, Any]:
    if "cache" not in out:
        return {"error": out.get("error")}
    best = (out.get("concurrency") or {}).get("best_any_fabric") or {}
    layout = best.get("layout") or {}
    return {"weights_gib_per_gpu": round(layout.get("weights_per_rank_gib") or 0, 2),
            "kv_bytes_per_token": round(out["cache"]["bytes_per_sequence"] / scenario["ctx"], 1),
            "max_concurrency": layout.get("total_sequences", best.get("active_sequences")),
            "fits": layout.get("verdict") == "fits" if layout else None}


def main() -> int:
    """Run the parts, print tables, write JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--peers-venv", type=Path, default=ROOT / ".venv-peers")
    parser.add_argument("--skip-peers", action="store_true")
    parser.add_argument("--json", type=Path, default=ROOT / "benchmarks" / "results" /
                        "plan_speed.json")
    args = parser.parse_args()
    bytecode_ready()
    results: dict[str, Any] = {"machine": os.uname().nodename, "cpus": os.cpu_count(),
                               "load_1min": os.getloadavg()[0], "date": time.strftime("%F")}
    results["speed"] = part_speed(args.runs)
    print("| command | median wall (s) |\n|---|---|")
    for label, row in results["speed"].items():
        print(f"| {label} | {row['median_s']:.3f} |")
    results["hub"] = part_hub(max(3, args.runs // 2))
    print("\n| reader | median (s) | ranged reads / shard (max) | requests |\n|---|---|---|---|")
    for label, row in results["hub"].items():
        print(f"| {label} | {row['median_s']:.3f} | {row['max_ranged_reads_per_shard']} | "
              f"{row['requests']} |")
    if not args.skip_peers:
        results["peers"] = part_peers(args.peers_venv)
        keys = ("weights_gib_per_gpu", "kv_bytes_per_token", "max_concurrency", "fits")
        print("\n| scenario | tool | s | " + " | ".join(keys) + " |")
        print("|---|---|---|" + "---|" * len(keys))
        for row in results["peers"]:
            correct = row["correct"]
            print(f"| {row['scenario']} | **correct** | | "
                  + " | ".join(str(correct.get(k, "")) for k in keys) + " |")
            for tool in ("servewise", "hf-mem", "kvfit"):
                cells = row[tool]
                print(f"| | {tool} | {cells['seconds']:.2f} | "
                      + " | ".join(str(cells.get(k, cells.get("error", "")))
                                   for k in keys) + " |")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nwritten: {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
