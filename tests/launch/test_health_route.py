"""A launch whose port answers 404 on ``/health`` says so, not "raise --timeout" (issue 28,
item 9): the server answers, it has no such route: wrong port, another engine or a proxy."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

from servewise.launch.run import EngineRun, LaunchSpec

NOT_AN_ENGINE = """
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer
class H(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(404); self.send_header("Content-Length", "0"); self.end_headers()
    def log_message(self, *args):
        pass
print("listening", flush=True)
HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
"""


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_a_health_404_names_the_missing_route_not_the_timeout(tmp_path: Path) -> None:
    port = _port()
    spec = LaunchSpec(argv=(sys.executable, "-c", NOT_AN_ENGINE, str(port)), engine="vllm",
                      port=port, log_path=tmp_path / "engine.log", timeout_s=3.0, grace_s=2.0)
    with EngineRun(spec) as engine:
        result = engine.wait_ready()
    assert result.outcome == "timeout" and result.stage == "health"
    assert "GET /health: 404" in result.message
    hint = result.hint or ""
    assert "no /health route" in hint and "wrong port" in hint and "proxy" in hint
    assert "raise --timeout" not in hint
