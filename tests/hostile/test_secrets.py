"""No secret of the probe's list in any output, log or store row.

The probe's secrets: a password in a package-index URL (``PIP_INDEX_URL``, ``--index-url``,
a wheel URL), ``HF_TOKEN`` given to ``launch --env``, ``--api-key`` in an engine's command,
and ``http://user:pw@...`` bench URLs.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest

from servewise.cli import run
from servewise.store import Store

PASSWORD = "pw-Hostile-9876"
TOKEN = "hf_HostileTokenValue1234567890abcd"
API_KEY = "sk-hostile-api-key-0123456789abcdef"
SECRETS = (PASSWORD, TOKEN, API_KEY)


def no_secret(*texts: str) -> None:
    for text in texts:
        for secret in SECRETS:
            assert secret not in text, f"{secret} leaked: {text[:300]}"


def store_text(cache: Path) -> str:
    """Every row of every table of the store, as text."""
    database = next(cache.glob("*.sqlite*"), None) or next(cache.rglob("*.db"), None)
    assert database is not None, list(cache.iterdir())
    rows = []
    with sqlite3.connect(database) as connection:
        tables = [name for (name,) in connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            rows.extend(str(row) for row in connection.execute(f"SELECT * FROM {table}"))
    return "\n".join(rows)


def test_an_index_url_password_is_masked_on_stderr_and_in_json(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    url = f"http://alice:{PASSWORD}@127.0.0.1:9/simple"
    for argv in (["inspect", "pypi:vllm==0.1.0", "--index-url", url, "--timeout", "2"],
                 ["inspect", "pypi:vllm==0.1.0", "--index-url", url, "--timeout", "2",
                  "--json"],
                 ["inspect", f"http://alice:{PASSWORD}@127.0.0.1:9/vllm-0.1-py3-none-any.whl",
                  "--timeout", "2"]):
        code = run(argv)
        captured = capsys.readouterr()
        assert code != 0
        no_secret(captured.out, captured.err)
    monkeypatch.setenv("PIP_INDEX_URL", url)
    code = run(["inspect", "pypi:vllm==0.1.0", "--timeout", "2"])
    captured = capsys.readouterr()
    assert code != 0
    no_secret(captured.out, captured.err)


def test_launch_env_and_api_key_never_reach_the_log_store_or_json(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    engine = tmp_path / "engine.py"
    engine.write_text("import os, sys\nprint('args', sys.argv, flush=True)\n"
                      "print('token', os.environ.get('HF_TOKEN'), flush=True)\nsys.exit(3)\n")
    code = run(["launch", "--json", "--timeout", "20", "--env", f"HF_TOKEN={TOKEN}", "--",
                sys.executable, str(engine), "--api-key", API_KEY, "--port", "9"])
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    assert code == 1 and document["outcome"] == "failed"
    log = Path(document["log_path"]).read_text()
    assert "args" in log and "token" in log  # the engine's lines are there, masked
    no_secret(captured.out, captured.err, log, store_text(tmp_path / "cache"))
    assert document["env"]["HF_TOKEN"] == "***"


def test_a_bench_url_with_credentials_is_stored_and_printed_masked(tmp_path: Path) -> None:
    document = {"url": f"http://bob:{PASSWORD}@127.0.0.1:8000", "model": "m",
                "argv": ["--api-key", API_KEY], "results": []}
    with Store(tmp_path / "cache" / "store.sqlite") as store:
        store.put_bench_run("bench-1", document, [(0, "measure", 0, {"error": {
            "message": f"HTTP 401: bad key {API_KEY}"}})])
        stored = store.bench_run("bench-1")
        assert stored is not None and stored["url"] == "http://bob:***@127.0.0.1:8000"
        no_secret(json.dumps(stored), json.dumps(store.bench_requests("bench-1")))
    no_secret(store_text(tmp_path / "cache"))


def test_printed_errors_and_json_are_masked(capsys: pytest.CaptureFixture[str]) -> None:
    from servewise.cli._common import emit_json, say

    say("error", "red", f"cannot reach https://u:{PASSWORD}@host/x with --hf-token {TOKEN}")
    emit_json({"env": {"HF_TOKEN": TOKEN}, "argv": ["serve", "--api-key", API_KEY]})
    captured = capsys.readouterr()
    no_secret(captured.out, captured.err)
    assert "u:***@host" in captured.err and '"HF_TOKEN": "***"' in captured.out


@pytest.mark.parametrize("fmt", ["vllm", "markdown"])
def test_check_prints_commands_with_secrets_masked(capsys: pytest.CaptureFixture[str],
                                                   fmt: str) -> None:
    run(["check", "llama-3.1-8b-instruct", "--gpu", "h100:1", "--format", fmt, "--",
         "--api-key", "sk-proj-abcdefghijklmnop1234"])
    out = capsys.readouterr().out
    assert "--api-key" in out and "abcdefghijklmnop1234" not in out


def test_launch_dry_run_prints_secrets_masked(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["launch", "--dry-run", "--", "vllm", "serve", "m", "--api-key",
                "sk-proj-abcdefghijklmnop1234"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("vllm serve m --api-key") and "abcdefghijklmnop1234" not in out
