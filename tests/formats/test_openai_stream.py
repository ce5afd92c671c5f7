"""The OpenAI chunk reader on what vLLM, SGLang and OpenAI put in streamed chunks."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from servewise.errors import FormatError
from servewise.formats.openai_stream import StreamChunk, _parse_general, parse_chunk


def test_completion_chunk_with_token_ids_and_continuous_usage() -> None:
    chunk = parse_chunk('{"id":"c","object":"text_completion","choices":[{"index":0,'
                        '"text":" the cat","finish_reason":null,"token_ids":[5,6]}],'
                        '"usage":{"prompt_tokens":9,"completion_tokens":4,"total_tokens":13}}')
    assert chunk == StreamChunk(" the cat", 2, 4, 9, None, True)


def test_chat_role_chunk_reasoning_and_finish() -> None:
    role = parse_chunk('{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}')
    assert role.text == "" and role.has_choices and role.token_ids is None
    thinking = parse_chunk('{"choices":[{"delta":{"reasoning_content":"hm"}}]}')
    assert thinking.text == "hm"
    newer = parse_chunk('{"choices":[{"delta":{"reasoning":"so","content":null}}]}')
    assert newer.text == "so"
    last = parse_chunk('{"choices":[{"delta":{},"finish_reason":"length"}]}')
    assert last.finish_reason == "length" and last.text == ""


def test_final_usage_chunk_has_no_choices() -> None:
    chunk = parse_chunk('{"id":"c","choices":[],"usage":{"prompt_tokens":3,'
                        '"completion_tokens":8,"total_tokens":11}}')
    assert not chunk.has_choices
    assert (chunk.completion_tokens, chunk.prompt_tokens) == (8, 3)


@pytest.mark.parametrize("data", [
    '{"error":{"message":"boom","type":"InternalServerError","code":500}}',
    '{"object":"error","message":"boom","type":"BadRequestError","code":400}',
])
def test_error_objects(data: str) -> None:
    chunk = parse_chunk(data)
    assert chunk.error is not None and "boom" in chunk.error


@pytest.mark.parametrize("data", ["not json", "[1, 2]", '{"choices":["x"]}', ""])
def test_malformed_chunks_raise_format_error(data: str) -> None:
    with pytest.raises(FormatError) as info:
        parse_chunk(data)
    assert info.value.expected


_ODD = st.one_of(st.none(), st.booleans(), st.integers(-5, 2**70), st.floats(allow_nan=False),
                 st.text(max_size=5), st.lists(st.integers(0, 9), max_size=3),
                 st.dictionaries(st.sampled_from(["content", "x"]), st.text(max_size=3),
                                 max_size=2))
_DELTA = st.fixed_dictionaries({}, optional={
    "role": st.just("assistant"), "content": st.one_of(st.none(), st.text(max_size=5), _ODD),
    "reasoning_content": st.one_of(st.none(), st.text(max_size=5)),
    "reasoning": st.one_of(st.none(), st.text(max_size=5), _ODD),
    "tool_calls": st.one_of(st.none(), _ODD, st.lists(st.fixed_dictionaries({}, optional={
        "index": st.integers(0, 2), "function": st.one_of(_ODD, st.fixed_dictionaries(
            {}, optional={"name": st.one_of(st.none(), st.text(max_size=4)),
                          "arguments": st.one_of(st.none(), st.text(max_size=4))}))}),
        max_size=2))})
_CHOICE = st.fixed_dictionaries({}, optional={
    "index": st.integers(0, 2), "text": st.one_of(st.none(), st.text(max_size=5), _ODD),
    "delta": st.one_of(st.none(), _DELTA, _ODD),
    "token_ids": st.one_of(st.none(), st.lists(st.integers(0, 2**40), max_size=4), _ODD),
    "finish_reason": st.one_of(st.none(), st.sampled_from(["length", "stop"]), _ODD),
    "matched_stop": st.one_of(st.none(), st.integers(0, 3)),
    "logprobs": st.none()})
_USAGE = st.fixed_dictionaries({}, optional={
    "prompt_tokens": st.one_of(st.integers(0, 10**6), _ODD),
    "completion_tokens": st.one_of(st.integers(0, 10**6), _ODD),
    "total_tokens": st.integers(0, 10**6)})
_BODY = st.fixed_dictionaries({}, optional={
    "id": st.text(max_size=4), "object": st.sampled_from(["text_completion", "error", "x"]),
    "choices": st.one_of(st.lists(st.one_of(_CHOICE, _ODD), max_size=2), _ODD),
    "usage": st.one_of(st.none(), _USAGE, _ODD), "error": _ODD, "message": st.text(max_size=4),
    "timings": st.one_of(st.none(), st.dictionaries(st.just("predicted_n"), st.integers(0, 9)))})


def test_tool_calls_reasoning_and_dialect_marks() -> None:
    tool = parse_chunk('{"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":'
                       '[{"index":0,"id":"c","type":"function","function":{"name":"f",'
                       '"arguments":"{\\"a"}}]},"finish_reason":null}]}')
    assert tool.text == 'f{"a' and tool.tool_call and not tool.reasoning
    assert tool.marks == ("role_with_text",)  # TGI repeats the role beside each delta
    llama = parse_chunk('{"choices":[{"finish_reason":"stop","index":0,"delta":{}}],'
                        '"usage":{"completion_tokens":247,"prompt_tokens":1085},'
                        '"timings":{"predicted_n":247}}')
    assert (llama.text, llama.completion_tokens, llama.marks) == ("", 247, ("timings",))
    sglang = parse_chunk('{"choices":[{"index":0,"delta":{},"finish_reason":"length",'
                         '"matched_stop":null}]}')
    assert sglang.marks == ("matched_stop",) and sglang.finish_reason == "length"
    thought = parse_chunk('{"choices":[{"index":0,"delta":{"reasoning":" hm"}}]}')
    assert thought.reasoning and thought.text == " hm"


def _outcome(data: str, parse: Callable[[str], StreamChunk]) -> object:
    try:
        return parse(data)
    except FormatError as error:
        return ("FormatError", error.expected)
    except Exception as error:  # the general path's own failures on odd types
        return type(error).__name__


@settings(max_examples=500, deadline=None)
@given(body=st.one_of(_BODY, _ODD))
def test_the_typed_fast_path_equals_the_general_path(body: object) -> None:
    data = json.dumps(body)
    assert _outcome(data, parse_chunk) == _outcome(data, _parse_general)
