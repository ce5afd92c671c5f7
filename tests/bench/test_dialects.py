"""Every streaming dialect, timed against the test server's own send times.

Each test runs the synthetic server in one dialect (``support.sse_dialects.DIALECTS`` says
what each sends and the public source it was read from) at concurrency 16 on an exact
schedule; the client's TTFT, TPOT, ITL and E2E must equal the server's recorded send times
within 1 ms (in one of several tries: see ``equal_the_truth``) and its output tokens must
be exact per request.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from bench.test_against_synthetic import Level, equal_the_truth, one_level

from servewise.bench.load import LoadLevel
from servewise.bench.run import BenchConfig, BenchResult, run_bench
from servewise.bench.workload import WorkloadSpec
from support.sse_server import Behaviour, start_sse_server, truth

TOLERANCE_S = 0.001
CONCURRENCY = 16
OSL = 8


def bench_config(url: str, *, chat: bool, tokenizer: Path | None = None,
                 continuous: bool = True, token_ids: bool = False) -> BenchConfig:
    return BenchConfig(url=f"{url}/v1/chat/completions" if chat else url, model="synthetic",
                       workload=WorkloadSpec(isl=12, osl=OSL),
                       levels=(LoadLevel("concurrency", CONCURRENCY),),
                       num_prompts=2 * CONCURRENCY, warmup=2, seed=5, tokenizer=tokenizer,
                       continuous_usage=continuous, token_ids=token_ids)


def run_dialect(behaviour: Behaviour, config: BenchConfig, *, counts: bool = True,
                itl: bool = True) -> tuple[Level, list[BenchResult]]:
    results: list[BenchResult] = []
    with start_sse_server(behaviour) as server:
        def run() -> list[Level]:
            server.reset()
            result = run_bench(dataclasses.replace(
                config, url=config.url.replace("SERVER", server.base_url)))
            results.append(result)
            return [one_level(result, server.records())]

        (level,) = equal_the_truth(run, TOLERANCE_S, counts=counts, itl=itl)
    return level, results


def schedule(**fields: Any) -> Behaviour:
    return Behaviour(**{"ttft_s": 0.03, "ttft_jitter_s": 0.01, "itl_s": 0.004,
                        "itl_jitter_s": 0.003, "seed": 9, **fields})


def sources(level: Level) -> list[dict[str, int] | None]:
    return [r.token_sources for r in level[0]]


@pytest.mark.parametrize("chat", [False, True])
def test_vllm_continuous_usage(chat: bool) -> None:
    level, results = run_dialect(schedule(dialect="vllm", chunks=[1, 3, 2]),
                                 bench_config("SERVER", chat=chat))
    assert level[2]["token_counts"]["per_chunk"] == {"continuous_usage": 2 * CONCURRENCY}
    server = results[-1].document["server"]
    assert server["usage"] == "continuous" and server["dialect"] == "vllm"
    assert server["tokenize"] is True


def test_vllm_token_ids() -> None:
    level, _ = run_dialect(schedule(dialect="vllm", chunks=[2, 1]),
                           bench_config("SERVER", chat=True, continuous=False, token_ids=True))
    assert level[2]["token_counts"]["per_chunk"] == {"token_ids": 2 * CONCURRENCY}
    assert all(r.usage_mode == "final" and "token_ids" in r.marks for r in level[0])


@pytest.mark.parametrize("continuous", [True, False])
def test_sglang_role_chunk_and_stream_options(continuous: bool) -> None:
    chunks = [1, 2] if continuous else [1]  # without usage per chunk: one token per event
    level, results = run_dialect(schedule(dialect="sglang", chunks=chunks),
                                 bench_config("SERVER", chat=True, continuous=continuous))
    server = results[-1].document["server"]
    assert server["dialect"] == "sglang"
    assert server["usage"] == ("continuous" if continuous else "final")
    expected = {"continuous_usage": OSL} if continuous else {"events": OSL}
    assert sources(level) == [expected] * len(level[0])


def test_tgi_openai_route() -> None:
    level, results = run_dialect(schedule(dialect="tgi"), bench_config("SERVER", chat=True))
    assert sources(level) == [{"events": OSL}] * len(level[0])
    server = results[-1].document["server"]
    assert server["usage"] == "final" and server["dialect"] == "tgi"


@pytest.mark.parametrize("chat", [False, True])
def test_llamacpp_server(chat: bool) -> None:
    level, results = run_dialect(schedule(dialect="llamacpp"), bench_config("SERVER", chat=chat))
    assert sources(level) == [{"events": OSL}] * len(level[0])
    server = results[-1].document["server"]
    assert server["usage"] == "final" and server["dialect"] == "llama.cpp"


def test_openai_usage_only_in_the_last_event() -> None:
    level, results = run_dialect(schedule(dialect="openai"), bench_config("SERVER", chat=True))
    assert sources(level) == [{"events": OSL}] * len(level[0])
    assert results[-1].document["server"]["usage"] == "final"


def test_final_event_with_text_and_usage_empty_events_and_no_done() -> None:
    # The case that once put every token on the last event (TTFT == E2E, TPOT 0).
    behaviour = schedule(dialect="openai", final_text_usage=True, empty_events=True, done=False)
    level, _ = run_dialect(behaviour, bench_config("SERVER", chat=True))
    for record in level[0]:
        assert record.usage_mode == "final"
        assert {"no_done", "usage_with_text"} <= set(record.marks)
        assert record.ttft is not None and record.e2e is not None
        assert record.ttft < record.e2e


def test_several_tokens_per_event_with_a_local_tokenizer(tmp_path: Path) -> None:
    tokenizer = word_tokenizer(tmp_path)
    level, _ = run_dialect(schedule(dialect="openai", chunks=[3, 1, 2]),
                           bench_config("SERVER", chat=False, tokenizer=tokenizer))
    assert level[2]["token_counts"]["per_chunk"] == {"tokenizer": 2 * CONCURRENCY}
    assert sources(level) == [{"tokenizer": OSL}] * len(level[0])


def test_several_tokens_per_event_reconciled_by_final_usage() -> None:
    # No ids, no per-chunk usage, no tokenizer: one per event, and the final usage adds the
    # rest. Totals, TTFT, TPOT and E2E stay exact; ITL is an estimate (not checked).
    level, _ = run_dialect(schedule(dialect="openai", chunks=[3, 1, 2]),
                           bench_config("SERVER", chat=True), counts=False, itl=False)
    by_id = {r["request_id"]: r for r in level[1]}
    for record in level[0]:
        sends = by_id[record.request_id]["sends"]
        assert record.output_tokens == sum(record.chunk_tokens) == truth(
            by_id[record.request_id])["tokens"] == OSL
        assert record.token_sources == {"events": len(sends), "final_usage": OSL - len(sends)}
        assert len(record.chunk_times) == len(sends)


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_reasoning_deltas_count_as_output_tokens(field: str) -> None:
    behaviour = schedule(dialect="vllm" if field == "reasoning" else "sglang",
                         reasoning_tokens=3, reasoning_field=field)
    level, results = run_dialect(behaviour, bench_config("SERVER", chat=True))
    assert all("reasoning" in r.marks for r in level[0])
    assert results[-1].document["server"]["reasoning"] is True
    assert "reasoning" in results[-1].document["output_token_counter"]


def test_tool_call_deltas() -> None:
    level, results = run_dialect(schedule(dialect="openai", tool_tokens=4),
                                 bench_config("SERVER", chat=True))
    assert all("tool_calls" in r.marks for r in level[0])
    assert sources(level) == [{"events": OSL}] * len(level[0])
    assert results[-1].document["server"]["tool_calls"] is True


def word_tokenizer(folder: Path) -> Path:
    """A tokenizer.json that counts the synthetic server's words as it does: one per word."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {"[UNK]": 0, **{f"w{i}": i + 1 for i in range(512)}}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()  # type: ignore[assignment]
    path = folder / "tokenizer.json"
    tokenizer.save(str(path))
    return path


def test_every_dialect_names_its_source() -> None:
    from support.sse_dialects import DIALECTS

    assert set(DIALECTS) == {"vllm", "sglang", "tgi", "llamacpp", "openai"}
    for name, text in DIALECTS.items():
        assert "https://github.com/" in text or "vllm/entrypoints/" in text, name
