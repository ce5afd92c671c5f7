"""``--speculative-config``: the draft's weights and KV pages counted as vLLM does."""

from __future__ import annotations

from dataclasses import replace

import pytest

from servewise.errors import UsageError
from servewise.knowledge.accounting import load_engine_constants
from servewise.knowledge.gpus import resolve_gpu
from servewise.plan.planner import predict
from servewise.plan.resolve import load_model
from servewise.plan.speculative import parse_speculative, resolve_speculative
from servewise.plan.startup import Settings
from servewise.plan.weights import Parallel

H200 = resolve_gpu("h200")


def _with(ref: str, text: str, settings: Settings) -> tuple[Settings, Settings]:
    target = load_model(ref)
    draft = resolve_speculative(parse_speculative(text), target, load_model)
    return settings, replace(settings, speculative_config=draft)


def test_mtp_adds_the_mtp_layers_weights_and_kv_pages() -> None:
    model = load_model("deepseek-v4-flash")
    base, spec = _with("deepseek-v4-flash", '{"method": "mtp", "num_speculative_tokens": 2}',
                       Settings(kv_cache_dtype="fp8", max_model_len=32768,
                                layout=Parallel(dp=8, expert_parallel=True)))
    plain = predict(model, H200, base, load_engine_constants())
    drafted = predict(model, H200, spec, load_engine_constants())
    mtp = drafted.breakdown["weights_bytes_by_role"]["mtp"]
    assert mtp > 0 and drafted.weights_bytes_per_gpu == plain.weights_bytes_per_gpu + mtp
    assert drafted.kv_bytes_per_token > plain.kv_bytes_per_token
    assert drafted.max_concurrency < plain.max_concurrency


def test_a_draft_model_adds_its_weights_per_rank_and_its_layers() -> None:
    model = load_model("llama-3.1-70b")
    base, spec = _with("llama-3.1-70b", '{"method": "eagle3", "model": "llama-3.1-8b-instruct"}',
                       Settings(max_model_len=8192, layout=Parallel(tp=4)))
    plain = predict(model, H200, base, load_engine_constants())
    drafted = predict(model, H200, spec, load_engine_constants())
    draft_bytes = load_model("llama-3.1-8b-instruct").weights.total_bytes // 4
    assert drafted.weights_bytes_per_gpu == plain.weights_bytes_per_gpu + draft_bytes
    # 80 target layers + 32 draft layers of the same page size
    assert drafted.kv_bytes_per_token == pytest.approx(plain.kv_bytes_per_token * 112 / 80)


def test_ngram_adds_nothing() -> None:
    model = load_model("llama-3.1-8b-instruct")
    base, spec = _with("llama-3.1-8b-instruct",
                       '{"method": "ngram", "num_speculative_tokens": 4}', Settings())
    plain = predict(model, H200, base, load_engine_constants())
    drafted = predict(model, H200, spec, load_engine_constants())
    assert drafted.kv_cache_tokens == plain.kv_cache_tokens
    assert drafted.weights_bytes_per_gpu == plain.weights_bytes_per_gpu


@pytest.mark.parametrize("text,words", [
    ("{bad", "not JSON"), ("[1]", "JSON object"),
    ('{"method": "mtp", "num_speculative_tokens": 0}', ">= 1"),
    ('{"method": "warp"}', "unknown method"),
])
def test_bad_configs_name_the_flag(text: str, words: str) -> None:
    with pytest.raises(UsageError) as info:
        parse_speculative(text)
    assert words in info.value.message and info.value.fields["flag"] == "--speculative-config"


def test_mtp_on_a_model_without_mtp_layers_and_a_draft_without_model() -> None:
    target = load_model("llama-3.1-8b-instruct")
    with pytest.raises(UsageError, match="MTP layers"):
        resolve_speculative(parse_speculative('{"method": "mtp"}'), target, load_model)
    with pytest.raises(UsageError, match="needs \"model\""):
        resolve_speculative(parse_speculative('{"method": "eagle"}'), target, load_model)
