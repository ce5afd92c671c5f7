"""The OpenAI chunk reader on what vLLM, SGLang and OpenAI put in streamed chunks."""

from __future__ import annotations

import pytest

from servewise.errors import FormatError
from servewise.formats.openai_stream import StreamChunk, parse_chunk


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
