"""The engine constants table: every entry sourced, versions that do not overlap."""

from __future__ import annotations

from itertools import combinations

import pytest

from servewise.errors import UsageError
from servewise.knowledge.accounting import EngineVersion, load_engine_constants


def test_every_constant_is_sourced_and_version_ranges_are_disjoint() -> None:
    table = load_engine_constants()
    assert len(table.all()) > 20
    for constant in table.all():
        assert constant.sources and constant.unit
    for a, b in combinations(table.all(), 2):
        if (a.engine, a.name) != (b.engine, b.name):
            continue
        a_lo = a.since.key if a.since else (0, 0, 0)
        b_lo = b.since.key if b.since else (0, 0, 0)
        a_hi = a.until.key if a.until else (99, 0, 0)
        b_hi = b.until.key if b.until else (99, 0, 0)
        assert a_hi <= b_lo or b_hi <= a_lo, (a.id, b.id)


def test_versions() -> None:
    assert EngineVersion.parse("0.26.1rc1.dev229+g6f91edf96.d20260731").key == (0, 26, 1)
    assert EngineVersion.parse("V0").key == (0, 0, 0)
    assert EngineVersion.parse("v0.19").key == (0, 19, 0)
    with pytest.raises(UsageError):
        EngineVersion.parse("latest")


def test_lookup_by_version() -> None:
    table = load_engine_constants()
    v0, v19 = EngineVersion.parse("V0"), EngineVersion.parse("0.19.0")
    assert table.number("vllm", "sampler_logit_copies", v0) == 0
    assert table.number("vllm", "sampler_logit_copies", v19) == 2
    with pytest.raises(UsageError):
        table.number("vllm", "no_such_constant", v19)
