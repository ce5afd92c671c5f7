"""The engine constants table: every entry sourced, versions that do not overlap."""

from __future__ import annotations

from itertools import combinations

import pytest

from servewise.errors import UsageError
from servewise.knowledge.accounting import load_engine_constants
from servewise.versions import EngineVersion


def test_every_constant_is_sourced_and_version_ranges_are_disjoint() -> None:
    table = load_engine_constants()
    assert len(table.all()) > 20
    for constant in table.all():
        assert constant.sources and constant.unit
    for a, b in combinations(table.all(), 2):
        if (a.engine, a.name) != (b.engine, b.name):
            continue
        low, high = EngineVersion.parse("0"), EngineVersion.parse("99")
        a_lo, b_lo = a.since or low, b.since or low
        a_hi, b_hi = a.until or high, b.until or high
        assert a_hi <= b_lo or b_hi <= a_lo, (a.id, b.id)


def test_versions() -> None:
    dev = EngineVersion.parse("0.26.1rc1.dev229+g6f91edf96.d20260731")
    assert (dev.major, dev.minor, dev.patch) == (0, 26, 1)
    assert dev < EngineVersion.parse("0.26.1rc1") < EngineVersion.parse("0.26.1")
    assert not dev.at_least("0.26.1")
    assert dev.at_least("0.26.0")
    assert EngineVersion.parse("V0") == EngineVersion.parse("0.0.0")
    assert EngineVersion.parse("v0.19") == EngineVersion.parse("0.19.0")
    assert str(dev) == "0.26.1rc1.dev229+g6f91edf96.d20260731"
    with pytest.raises(UsageError):
        EngineVersion.parse("latest")


def test_lookup_by_version() -> None:
    table = load_engine_constants()
    v0, v19 = EngineVersion.parse("V0"), EngineVersion.parse("0.19.0")
    assert table.number("vllm", "sampler_logit_copies", v0) == 0
    assert table.number("vllm", "sampler_logit_copies", v19) == 3.3
    assert table.number("vllm", "sampler_logit_copies", EngineVersion.parse("0.16.0")) == 6.5
    with pytest.raises(UsageError):
        table.number("vllm", "no_such_constant", v19)
