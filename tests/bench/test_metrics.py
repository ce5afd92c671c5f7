"""The metric formulas on hand-made records, and percentiles against numpy."""

from __future__ import annotations

import numpy
import pytest
from hypothesis import given
from hypothesis import strategies as st

from servewise.bench.metrics import (
    FORMULAS,
    distribution_ms,
    itl_samples,
    meets,
    per_token_gaps,
    percentile,
    summarize,
    tpot,
    weighted_distribution_ms,
)
from servewise.bench.records import RequestError, RequestRecord


def record(seq: int, sent: float, chunks: list[tuple[float, int]], *, prompt: int = 10,
           error: RequestError | None = None, scheduled: float | None = None,
           started: float | None = None) -> RequestRecord:
    times = tuple(sent + t for t, _ in chunks)
    tokens = tuple(k for _, k in chunks)
    return RequestRecord(seq, "measure", f"r{seq}", scheduled,
                         sent if started is None else started, sent,
                         (times[-1] if times else sent) + 0.001, times, tokens,
                         "continuous_usage", sum(tokens), "usage", prompt, prompt,
                         sum(tokens), "length", error)


@given(st.lists(st.floats(min_value=-1e6, max_value=1e6), min_size=1, max_size=60),
       st.sampled_from([0.0, 0.5, 0.9, 0.99, 1.0]))
def test_percentile_is_numpys_linear_method(values: list[float], q: float) -> None:
    assert percentile(sorted(values), q) == pytest.approx(
        float(numpy.percentile(values, 100 * q)), rel=1e-9, abs=1e-6)


def test_multi_token_chunks_give_k_samples_of_gap_over_k() -> None:
    # first token at 0.1 s, then a 3-token chunk 0.06 s later, then 1 token 0.01 s later.
    one = record(0, 0.0, [(0.1, 1), (0.16, 3), (0.17, 1)])
    assert [gap for gap, count in itl_samples(one) for _ in range(count)] == pytest.approx(
        [0.02, 0.02, 0.02, 0.01])
    assert one.ttft == pytest.approx(0.1) and one.e2e == pytest.approx(0.17)
    assert tpot(one) == pytest.approx((0.17 - 0.1) / 4)
    single = record(1, 0.0, [(0.1, 1)])
    assert tpot(single) is None and itl_samples(single) == []


def test_summary_throughput_goodput_and_failures() -> None:
    records = [
        record(0, 0.0, [(0.1, 1), (0.2, 1), (0.3, 2)]),
        record(1, 0.5, [(0.4, 1), (0.5, 1)]),
        record(2, 0.5, [], error=RequestError("http_status", "HTTP 500", 500)),
        RequestRecord(0, "warmup", "w0", None, -5.0, -5.0, -4.0, (-4.5,), (1,), "chunks", 1,
                      "chunks", None, None, 1, "length"),
    ]
    data = summarize(records, gpus=2, slos_ms={"ttft": 200, "tpot": 150})
    assert (data["completed"], data["failed"], data["errors"]) == (2, 1, {"http_status": 1})
    duration = 1.001  # first start 0.0, last end 0.5 + 0.5 + 0.001
    assert data["duration_s"] == pytest.approx(duration)
    assert data["output_tokens_per_s"] == pytest.approx(6 / duration, rel=1e-4)
    assert data["total_tokens_per_s"] == pytest.approx(26 / duration, rel=1e-4)
    assert data["tokens_per_sec_per_gpu"] == pytest.approx(13 / duration, rel=1e-4)
    assert data["output_tokens_per_sec_per_gpu"] == pytest.approx(3 / duration, rel=1e-4)
    assert data["ttft_ms"] == distribution_ms([0.1, 0.4])
    assert data["tpot_ms"] == distribution_ms([0.2 / 3, 0.1])
    assert data["itl_ms"] == distribution_ms([0.1, 0.05, 0.05, 0.1])
    # Only the first meets ttft <= 200 ms; both meet tpot.
    assert data["goodput"]["good_requests"] == 1
    assert data["goodput"]["slo_attainment"] == 0.5
    assert data["output_tokens"]["total"] == 6  # the warm-up's token is not counted


def test_meets_treats_one_token_requests_as_without_tpot() -> None:
    single = record(0, 0.0, [(0.05, 1)])
    assert meets(single, {"tpot": 1.0, "ttft": 100})
    assert not meets(single, {"e2e": 10})


def test_load_lateness_send_delay_and_concurrency() -> None:
    records = [record(i, 0.1 * i + 0.002, [(0.05, 1), (0.06, 1)], scheduled=0.1 * i,
                      started=0.1 * i + 0.001) for i in range(5)]
    load = summarize(records, requested_rate=10.0)["load"]
    assert load["requested_rate_per_s"] == 10.0
    assert load["achieved_rate_per_s"] == pytest.approx(10.0)
    assert load["lateness_ms"]["p50"] == pytest.approx(1.0)
    assert load["send_delay_ms"]["p99"] == pytest.approx(1.0)
    assert load["max_in_flight"] == 1


def test_every_reported_metric_has_a_formula() -> None:
    data = summarize([record(0, 0.0, [(0.1, 1), (0.2, 1)])], gpus=1, slos_ms={"e2e": 1})
    for key in ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms", "duration_s",
                "request_throughput_per_s", "output_tokens_per_s", "total_tokens_per_s",
                "tokens_per_sec_per_gpu", "output_tokens_per_sec_per_gpu"):
        assert key in data and key in FORMULAS
    for key in ("request_goodput_per_s", "slo_attainment"):
        assert key in data["goodput"] and key in FORMULAS
    for key in ("achieved_rate_per_s", "lateness_ms", "achieved_concurrency", "send_delay_ms"):
        assert key in data["load"] and key in FORMULAS


def test_first_tokens_merged_with_the_next_are_counted_and_kept_apart() -> None:
    import dataclasses

    own = record(0, 0.0, [(0.05, 1), (0.06, 1)])
    merged = dataclasses.replace(record(1, 0.0, [(0.07, 1), (0.07, 1), (0.08, 1)]),
                                 first_read_events=2)
    data = summarize([own, merged])
    assert data["ttft_first_read_merged"] == 1
    assert data["ttft_ms_own_read"] == distribution_ms([0.05])
    assert data["ttft_ms"] == distribution_ms([0.05, 0.07])



@given(st.lists(st.tuples(st.floats(min_value=0, max_value=10), st.integers(1, 6)),
                min_size=1, max_size=30))
def test_weighted_samples_give_the_expanded_distribution(pairs: list[tuple[float, int]]) -> None:
    expanded = [value for value, weight in pairs for _ in range(weight)]
    weighted = weighted_distribution_ms(pairs)
    plain = distribution_ms(expanded)
    assert weighted is not None and plain is not None
    for key in ("mean", "p50", "p90", "p99"):
        assert weighted[key] == pytest.approx(plain[key], rel=1e-9, abs=1e-3)


def test_a_huge_server_token_count_is_one_weighted_sample() -> None:
    # 3 x 10^8 tokens in one chunk: one pair, not 3 x 10^8 floats (the issue-29 probe).
    gaps = per_token_gaps([0.0, 1.0], [1, 300_000_000])
    assert gaps == [(1.0 / 300_000_000, 300_000_000)]
    assert weighted_distribution_ms(gaps) is not None
