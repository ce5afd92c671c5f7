"""JSON log records and API error bodies, read by themselves."""

from __future__ import annotations

from servewise.formats.logjson import unwrap_json


def test_a_docker_record_gives_its_lines_and_time() -> None:
    record = unwrap_json('{"log":"INFO a\\nINFO b\\n","stream":"stdout",'
                         '"time":"2024-09-05T00:38:34.1Z"}')
    assert record is not None
    assert (record.messages, record.timestamp, record.level) == (
        ["INFO a", "INFO b"], "2024-09-05T00:38:34.1Z", None)


def test_a_tgi_record_names_its_shard() -> None:
    record = unwrap_json('{"level":"ERROR","fields":{"message":"Shard failed"},'
                         '"target":"text_generation_launcher","span":{"rank":1}}')
    assert record is not None
    assert (record.level, record.ranks, record.source) == ("error", (("rank", 1),), "tgi")


def test_an_error_body_is_an_error_and_other_json_is_nothing() -> None:
    body = unwrap_json('{"error":{"message":"too long","type":"BadRequestError","code":400}}')
    assert body is not None and (body.messages, body.level) == (
        ["BadRequestError: too long"], "error")
    assert unwrap_json('{"model": "x", "max_tokens": 5}') is None
    assert unwrap_json("{not json at all") is None
