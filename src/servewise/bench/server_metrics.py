"""The engine's own view of a load level: its Prometheus ``/metrics`` before and after.

``--server-metrics`` scrapes ``GET /metrics`` right before a level's measured requests and
right after them; the difference of the engine's histograms and counters is what the engine
saw of exactly those requests (warm-up excluded). Beside the client's figures it separates
engine time from what the client adds (HTTP, the API server's streaming, the network, the
client itself).

The metric names are the engines' own (vLLM: ``vllm/v1/metrics/loggers.py``; SGLang:
https://docs.sglang.ai/references/production_metrics.html). Histogram percentiles are
estimated from the buckets as Prometheus' ``histogram_quantile`` does (linear within the
bucket), so they are only as fine as the engine's bucket bounds; means are exact
(``_sum / _count``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from servewise.formats.prometheus import Exposition, parse_exposition

#: Per engine: each figure and the metric names that carry it, preferred first.
METRICS: dict[str, dict[str, tuple[str, ...]]] = {
    "vllm": {
        "ttft": ("vllm:time_to_first_token_seconds",),
        "itl": ("vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds"),
        "e2e": ("vllm:e2e_request_latency_seconds",),
        "queue": ("vllm:request_queue_time_seconds",),
        "generation_tokens": ("vllm:generation_tokens_total",),
        "prompt_tokens": ("vllm:prompt_tokens_total",),
        "requests": ("vllm:request_success_total",),
    },
    "sglang": {
        "ttft": ("sglang:time_to_first_token_seconds",),
        "itl": ("sglang:inter_token_latency_seconds", "sglang:time_per_output_token_seconds"),
        "e2e": ("sglang:e2e_request_latency_seconds",),
        "queue": ("sglang:queue_time_seconds",),
        "generation_tokens": ("sglang:generation_tokens_total",),
        "prompt_tokens": ("sglang:prompt_tokens_total",),
        "requests": ("sglang:num_requests_total",),
    },
}
HISTOGRAMS = ("ttft", "itl", "e2e", "queue")
COUNTERS = ("generation_tokens", "prompt_tokens", "requests")


@dataclass(frozen=True)
class Histogram:
    """One histogram summed over its label sets: cumulative bucket counts, sum and count."""

    name: str
    buckets: dict[float, float] = field(default_factory=dict)
    total: float = 0.0
    count: float = 0.0

    def minus(self, before: Histogram | None) -> Histogram:
        """What was observed since ``before``."""
        if before is None:
            return self
        return Histogram(self.name, {le: n - before.buckets.get(le, 0.0)
                                     for le, n in self.buckets.items()},
                         self.total - before.total, self.count - before.count)

    def quantile(self, q: float) -> float | None:
        """Prometheus' ``histogram_quantile``: linear inside the bucket holding rank q."""
        if self.count <= 0 or not self.buckets:
            return None
        rank = q * self.count
        lower, below = 0.0, 0.0
        for le in sorted(self.buckets):
            cumulative = self.buckets[le]
            if cumulative >= rank:
                if math.isinf(le):
                    return lower
                if cumulative == below:
                    return le
                return lower + (le - lower) * (rank - below) / (cumulative - below)
            lower, below = le, cumulative
        return lower

    def summary_ms(self) -> dict[str, float | int | None] | None:
        """``{count, mean, p50, p90, p99}`` in ms (percentiles from buckets); None if empty."""
        if self.count <= 0:
            return None

        def ms(value: float | None) -> float | None:
            return None if value is None else round(1000 * value, 3)

        return {"count": int(self.count), "mean": ms(self.total / self.count),
                "p50": ms(self.quantile(0.5)), "p90": ms(self.quantile(0.9)),
                "p99": ms(self.quantile(0.99))}


@dataclass(frozen=True)
class Snapshot:
    """What one scrape said, for the engine it came from."""

    engine: str | None
    histograms: dict[str, Histogram]
    counters: dict[str, float]


def detect_engine(exposition: Exposition) -> str | None:
    """``vllm`` or ``sglang`` from the metric names' prefix; None for neither."""
    names = {s.name for s in exposition.samples}
    for engine in METRICS:
        if any(name.startswith(f"{engine}:") for name in names):
            return engine
    return None


def _histogram(exposition: Exposition, name: str) -> Histogram | None:
    buckets: dict[float, float] = {}
    for sample in exposition.named(f"{name}_bucket"):
        bound = sample.label("le")
        if bound is None:
            continue
        le = math.inf if bound in ("+Inf", "Inf") else float(bound)
        buckets[le] = buckets.get(le, 0.0) + sample.value
    if not buckets:
        return None
    total = sum(s.value for s in exposition.named(f"{name}_sum"))
    count = sum(s.value for s in exposition.named(f"{name}_count"))
    return Histogram(name, buckets, total, count)


def snapshot(text: str) -> Snapshot:
    """Read one ``/metrics`` answer into the figures :data:`METRICS` names."""
    exposition = parse_exposition(text)
    engine = detect_engine(exposition)
    histograms: dict[str, Histogram] = {}
    counters: dict[str, float] = {}
    for key, names in METRICS.get(engine or "", {}).items():
        for name in names:
            if key in HISTOGRAMS:
                found = _histogram(exposition, name)
                if found is not None:
                    histograms[key] = found
                    break
            else:
                samples = exposition.named(name)
                if samples:
                    counters[key] = sum(s.value for s in samples)
                    break
    return Snapshot(engine, histograms, counters)


def difference(before: Snapshot, after: Snapshot, url: str) -> dict[str, Any]:
    """The engine's figures for what happened between two scrapes (JSON-ready)."""
    if after.engine is None:
        return {"engine": None, "url": url,
                "note": "no vLLM or SGLang metrics at this URL (vllm:* or sglang:* names)"}
    data: dict[str, Any] = {"engine": after.engine, "url": url}
    for key in HISTOGRAMS:
        histogram = after.histograms.get(key)
        data[f"{key}_ms"] = (None if histogram is None else
                             histogram.minus(before.histograms.get(key)).summary_ms())
        data[f"{key}_metric"] = None if histogram is None else histogram.name
    for key in COUNTERS:
        value = after.counters.get(key)
        data[key] = None if value is None else round(value - before.counters.get(key, 0.0))
    data["percentiles"] = "estimated from the engine's histogram buckets (histogram_quantile)"
    return data


def beside_client(engine: Mapping[str, Any], client: Mapping[str, Any]) -> dict[str, Any]:
    """Client mean minus engine mean, per latency: what the client side adds."""
    added: dict[str, Any] = {}
    for key, client_key in (("ttft", "ttft_ms"), ("itl", "itl_ms"), ("e2e", "e2e_ms")):
        mine, theirs = client.get(client_key), engine.get(f"{key}_ms")
        added[f"{key}_mean_ms"] = (round(mine["mean"] - theirs["mean"], 3)
                                   if mine and theirs else None)
    tokens = client.get("output_tokens", {}).get("total")
    generated = engine.get("generation_tokens")
    added["output_tokens_client_minus_engine"] = (tokens - generated if tokens is not None
                                                  and generated is not None else None)
    return added
