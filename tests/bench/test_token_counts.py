"""Token accounting on hand-made chunk lists: which source counts, and how a total reconciles."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from servewise.bench.token_counts import account, apportion, reconcile, usage_mode

TIMES = [1.0, 2.0, 3.0, 4.0]


def test_one_usage_figure_on_the_last_event_is_a_total_not_a_chunk_count() -> None:
    # The bug of issue 17: usage only on the final text event put every token there.
    found = account(TIMES, ["", " a", " b", " c"], [-1] * 4, [-1, -1, -1, 200], 200)
    assert found.usage_mode == "final" and found.source == "chunks"
    assert found.times == (2.0, 3.0, 4.0)  # TTFT at the first text, not the last event
    assert sum(found.counts) == found.total == 200
    assert found.sources == {"events": 3, "final_usage": 197}


def test_usage_on_every_text_chunk_is_continuous() -> None:
    # vLLM's role chunk carries usage 0; SGLang's separate finish chunk carries none.
    found = account(TIMES, ["", " a b", " c", ""], [-1] * 4, [0, 2, 3, -1], 3)
    assert found.usage_mode == "continuous" and found.source == "continuous_usage"
    assert found.counts == (2, 1) and found.sources == {"continuous_usage": 3}


def test_token_ids_win_and_a_server_total_that_disagrees_is_kept_apart() -> None:
    found = account(TIMES, ["", " a b", " c", " d"], [0, 2, 1, 1], [-1] * 4, 5)
    assert found.source == "token_ids" and found.counts == (2, 1, 1)
    assert found.total == 5 and found.sources == {"token_ids": 4}


def test_no_usage_at_all() -> None:
    found = account(TIMES, ["", " a", "", " b"], [-1] * 4, [-1] * 4, None)
    assert found.usage_mode == "none" and found.total == 2
    assert found.texts == (" a", " b")


def test_a_final_total_below_the_events_drops_events_that_carried_none() -> None:
    found = account(TIMES, [" a", " b", " c", " d"], [-1] * 4, [-1] * 4, 2)
    assert found.total == 2 == sum(found.counts) and len(found.times) == 2


def test_usage_mode() -> None:
    assert usage_mode(["a", "b"], [1, 2], 2) == "continuous"
    assert usage_mode(["a", "b"], [-1, 2], 2) == "final"
    assert usage_mode(["a"], [1], 1) == "final"  # one figure: a total
    assert usage_mode(["a"], [-1], None) == "none"


def test_reconcile_spreads_by_text() -> None:
    counts, sources = reconcile([1, 1], [" w1 w2 w3", " w4"], 4, "chunks")
    assert counts == [3, 1] and sources == {"events": 2, "final_usage": 2}
    assert reconcile([2, 1], ["x", "y"], 9, "token_ids") == ([2, 1], {"token_ids": 3})


@given(st.integers(0, 500), st.lists(st.integers(0, 50), min_size=1, max_size=30))
def test_apportion_sums_exactly(total: int, weights: list[int]) -> None:
    shares = apportion(total, weights)
    assert sum(shares) == total and len(shares) == len(weights)
    if total >= len(weights):
        assert min(shares) >= 1


@pytest.mark.parametrize("weights", [[], [0, 0]])
def test_apportion_edges(weights: list[int]) -> None:
    assert sum(apportion(5, weights)) == (5 if weights else 0)
