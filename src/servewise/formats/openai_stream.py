"""The JSON of one streamed OpenAI-compatible response chunk (completions or chat).

Pure: the ``data`` of one server-sent event in, a :class:`StreamChunk` out. Understands what
vLLM and SGLang put there besides OpenAI's own fields: per-chunk ``token_ids`` (vLLM's
``return_token_ids``), per-chunk cumulative ``usage`` (``stream_options.continuous_usage_stats``),
reasoning text (``reasoning_content`` / ``reasoning``), tool-call argument deltas, error
objects sent mid-stream, and the marks that tell one server's dialect from another's
(llama.cpp's ``timings``, SGLang's ``matched_stop``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import msgspec

from servewise.errors import FormatError

DONE = "[DONE]"
"""The data of the event that ends an OpenAI stream."""


@dataclass(frozen=True, slots=True)
class StreamChunk:
    """What one chunk says about the output."""

    text: str
    """New output text: ``choices[0].text`` (completions) or the delta's content plus its
    reasoning text (chat)."""
    token_ids: int | None
    """How many token ids the chunk lists (``choices[0].token_ids``), when it lists them."""
    completion_tokens: int | None
    """``usage.completion_tokens`` when the chunk carries usage (cumulative so far)."""
    prompt_tokens: int | None
    """``usage.prompt_tokens`` when the chunk carries usage."""
    finish_reason: str | None
    has_choices: bool
    """Whether the chunk has a choice at all (a final usage-only chunk has none)."""
    error: str | None = None
    """The server's error message when the chunk is an error object."""
    reasoning: bool = False
    """Whether part of ``text`` came from a reasoning delta (``reasoning_content`` or
    ``reasoning``): it is output the model generated, counted as output tokens."""
    tool_call: bool = False
    """Whether part of ``text`` came from a tool-call delta (the function's name or arguments)."""
    marks: tuple[str, ...] = ()
    """Dialect marks seen in the chunk: ``timings`` (llama.cpp), ``matched_stop`` (SGLang),
    ``role_with_text`` (a delta repeating the role beside its text, as TGI's do)."""


MAX_TOKENS = 100_000_000
"""The most tokens a server may report for one request (no model's context comes near):
a usage figure outside 0..MAX_TOKENS is a malformed chunk, never a size to allocate."""


def _checked_usage(completion: int | None, prompt: int | None) -> None:
    for name, value in (("completion_tokens", completion), ("prompt_tokens", prompt)):
        if value is not None and not 0 <= value <= MAX_TOKENS:
            raise FormatError("stream chunk", offset=0,
                              expected=f"usage.{name} from 0 to {MAX_TOKENS}",
                              found=f"usage.{name} = {value}",
                              hint="the server reported an impossible token count; the "
                              "request is counted as failed (malformed)")


def _error_text(error: Any) -> str:
    if isinstance(error, dict):
        message = error.get("message") or error.get("type") or json.dumps(error)
        code = error.get("code")
        return f"{message} (code {code})" if code is not None else str(message)
    return str(error)


class _Function(msgspec.Struct):
    name: str | None = None
    arguments: str | None = None


class _ToolCall(msgspec.Struct):
    function: _Function | None = None


class _Delta(msgspec.Struct):
    role: str | None = None
    content: str | None = None
    reasoning_content: str | None = None
    reasoning: str | None = None
    tool_calls: list[_ToolCall] | None = None


class _Choice(msgspec.Struct):
    text: str | None = None
    delta: _Delta | None = None
    token_ids: list[Any] | None = None
    finish_reason: str | None = None
    matched_stop: Any = msgspec.UNSET


class _Usage(msgspec.Struct):
    completion_tokens: int | None = None
    prompt_tokens: int | None = None


class _Chunk(msgspec.Struct):
    """The fields of an ordinary chunk; anything else is decoded by the general path."""

    choices: list[_Choice] | None = None
    usage: _Usage | None = None
    error: Any = msgspec.UNSET
    object: str | None = None
    timings: Any = msgspec.UNSET


_DECODE_ORDINARY = msgspec.json.Decoder(_Chunk).decode


def parse_chunk(data: str) -> StreamChunk:
    """Read one chunk's JSON; raise :class:`FormatError` when it is not a JSON object."""
    # Every chunk of a stream passes here, so the ordinary shape is decoded straight into
    # typed fields (msgspec, without building dicts); a chunk of any other shape (an error,
    # a field of an unexpected type, not JSON) goes through the general path below.
    try:
        ordinary = _DECODE_ORDINARY(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return _parse_general(data)
    if ordinary.error is not msgspec.UNSET or ordinary.object == "error":
        return _parse_general(data)
    usage = ordinary.usage
    completion_tokens = usage.completion_tokens if usage is not None else None
    prompt_tokens = usage.prompt_tokens if usage is not None else None
    _checked_usage(completion_tokens, prompt_tokens)
    marks: tuple[str, ...] = ("timings",) if ordinary.timings is not msgspec.UNSET else ()
    if not ordinary.choices:
        return StreamChunk("", None, completion_tokens, prompt_tokens, None, False, marks=marks)
    choice = ordinary.choices[0]
    if choice.matched_stop is not msgspec.UNSET:
        marks += ("matched_stop",)
    delta = choice.delta
    reasoning = tool_call = False
    if delta is not None:
        thought = delta.reasoning_content or delta.reasoning or ""
        reasoning = bool(thought)
        text = (delta.content or "") + thought
        if delta.tool_calls:
            called = "".join((call.function.name or "") + (call.function.arguments or "")
                             for call in delta.tool_calls if call.function is not None)
            tool_call = bool(called)
            text += called
        if delta.role is not None and text:
            marks += ("role_with_text",)
    else:
        text = choice.text or ""
    ids = choice.token_ids
    return StreamChunk(text, len(ids) if ids is not None else None, completion_tokens,
                       prompt_tokens, choice.finish_reason, True, None, reasoning, tool_call,
                       marks)


def _parse_general(data: str) -> StreamChunk:
    try:
        body = json.loads(data)
    except ValueError as error:
        raise FormatError(
            "stream chunk",
            offset=getattr(error, "pos", 0),
            expected="a JSON object",
            found=repr(data[:80]),
            hint="the server did not send OpenAI-style JSON events; check the URL and endpoint",
        ) from None
    if not isinstance(body, dict):
        raise FormatError("stream chunk", offset=0, expected="a JSON object",
                          found=type(body).__name__)
    if "error" in body or body.get("object") == "error":
        return StreamChunk("", None, None, None, None, False,
                           error=_error_text(body.get("error") or body.get("message")))
    usage = body.get("usage")
    completion_tokens = prompt_tokens = None
    if isinstance(usage, dict):
        completion_tokens = usage.get("completion_tokens")
        prompt_tokens = usage.get("prompt_tokens")
    if not isinstance(completion_tokens, int) or isinstance(completion_tokens, bool):
        completion_tokens = None
    if not isinstance(prompt_tokens, int) or isinstance(prompt_tokens, bool):
        prompt_tokens = None
    _checked_usage(completion_tokens, prompt_tokens)
    marks: tuple[str, ...] = ("timings",) if "timings" in body else ()
    choices = body.get("choices")
    if not choices or not isinstance(choices, list):
        return StreamChunk("", None, completion_tokens, prompt_tokens, None, False, marks=marks)
    choice = choices[0]
    if not isinstance(choice, dict):
        raise FormatError("stream chunk", offset=0, expected="choices[0] to be an object",
                          found=type(choice).__name__)
    if "matched_stop" in choice:
        marks += ("matched_stop",)
    delta = choice.get("delta")
    reasoning = tool_call = False
    if isinstance(delta, dict):
        thought = delta.get("reasoning_content") or delta.get("reasoning") or ""
        thought = thought if isinstance(thought, str) else ""
        content = delta.get("content")
        text = (content if isinstance(content, str) else "") + thought
        reasoning = bool(thought)
        called = _tool_text(delta.get("tool_calls"))
        tool_call = bool(called)
        text += called
        if delta.get("role") is not None and text:
            marks += ("role_with_text",)
    else:
        text = choice.get("text") or ""
        text = text if isinstance(text, str) else ""
    ids = choice.get("token_ids")
    finish = choice.get("finish_reason")
    return StreamChunk(
        text,
        len(ids) if isinstance(ids, list) else None,
        completion_tokens,
        prompt_tokens,
        finish if isinstance(finish, str) else None,
        True,
        None,
        reasoning,
        tool_call,
        marks,
    )


def _tool_text(calls: Any) -> str:
    """The name and argument text of tool-call deltas (what the model generated)."""
    if not isinstance(calls, list):
        return ""
    parts = []
    for call in calls:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            for key in ("name", "arguments"):
                value = function.get(key)
                if isinstance(value, str):
                    parts.append(value)
    return "".join(parts)
