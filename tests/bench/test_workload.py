"""Prompts of exact token lengths (server /tokenize, local tokenizer, none) and prompt files."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from tokenizers import Tokenizer, models, pre_tokenizers, processors, trainers
from tokenizers import decoders as tk_decoders

from servewise.bench.http import HttpPool
from servewise.bench.load import LoadLevel
from servewise.bench.run import BenchConfig, run_bench
from servewise.bench.tokenizer import LocalTokenizer, ServerTokenizer
from servewise.bench.workload import (
    WORDS,
    Prompt,
    RandomPromptBuilder,
    WorkloadSpec,
    length_bounds,
    load_dataset,
)
from servewise.errors import ServewiseError, SourceError, UsageError
from support.sse_server import Behaviour, start_sse_server


@pytest.fixture(scope="module")
def tokenizer_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A byte-level BPE with a BOS token, trained here on the word list."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = tk_decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=["<s>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tokenizer.train_from_iterator([" ".join(WORDS)] * 20, trainer)
    tokenizer.post_processor = processors.TemplateProcessing(
        single="<s> $A", special_tokens=[("<s>", tokenizer.token_to_id("<s>"))])
    path = tmp_path_factory.mktemp("tok") / "tokenizer.json"
    tokenizer.save(str(path))
    return path


def build(tokenizer: LocalTokenizer | None, spec: WorkloadSpec,
          count: int) -> tuple[list[Prompt], tuple[str, ...]]:
    async def go() -> tuple[list[Prompt], tuple[str, ...]]:
        builder = RandomPromptBuilder(tokenizer, spec, seed=5)
        await builder.prepare()
        built = await builder.build(count, level=0)
        assert built.off_length == 0
        return list(built.prompts), builder.prefixes
    return asyncio.run(go())


def test_local_tokenizer_exact_lengths_ranges_and_prefixes(tokenizer_file: Path) -> None:
    local = LocalTokenizer(tokenizer_file)
    plain = Tokenizer.from_file(str(tokenizer_file))
    spec = WorkloadSpec(isl=40, osl=8, range_ratio=0.5, prefix_len=12, num_prefixes=2)
    prompts, prefixes = build(local, spec, 30)
    low, high = length_bounds(40, 0.5)
    lengths = set()
    assert len(set(prefixes)) == 2
    for prefix in prefixes:
        assert len(plain.encode(prefix).ids) == 12 + 1  # with the BOS
    for index, prompt in enumerate(prompts):
        assert prompt.text is not None
        count = len(plain.encode(prompt.text).ids)
        assert count == prompt.expected_tokens and low <= count <= high
        lengths.add(count)
        assert 4 <= prompt.max_tokens <= 12
        assert prompt.text.startswith(prefixes[index % 2])  # shared prefixes, used in turn
    assert len(lengths) > 5


def test_local_tokenizer_counts_tokens_where_they_complete(tokenizer_file: Path) -> None:
    local = LocalTokenizer(tokenizer_file)
    pieces = [" wat", "er", " river", "", " st", "one"]
    counts = local.count_chunks(pieces)
    plain = Tokenizer.from_file(str(tokenizer_file))
    assert sum(counts) == len(plain.encode("".join(pieces), add_special_tokens=False).ids)
    assert counts[3] == 0


def test_bad_tokenizer_paths(tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        LocalTokenizer(tmp_path)
    (tmp_path / "tokenizer.json").write_text("{not json")
    with pytest.raises(SourceError):
        LocalTokenizer(tmp_path)


def test_server_tokenize_gives_exact_lengths_the_server_confirms() -> None:
    with start_sse_server(Behaviour(ttft_s=0.005, itl_s=0.001)) as server:
        config = BenchConfig(url=server.base_url, model="synthetic",
                             workload=WorkloadSpec(isl=30, osl=4, range_ratio=0.3,
                                                   prefix_len=10, num_prefixes=3),
                             levels=(LoadLevel("concurrency", 4),), num_prompts=12, warmup=0)
        result = run_bench(config)
    assert result.document["prompt_tokenizer"].startswith("server ")
    entry = result.document["results"][0]
    assert entry["token_counts"]["prompt_tokens_differ_from_workload"] == 0
    assert entry["prompts_off_length"] == 0
    low, high = length_bounds(30, 0.3)
    assert low <= entry["input_tokens"]["min"] and entry["input_tokens"]["max"] <= high
    assert entry["workload"]["length_distribution"] == {
        "kind": "uniform", "range_ratio": 0.3, "isl_min": low, "isl_max": high,
        "osl_min": 2, "osl_max": 6, "prefix_len": 10, "num_prefixes": 3}


def test_server_tokenize_unavailable_falls_back_to_words() -> None:
    async def go() -> bool:
        async with HttpPool("http://127.0.0.1:9", connect_timeout_s=2) as pool:
            return await ServerTokenizer(pool, "http://127.0.0.1:9", "m").available()
    assert asyncio.run(go()) is False
    prompts, _ = build(None, WorkloadSpec(isl=12, osl=3), 3)
    assert all(p.text is not None and len(p.text.split()) == 11 for p in prompts)
    assert all(p.expected_tokens is None for p in prompts)


def test_prompt_files(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text('{"prompt": "a b", "max_tokens": 3}\n\n'
                    '{"messages": [{"role": "user", "content": "hi"}], "output_tokens": 2}\n')
    prompts = load_dataset(path, osl=None, chat=True)
    assert [p.max_tokens for p in prompts] == [3, 2]
    assert prompts[1].messages == ({"role": "user", "content": "hi"},)
    with pytest.raises(UsageError, match="chat endpoint"):
        load_dataset(path, osl=None, chat=False)


@pytest.mark.parametrize(("content", "match"), [
    ("not json\n", "not JSON"),
    ("[1]\n", "JSON object"),
    ('{"prompt": "x"}\n', "max_tokens"),
    ('{"text": "x", "max_tokens": 2}\n', "prompt"),
    ("\n", "no prompts"),
])
def test_bad_prompt_files_name_the_line(tmp_path: Path, content: str, match: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    with pytest.raises(ServewiseError, match=match) as info:
        load_dataset(path, osl=None, chat=False)
    assert info.value.hint


def test_isl_too_small_for_the_special_tokens() -> None:
    with start_sse_server() as server:
        config = BenchConfig(url=server.base_url, model="synthetic",
                             workload=WorkloadSpec(isl=1, osl=4),
                             levels=(LoadLevel("concurrency", 1),), num_prompts=1)
        with pytest.raises(UsageError, match="no room"):
            run_bench(config)
    assert json.dumps(config.slos_ms) == "{}"
