"""JSON log records and API error bodies: their message lines and what they say about them.

A line that is a JSON object is a structured log record (docker's json-file driver, Kubernetes,
TGI's JSON logs) or the error body an HTTP API answered with, pasted by its client (vLLM's and
SGLang's OpenAI-style ``{"object": "error", "message": …}``, TGI's ``{"error": …}``). A record
cut short, or not valid JSON (a shell's ``\\'`` escapes), is read up to where it stops.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

__all__ = ["WORD_LEVEL", "JsonRecord", "unwrap_json"]

WORD_LEVEL = {"TRACE": "debug", "DEBUG": "debug", "VERBOSE": "debug", "INFO": "info",
              "WARN": "warning", "WARNING": "warning", "ERROR": "error", "CRITICAL": "critical"}
"""Log level words, upper case, as the levels a :class:`~servewise.formats.logline.LogLine`
carries."""

_JSON_MESSAGE = re.compile(r'"(?:log|message|msg|MESSAGE)"\s*:\s*"((?:[^"\\]|\\.)*)')


@dataclass
class JsonRecord:
    """The message lines of one JSON record, and what its fields say about them."""

    messages: list[str]
    level: str | None = None
    prefixed: bool = False
    """Whether the record gave a level (as a logger's prefix does)."""
    timestamp: str | None = None
    ranks: tuple[tuple[str, int], ...] = field(default_factory=tuple)
    role: str | None = None
    source: str | None = None


_ERROR_OBJECT = re.compile(r'"object"\s*:\s*"error"')
_ERROR_TYPE = re.compile(r'"type"\s*:\s*"([A-Z]\w*(?:Error|Exception))"')
_EXCEPTION_NAME = re.compile(r"[A-Z]\w*(?:Error|Exception)")


def _error_body(record: dict[str, object]) -> str | None:
    """The error an HTTP API answered with, as a client prints it: the OpenAI-style body of
    vLLM and SGLang (``{"object": "error", "message": …, "type": "BadRequestError"}``, or the
    same under ``"error"``) and TGI's (``{"error": "Input validation error: …"}``). The message,
    behind its exception type when it has one; None when the record is not an error body."""
    body: object = record
    nested = record.get("error")
    if isinstance(nested, str) and nested and set(record) <= {"error", "error_type"}:
        return nested
    if isinstance(nested, dict):
        body = nested
    elif record.get("object") != "error":
        return None
    assert isinstance(body, dict)
    message, kind = body.get("message"), body.get("type")
    if not isinstance(message, str) or not message:
        return None
    if isinstance(kind, str) and _EXCEPTION_NAME.fullmatch(kind) is not None:
        return f"{kind}: {message}"
    return message


def unwrap_json(text: str) -> JsonRecord | None:
    """A JSON log record (docker json-file, Kubernetes, TGI's JSON): its message lines."""
    meta = JsonRecord([])
    try:
        record = json.loads(text)
    except ValueError:
        record = None
    if isinstance(record, dict):
        message = _json_message(record, meta)
        if message is None:
            return None
    else:
        # A record cut short (an excerpt, a log rotated mid-line): read the message up to the cut.
        found = _JSON_MESSAGE.search(text)
        if found is None:
            return None
        escaped = found[1].rstrip("\\")
        try:
            message = json.loads(f'"{escaped}"')
        except ValueError:
            message = (escaped.replace("\\n", "\n").replace('\\"', '"')
                       .replace("\\'", "'"))
        level = re.search(r'"level"\s*:\s*"(\w+)"', text)
        if level is not None:
            meta.level = WORD_LEVEL.get(level[1].upper())
            meta.prefixed = True
        elif _ERROR_OBJECT.search(text) is not None:
            # An API's error body that is not valid JSON (pasted with \' escapes, or cut).
            meta.level = "error"
            kind = _ERROR_TYPE.search(text)
            if kind is not None:
                message = f"{kind[1]}: {message}"
    meta.messages = message.rstrip("\n").split("\n")
    return meta


def _json_message(record: dict[str, object], meta: JsonRecord) -> str | None:
    error = _error_body(record)
    if error is not None:
        meta.level = "error"
        return error
    fields = record.get("fields")
    message: object = None
    if isinstance(fields, dict):
        message = fields.get("message")
    for key in ("log", "message", "msg", "MESSAGE"):
        if message is None:
            message = record.get(key)
    if not isinstance(message, str):
        return None
    level = record.get("level")
    if isinstance(level, str):
        meta.level = WORD_LEVEL.get(level.upper())
        meta.prefixed = True
    for key in ("timestamp", "time", "ts"):
        value = record.get(key)
        if isinstance(value, str):
            meta.timestamp = value
            break
    span = record.get("span")
    if isinstance(span, dict) and isinstance(span.get("rank"), int):
        meta.ranks = (("rank", int(span["rank"])),)
        meta.role = "shard"
    if isinstance(record.get("target"), str) and "text_generation" in str(record["target"]):
        meta.source = "tgi"
    return message
