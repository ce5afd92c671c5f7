"""Benchmark metrics from request records: pure functions, each formula stated in :data:`FORMULAS`.

Only requests that completed without an error enter the latency and throughput figures;
failures are counted by kind. Percentiles interpolate linearly between the two nearest
ranks (numpy's default): ``p = x[floor(h)] + (h - floor(h)) * (x[floor(h)+1] - x[floor(h)])``
with ``h = (n - 1) * q``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from servewise.bench.records import RequestRecord

#: What every metric means, written into each JSON result.
FORMULAS: dict[str, str] = {
    "ttft_ms": "time to first token: arrival of the first chunk carrying >= 1 output token "
               "minus the time the request's body was written to its connection (after any "
               "connection set-up; role-only and empty chunks do not count)",
    "tpot_ms": "time per output token, per request: (e2e - ttft) / (output_tokens - 1); "
               "requests with one output token have none",
    "itl_ms": "inter-token latency, per token: a chunk carrying k tokens that arrives D after "
              "the previous token-bearing chunk of the same request gives k samples of D / k; "
              "samples pooled over all requests (the first chunk gives none)",
    "e2e_ms": "end-to-end latency: arrival of the last token-bearing chunk minus the time the "
              "request's body was written",
    "duration_s": "from the first request sent to the last request ended, warm-up excluded",
    "request_throughput_per_s": "completed requests / duration_s",
    "output_tokens_per_s": "sum of output_tokens of completed requests / duration_s",
    "total_tokens_per_s": "(sum of input tokens + sum of output tokens) / duration_s",
    "tokens_per_sec_per_gpu": "total_tokens_per_s / gpus (input + output, the SGLang cookbook "
                              "convention)",
    "output_tokens_per_sec_per_gpu": "output_tokens_per_s / gpus",
    "request_goodput_per_s": "completed requests meeting every SLO given / duration_s",
    "slo_attainment": "requests meeting every SLO / completed requests",
    "achieved_rate_per_s": "(requests sent - 1) / (last send - first send)",
    "lateness_ms": "the time the client began a request minus the time the arrival process "
                   "scheduled it (rate mode)",
    "send_delay_ms": "the time the request's body was written minus the time the client began "
                     "it: connection set-up and the client's own delay, excluded from latencies",
    "achieved_concurrency": "sum of e2e over completed requests / duration_s (mean requests "
                            "in flight)",
    "percentiles": "linear interpolation between closest ranks (numpy's default method)",
    "ttft_first_read_merged": "completed requests whose first token-bearing event arrived in "
                              "the same socket read as the next one: their TTFT is an upper "
                              "bound; ttft_ms_own_read is TTFT over the others only",
}

#: SLO keys ``--slo`` accepts, and the per-request metric each bounds.
SLO_KEYS = ("ttft", "tpot", "e2e")


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0..1) of already sorted values, by linear interpolation."""
    if not sorted_values:
        raise ValueError("percentile of no values")
    position = (len(sorted_values) - 1) * q
    low = math.floor(position)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (position - low) * (sorted_values[high] - sorted_values[low])


def distribution_ms(values_s: Iterable[float]) -> dict[str, float] | None:
    """``{mean, p50, p90, p99}`` in milliseconds of values given in seconds; None if empty."""
    ordered = sorted(values_s)
    if not ordered:
        return None
    return {
        "mean": round(1000 * math.fsum(ordered) / len(ordered), 4),
        "p50": round(1000 * percentile(ordered, 0.50), 4),
        "p90": round(1000 * percentile(ordered, 0.90), 4),
        "p99": round(1000 * percentile(ordered, 0.99), 4),
    }


def tpot(record: RequestRecord) -> float | None:
    """(e2e - ttft) / (output_tokens - 1) in seconds; None with fewer than two tokens."""
    if record.ttft is None or record.e2e is None or record.output_tokens < 2:
        return None
    return (record.e2e - record.ttft) / (record.output_tokens - 1)


def per_token_gaps(times: Sequence[float], tokens: Sequence[int]) -> list[tuple[float, int]]:
    """``(D / k, k)`` for each chunk of k tokens arriving D after the previous chunk: k
    samples of D / k, kept as one weighted sample (a server reporting 3 x 10^8 tokens in a
    chunk costs one pair, not 3 x 10^8 floats). Chunks of no token give none."""
    return [((times[i] - times[i - 1]) / tokens[i], tokens[i])
            for i in range(1, len(times)) if tokens[i] > 0]


def itl_samples(record: RequestRecord) -> list[tuple[float, int]]:
    """The per-token gaps of one request, in seconds, as ``(gap, tokens)`` weighted samples."""
    return per_token_gaps(record.chunk_times, record.chunk_tokens)


def weighted_percentile(ordered: Sequence[tuple[float, int]], total: int, q: float) -> float:
    """:func:`percentile` of the values ``ordered`` (sorted) stands for, each repeated its
    weight times (``total`` is the weights' sum), without repeating them."""
    position = (total - 1) * q
    low = math.floor(position)
    high = min(low + 1, total - 1)
    value_low = value_high = ordered[0][0]
    seen = 0
    for value, weight in ordered:
        if seen <= low < seen + weight:
            value_low = value
        if seen <= high < seen + weight:
            value_high = value
            break
        seen += weight
    return value_low + (position - low) * (value_high - value_low)


def weighted_distribution_ms(samples: Iterable[tuple[float, int]]) -> dict[str, float] | None:
    """:func:`distribution_ms` of weighted samples ``(value_s, weight)``; None if empty."""
    ordered = sorted((value, weight) for value, weight in samples if weight > 0)
    total = sum(weight for _, weight in ordered)
    if not total:
        return None
    return {
        "mean": round(1000 * math.fsum(value * weight for value, weight in ordered) / total, 4),
        "p50": round(1000 * weighted_percentile(ordered, total, 0.50), 4),
        "p90": round(1000 * weighted_percentile(ordered, total, 0.90), 4),
        "p99": round(1000 * weighted_percentile(ordered, total, 0.99), 4),
    }


def meets(record: RequestRecord, slos_ms: Mapping[str, float]) -> bool:
    """Whether a completed request meets every SLO (ttft, tpot, e2e in ms)."""
    values = {"ttft": record.ttft, "tpot": tpot(record), "e2e": record.e2e}
    for key, limit in slos_ms.items():
        value = values[key]
        if key == "tpot" and value is None:
            continue  # one output token: no time per output token to miss
        if value is None or 1000 * value > limit:
            return False
    return True


def summarize(
    records: Sequence[RequestRecord],
    *,
    gpus: int | None = None,
    slos_ms: Mapping[str, float] | None = None,
    requested_rate: float | None = None,
    client_chunks: int | None = None,
    reads_timed_by: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """The metrics of one load level's measured requests (warm-up records are skipped).

    ``client_chunks`` and ``reads_timed_by`` (the client's own counts) fill ``client``.
    """
    measured = [r for r in records if r.phase == "measure"]
    good = [r for r in measured if r.ok]
    failed = [r for r in measured if not r.ok]
    if measured:
        begin = min(r.started for r in measured)
        duration = max(r.ended for r in measured) - begin
    else:
        begin, duration = 0.0, 0.0
    per_s = (lambda x: round(x / duration, 4)) if duration > 0 else (lambda x: None)
    inputs = [r.prompt_tokens if r.prompt_tokens is not None else r.expected_prompt_tokens
              for r in good]
    known_inputs = [n for n in inputs if n is not None]
    outputs = [r.output_tokens for r in good]
    total_in, total_out = sum(known_inputs), sum(outputs)
    tpots = [t for t in (tpot(r) for r in good) if t is not None]
    itls = [s for r in good for s in itl_samples(r)]  # one (gap, tokens) pair per chunk
    data: dict[str, Any] = {
        "completed": len(good),
        "failed": len(failed),
        "errors": dict(sorted(Counter(r.error.kind for r in failed if r.error).items())),
        "duration_s": round(duration, 6),
        "ttft_ms": distribution_ms(r.ttft for r in good if r.ttft is not None),
        "ttft_first_read_merged": sum(1 for r in good if r.first_read_events > 1),
        "ttft_ms_own_read": distribution_ms(r.ttft for r in good
                                            if r.ttft is not None and r.first_read_events == 1),
        "tpot_ms": distribution_ms(tpots),
        "itl_ms": weighted_distribution_ms(itls),
        "e2e_ms": distribution_ms(r.e2e for r in good if r.e2e is not None),
        "request_throughput_per_s": per_s(len(good)),
        "output_tokens_per_s": per_s(total_out),
        "total_tokens_per_s": per_s(total_in + total_out) if len(known_inputs) == len(good)
        else None,
    }
    total_rate = data["total_tokens_per_s"]
    data["gpus"] = gpus
    data["tokens_per_sec_per_gpu"] = (round(total_rate / gpus, 4)
                                      if gpus and total_rate is not None else None)
    data["output_tokens_per_sec_per_gpu"] = (round(data["output_tokens_per_s"] / gpus, 4)
                                             if gpus and data["output_tokens_per_s"] is not None
                                             else None)
    data["input_tokens"] = _counts(known_inputs)
    data["output_tokens"] = _counts(outputs)
    data["token_counts"] = _token_counts(good)
    if slos_ms:
        meeting = sum(1 for r in good if meets(r, slos_ms))
        data["goodput"] = {
            "slos_ms": dict(slos_ms),
            "good_requests": meeting,
            "request_goodput_per_s": per_s(meeting),
            "slo_attainment": round(meeting / len(good), 6) if good else None,
        }
    data["load"] = _load(measured, good, duration, requested_rate)
    if client_chunks is not None:
        data["client"] = {"events_read": client_chunks,
                          "events_per_s": per_s(client_chunks)}
        if reads_timed_by is not None:
            data["client"]["reads_timed_by"] = dict(reads_timed_by)
    return data


def _counts(values: Sequence[int]) -> dict[str, Any]:
    if not values:
        return {"total": 0, "mean": None, "min": None, "max": None}
    return {"total": sum(values), "mean": round(sum(values) / len(values), 3),
            "min": min(values), "max": max(values)}


def _token_counts(good: Sequence[RequestRecord]) -> dict[str, Any]:
    """Which source gave the counts, and how often the server's totals disagreed."""
    mismatched = sum(1 for r in good if r.output_tokens_source == "usage"
                     and r.output_tokens != sum(r.chunk_tokens))
    prompt_off = sum(1 for r in good if r.prompt_tokens is not None
                     and r.expected_prompt_tokens is not None
                     and r.prompt_tokens != r.expected_prompt_tokens)
    return {
        "per_chunk": dict(Counter(r.count_source for r in good)),
        "total": dict(Counter(r.output_tokens_source for r in good)),
        "usage_differs_from_chunks": mismatched,
        "prompt_tokens_differ_from_workload": prompt_off,
        "output_shorter_than_requested": sum(1 for r in good if r.output_tokens < r.max_tokens),
    }


def _load(measured: Sequence[RequestRecord], good: Sequence[RequestRecord], duration: float,
          requested_rate: float | None) -> dict[str, Any]:
    starts = sorted(r.started for r in measured)
    achieved = ((len(starts) - 1) / (starts[-1] - starts[0])
                if len(starts) > 1 and starts[-1] > starts[0] else None)
    late = [r.started - r.scheduled for r in measured if r.scheduled is not None]
    in_flight = _max_in_flight(measured)
    return {
        "send_delay_ms": distribution_ms(r.sent - r.started for r in measured),
        "requested_rate_per_s": requested_rate,
        "achieved_rate_per_s": None if achieved is None else round(achieved, 4),
        "lateness_ms": (None if not late else
                        {**(distribution_ms(late) or {}), "max": round(1000 * max(late), 4)}),
        "achieved_concurrency": (round(sum(r.e2e or 0.0 for r in good) / duration, 4)
                                 if duration > 0 else None),
        "max_in_flight": in_flight,
    }


def _max_in_flight(records: Sequence[RequestRecord]) -> int:
    edges = sorted([(r.started, 1) for r in records] + [(r.ended, -1) for r in records],
                   key=lambda edge: (edge[0], edge[1]))
    current = peak = 0
    for _, step in edges:
        current += step
        peak = max(peak, current)
    return peak
