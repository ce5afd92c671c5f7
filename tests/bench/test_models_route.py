"""``bench`` refuses a server that has no ``/v1/models`` before the first request (issue 28,
item 9): a 404 there is another server (wrong port, a proxy, not an OpenAI-compatible
engine), and a run against it would be stored as junk."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest
from typer.testing import CliRunner

from servewise.cli import app


class _NotFound(BaseHTTPRequestHandler):
    """Answers 404 to everything, as a web server or proxy on the wrong port does."""

    hits: ClassVar[list[str]] = []

    def _answer(self) -> None:
        self.hits.append(f"{self.command} {self.path}")
        body = b'{"detail":"Not Found"}'
        self.send_response(404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


@pytest.fixture()
def not_found() -> Iterator[str]:
    _NotFound.hits = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _NotFound)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_404_on_v1_models_is_refused_before_the_run(
        not_found: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERVEWISE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("SERVEWISE_DATA_DIR", str(tmp_path / "data"))
    result = CliRunner().invoke(app, ["bench", not_found, "--model", "m", "--isl", "8",
                                      "--osl", "2", "--concurrency", "1", "--json"])
    assert result.exit_code != 0
    error = json.loads(result.stdout)
    text = (error["message"] + " " + str(error.get("hint"))).lower()
    assert "/v1/models" in text and "404" in text
    assert "port" in text
    # nothing but the models route was asked, and no run was stored
    assert _NotFound.hits == ["GET /v1/models"]
    stored = list((tmp_path / "cache").rglob("bench-*")) + list(
        (tmp_path / "data").rglob("bench-*"))
    assert not stored
