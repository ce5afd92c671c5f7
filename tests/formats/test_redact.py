"""The one redaction: URLs, argv flags, environments and documents lose their secrets, and
nothing else changes."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from servewise.formats.redact import (
    MASK,
    is_secret_flag,
    is_secret_name,
    redact_argv,
    redact_data,
    redact_env,
    redact_text,
    redact_url,
    terminal_safe,
)


@pytest.mark.parametrize(("url", "masked"), [
    ("https://alice:s3cret@pypi.example/simple", "https://alice:***@pypi.example/simple"),
    ("https://ghp_token@github.com/x", "https://***@github.com/x"),
    ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
    ("https://h/w.whl?token=abc&arch=x", "https://h/w.whl?token=***&arch=x"),
    ("https://s3/b?X-Amz-Signature=f00&X-Amz-Date=1", "https://s3/b?X-Amz-Signature=***&X-Amz-Date=1"),
])
def test_urls_lose_their_credentials_only(url: str, masked: str) -> None:
    assert redact_url(url) == masked


@pytest.mark.parametrize(("text", "masked"), [
    ("vllm serve m --api-key abc --max-num-batched-tokens 8192",
     "vllm serve m --api-key *** --max-num-batched-tokens 8192"),
    ("--hf-token=xyz", "--hf-token=***"),
    ("docker run -e HF_TOKEN=hf_abcdefghijklmnopqrstuvwx img", "docker run -e HF_TOKEN=*** img"),
    ("PIP_INDEX_URL=https://u:pw@idx/simple", "PIP_INDEX_URL=https://u:***@idx/simple"),
    ("Authorization: Bearer abcdefghijk", "Authorization: *** ***"),
    ('{"api_key": "zzz"}', '{"api_key": "***"}'),
    ("per token throughput, tokenizer_mode=auto, TOKENIZERS_PARALLELISM=false",
     "per token throughput, tokenizer_mode=auto, TOKENIZERS_PARALLELISM=false"),
    ("found hf_abcdefghijklmnopqrstuvwxyz0123 in a log", "found hf_*** in a log"),
])
def test_text_loses_secrets_and_keeps_the_rest(text: str, masked: str) -> None:
    assert redact_text(text) == masked


def test_argv_env_and_documents() -> None:
    assert redact_argv(["serve", "--api-key", "K", "--token=T", "--index-url",
                        "https://a:b@h/"]) == ["serve", "--api-key", MASK, f"--token={MASK}",
                                               "--index-url", "https://a:***@h/"]
    assert redact_env({"HF_TOKEN": "x", "PIP_INDEX_URL": "https://a:b@h/s", "CUDA": "0"}) == {
        "HF_TOKEN": MASK, "PIP_INDEX_URL": "https://a:***@h/s", "CUDA": "0"}
    document = {"env": {"OPENAI_API_KEY": "k"}, "argv": ["--password", "p"],
                "times": [0.1, 0.2], "url": "http://u:p@h"}
    assert redact_data(document) == {"env": {"OPENAI_API_KEY": MASK},
                                     "argv": ["--password", MASK], "times": [0.1, 0.2],
                                     "url": "http://u:***@h"}
    assert document["url"] == "http://u:p@h"  # the input is kept


def test_which_names_are_secret() -> None:
    assert all(map(is_secret_flag, ["--api-key", "--hf-token", "--hf_token", "--password"]))
    assert not any(map(is_secret_flag, ["--max-num-batched-tokens", "--tokenizer", "--port"]))
    assert all(map(is_secret_name, ["HF_TOKEN", "AWS_SECRET_ACCESS_KEY", "WANDB_API_KEY"]))
    assert not any(map(is_secret_name, ["TOKENIZERS_PARALLELISM", "VLLM_MAX_TOKENS", "PATH"]))


def test_terminal_safe_removes_what_a_terminal_would_obey() -> None:
    assert terminal_safe("a\x1b]0;title\x07b\x1b[2Jc\x9bd\x07\te\n") == "abcd\te\n"


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=200))
def test_redaction_never_fails_and_is_stable(text: str) -> None:
    once = redact_text(text)
    assert redact_text(once) == once


def test_a_field_called_key_names_a_key() -> None:
    manifest = "secretKeyRef:\n  name: hf-token\n  key: token\n"
    assert redact_text(manifest) == manifest
    assert redact_text("OPENAI_API_KEY=sk-abc123") == "OPENAI_API_KEY=***"
