"""Every metric against the truth: the synthetic server's own recorded send times.

The server sends on a schedule (known TTFT, ITL, chunk sizes, with jitter) and records when
it received each request and when each chunk left. At concurrency <= 16 every per-request
figure and every summary percentile must equal the truth within 5 ms.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from servewise.bench.load import LoadLevel
from servewise.bench.metrics import distribution_ms, tpot
from servewise.bench.records import RequestRecord
from servewise.bench.run import BenchConfig, BenchResult, run_bench
from servewise.bench.workload import WorkloadSpec
from support.sse_server import Behaviour, start_sse_server, truth

TOLERANCE_S = 0.005
TOLERANCE_MS = 1000 * TOLERANCE_S


def measured(result: BenchResult, level: int) -> list[RequestRecord]:
    return [r for r in result.levels[level].records if r.phase == "measure"]


def check_against_truth(records: list[RequestRecord], server_records: list[dict[str, Any]],
                        entry: dict[str, Any]) -> None:
    """Per request and per percentile, the client equals the server's truth within 5 ms."""
    by_id = {r["request_id"]: r for r in server_records}
    truths = []
    for record in records:
        assert record.ok, record.error
        real = truth(by_id[record.request_id])
        truths.append(real)
        assert record.output_tokens == real["tokens"] == sum(record.chunk_tokens)
        assert record.ttft is not None and record.e2e is not None
        assert abs(record.ttft - real["ttft"]) < TOLERANCE_S
        assert abs(record.e2e - real["e2e"]) < TOLERANCE_S
        assert abs((tpot(record) or 0) - real["tpot"]) < TOLERANCE_S
        chunk_sizes = [k for _, k in by_id[record.request_id]["sends"]]
        assert list(record.chunk_tokens) == chunk_sizes
    expected = {
        "ttft_ms": distribution_ms(t["ttft"] for t in truths),
        "e2e_ms": distribution_ms(t["e2e"] for t in truths),
        "tpot_ms": distribution_ms(t["tpot"] for t in truths),
        "itl_ms": distribution_ms(s for t in truths for s in t["itl"]),
    }
    for metric, real in expected.items():
        assert real is not None
        for key in ("mean", "p50", "p90", "p99"):
            assert abs(entry[metric][key] - real[key]) < TOLERANCE_MS, (metric, key)
    first = min(r["received"] for r in server_records)
    last = max(s[-1][0] for s in (r["sends"] for r in server_records))
    assert abs(entry["duration_s"] - (last - first)) < TOLERANCE_S
    total = sum(t["tokens"] for t in truths)
    assert entry["output_tokens"]["total"] == total
    assert entry["output_tokens_per_s"] == pytest.approx(total / entry["duration_s"], rel=1e-3)


SCHEDULE = Behaviour(ttft_s=0.03, ttft_jitter_s=0.02, itl_s=0.004, itl_jitter_s=0.004,
                     chunks=[1, 3, 2, 1], seed=7)


@pytest.mark.parametrize("concurrency", [1, 4, 16])
def test_completions_metrics_equal_the_truth(concurrency: int) -> None:
    with start_sse_server(SCHEDULE) as server:
        config = BenchConfig(url=server.base_url, model="synthetic",
                             workload=WorkloadSpec(isl=24, osl=14),
                             levels=(LoadLevel("concurrency", concurrency),),
                             num_prompts=max(8, 2 * concurrency), warmup=2, seed=1)
        result = run_bench(config)
        entry = result.document["results"][0]
        records = measured(result, 0)
        ids = {r.request_id for r in records}
        server_records = [r for r in server.records() if r["request_id"] in ids]
    assert entry["completed"] == len(records) == config.num_prompts
    assert entry["warmup_requests"] == 2
    assert entry["load"]["max_in_flight"] == concurrency
    assert entry["token_counts"]["per_chunk"] == {"continuous_usage": len(records)}
    assert entry["input_tokens"]["min"] == entry["input_tokens"]["max"] == 24
    check_against_truth(records, server_records, entry)


def test_chat_with_token_ids_crlf_and_comments() -> None:
    behaviour = Behaviour(ttft_s=0.02, itl_s=0.005, chunks=[2, 1], line_ending="\r\n",
                          comments=True, continuous_usage=False)
    with start_sse_server(behaviour) as server:
        config = BenchConfig(url=f"{server.base_url}/v1/chat/completions", model="synthetic",
                             workload=WorkloadSpec(isl=16, osl=9),
                             levels=(LoadLevel("concurrency", 3),), num_prompts=6, warmup=0,
                             token_ids=True)
        result = run_bench(config)
        entry = result.document["results"][0]
        server_records = server.records()
    assert result.document["endpoint"] == "chat"
    assert entry["token_counts"]["per_chunk"] == {"token_ids": 6}
    # The role-only first chunk carries no token: TTFT waits for the first content.
    check_against_truth(measured(result, 0), server_records, entry)


def test_without_usage_or_ids_each_chunk_counts_one_token() -> None:
    behaviour = Behaviour(ttft_s=0.02, itl_s=0.004, usage=False, continuous_usage=False,
                          token_ids=False)
    with start_sse_server(behaviour) as server:
        result = run_bench(BenchConfig(url=server.base_url, model="synthetic",
                                       workload=WorkloadSpec(isl=8, osl=6),
                                       levels=(LoadLevel("concurrency", 2),), num_prompts=4,
                                       warmup=0))
        entry = result.document["results"][0]
        check_against_truth(measured(result, 0), server.records(), entry)
    assert entry["token_counts"]["per_chunk"] == {"chunks": 4}
    assert entry["token_counts"]["total"] == {"chunks": 4}


def test_rate_mode_poisson_sends_on_schedule() -> None:
    with start_sse_server(Behaviour(ttft_s=0.02, itl_s=0.004)) as server:
        config = BenchConfig(url=server.base_url, model="synthetic",
                             workload=WorkloadSpec(isl=8, osl=5),
                             levels=(LoadLevel("rate", 40.0), LoadLevel("rate", 80.0, 4.0)),
                             num_prompts=30, warmup=2, seed=3)
        result = run_bench(config)
        server_records = server.records()
    for index, entry in enumerate(result.document["results"]):
        records = measured(result, index)
        assert entry["completed"] == 30
        late = entry["load"]["lateness_ms"]
        assert late["p99"] < TOLERANCE_MS and late["mean"] >= 0
        starts = sorted(r.started for r in records)
        assert entry["load"]["achieved_rate_per_s"] == pytest.approx(
            29 / (starts[-1] - starts[0]), rel=1e-3)
        ids = {r.request_id for r in records}
        check_against_truth(records, [r for r in server_records if r["request_id"] in ids],
                            entry)
    assert result.document["results"][1]["workload"]["burstiness"] == 4.0


def test_duration_bounds_a_level() -> None:
    with start_sse_server(Behaviour(ttft_s=0.01, itl_s=0.002)) as server:
        result = run_bench(BenchConfig(url=server.base_url, model="synthetic",
                                       workload=WorkloadSpec(isl=8, osl=5),
                                       levels=(LoadLevel("concurrency", 2),
                                               LoadLevel("rate", 50.0)),
                                       duration_s=0.6, warmup=2))
    for index, entry in enumerate(result.document["results"]):
        records = measured(result, index)
        first = min(r.started for r in records)
        assert max(r.started for r in records) - first < 0.6 + TOLERANCE_S
        assert entry["completed"] == len(records) > 5


def errors_dataset(path: Path) -> Path:
    """A prompt file whose directives make the server fail in every way it knows."""
    directives: list[dict[str, Any]] = [
        {}, {"status": 500}, {"status": 429}, {"disconnect_after": 3}, {"error_after": 2},
        {"malformed_after": 1}, {"header_delay_s": 3.0}, {"stall_after": 2, "stall_s": 3.0},
        {}, {},
    ]
    lines = [json.dumps({"prompt": f"p{i} [[sse {json.dumps(d)}]]", "max_tokens": 6})
             for i, d in enumerate(directives)]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_failures_are_counted_by_kind_and_never_hung_on(tmp_path: Path) -> None:
    with start_sse_server(Behaviour(ttft_s=0.01, itl_s=0.005)) as server:
        config = BenchConfig(url=server.base_url, model="synthetic",
                             workload=WorkloadSpec(dataset=errors_dataset(tmp_path / "e.jsonl")),
                             levels=(LoadLevel("concurrency", 4),), num_prompts=10, warmup=0,
                             read_timeout_s=0.5)
        result = run_bench(config)
    entry = result.document["results"][0]
    assert entry["completed"] == 3
    assert entry["failed"] == 7
    assert entry["errors"] == {"disconnect": 1, "http_status": 2, "malformed": 1,
                               "read_timeout": 2, "stream_error": 1}
    records = {r.seq: r for r in measured(result, 0)}
    assert records[1].error is not None and records[1].error.status == 500
    assert records[3].error is not None and records[3].error.tokens_before == 3
    assert records[7].error is not None and records[7].error.kind == "read_timeout"
    # Bounded by the read timeout, not by the 3 s stalls.
    assert entry["duration_s"] < 2.5
    stored = records[4].to_dict(result.levels[0].origin)
    assert stored["error"]["kind"] == "stream_error"
    assert "synthetic engine error" in stored["error"]["message"]
