"""The Prometheus text format reader, on recorded engine metrics and on hostile text."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from servewise.errors import FormatError
from servewise.formats.prometheus import parse_exposition

DATA = Path(__file__).resolve().parent.parent / "data" / "bench"


def test_recorded_sglang_metrics() -> None:
    found = parse_exposition((DATA / "sglang_metrics.txt").read_text())
    assert found.types["sglang:time_to_first_token_seconds"] == "histogram"
    assert found.types["sglang:generation_tokens_total"] == "counter"
    (tokens,) = found.named("sglang:generation_tokens_total")
    assert tokens.value == 7_557_572
    assert tokens.label("model_name") == "meta-llama/Llama-3.1-8B-Instruct"
    infinite = [s for s in found.named("sglang:time_to_first_token_seconds_bucket")
                if s.label("le") == "+Inf"]
    assert infinite[0].value == 11008


def test_escapes_special_values_and_timestamps() -> None:
    text = ('# TYPE m gauge\nm{path="a\\"b\\\\c\\nd",x="1"} +Inf 1700000000\n'
            'n NaN\n  \nm{ x="2" , } -Inf\n')
    found = parse_exposition(text)
    first, nan, last = found.samples
    assert first.label("path") == 'a"b\\c\nd' and first.value == math.inf
    assert first.labels == (("path", 'a"b\\c\nd'), ("x", "1"))
    assert math.isnan(nan.value) and last.value == -math.inf and last.label("x") == "2"


@pytest.mark.parametrize("text", ["m{x=1} 2", 'm{x="1} 2', "m", "m abc", "<html>"])
def test_what_is_not_prometheus_text_is_a_format_error(text: str) -> None:
    with pytest.raises(FormatError):
        parse_exposition(text)
