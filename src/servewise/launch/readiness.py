"""Readiness, step by step: the port answers, ``/health``, ``/v1/models``, SGLang's
``/health_generate``.

:class:`ReadinessProbe` is polled by the launcher; each :meth:`ReadinessProbe.step` tries the
current stage once (each HTTP call bounded by a short timeout) and moves on when it passes.
``stage`` says how far the engine got, so a launch that is not ready in time says where it
stuck.
"""

from __future__ import annotations

import socket
from typing import Any

import httpx

__all__ = ["STAGES", "ReadinessProbe", "free_port", "port_free"]

STAGES = ("process", "port", "health", "models", "health_generate", "ready")
"""The stages in order; ``process``: alive, nothing answers yet."""
_CALL_TIMEOUT = 5.0
#: SGLang's /health_generate runs a one-token generation: it may take longer.
_GENERATE_TIMEOUT = 30.0


def port_free(host: str, port: int) -> bool:
    """Whether nothing listens on ``host:port`` (a bind succeeds)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        # Connections in TIME_WAIT are no listener: only a live one makes the bind fail.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def free_port(host: str = "127.0.0.1") -> int:
    """A port on ``host`` that was free a moment ago (for ``{port}``)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


class ReadinessProbe:
    """Polls one server through the stages; ``stage`` is the first one not yet passed."""

    def __init__(self, host: str, port: int, engine: str | None) -> None:
        self.host, self.port, self.engine = host, port, engine
        self.stage = "port"
        self.models: list[str] = []
        self.last_status: str | None = None
        """What the last failed call got (``GET /health: 503``), for the report."""
        self.missing_route: str | None = None
        """The route the last call found absent (a 404), e.g. ``/health``."""
        bracketed = f"[{host}]" if ":" in host else host
        self._client = httpx.Client(base_url=f"http://{bracketed}:{port}", timeout=_CALL_TIMEOUT,
                                    trust_env=False)

    def close(self) -> None:
        """Release the HTTP connection pool."""
        self._client.close()

    def step(self) -> bool:
        """Try the current stage once; True when the server is ready."""
        if self.stage == "port":
            if not self._connects():
                return False
            self.stage = "health"
        if self.stage == "health":
            if not self._ok("/health"):
                return False
            self.stage = "models"
        if self.stage == "models":
            data = self._json("/v1/models")
            if data is None:
                return False
            self.models = [str(item.get("id")) for item in data.get("data", [])
                           if isinstance(item, dict)]
            self.stage = "health_generate" if self.engine == "sglang" else "ready"
        if self.stage == "health_generate":
            if not self._ok("/health_generate", timeout=_GENERATE_TIMEOUT):
                return False
            self.stage = "ready"
        return self.stage == "ready"

    def _connects(self) -> bool:
        try:
            with socket.create_connection((self.host, self.port), timeout=1.0):
                return True
        except OSError as error:
            self.last_status = f"connect {self.host}:{self.port}: {error.strerror or error}"
            return False

    def _get(self, path: str, timeout: float = _CALL_TIMEOUT) -> httpx.Response | None:
        try:
            response = self._client.get(path, timeout=timeout)
        except httpx.HTTPError as error:
            self.last_status = f"GET {path}: {type(error).__name__}"
            return None
        if response.status_code != 200:
            self.last_status = f"GET {path}: {response.status_code}"
            self.missing_route = path if response.status_code == 404 else None
            return None
        self.missing_route = None
        return response

    def timeout_hint(self, log_path: object) -> str:
        """What to do when the server was not ready in time, from where it stuck.

        A 404 is an answer: something listens on the port but has no such route. vLLM and
        SGLang serve ``/health`` and ``/v1/models`` from the moment their API server
        listens, so a longer wait will not help: the port is another server's, the engine is
        another one, or a proxy in front of it does not pass the route."""
        if self.missing_route is not None:
            return (f"the server on port {self.port} answers but has no {self.missing_route} "
                    "route: the wrong port (another server listens there), an engine that is "
                    "not vLLM or SGLang, or a proxy that does not pass the route; check "
                    f"`curl -i http://{self.host}:{self.port}{self.missing_route}` and the "
                    f"log {log_path}")
        return f"raise --timeout if the engine is only slow; the log is {log_path}"

    def _ok(self, path: str, timeout: float = _CALL_TIMEOUT) -> bool:
        return self._get(path, timeout) is not None

    def _json(self, path: str) -> dict[str, Any] | None:
        response = self._get(path)
        if response is None:
            return None
        try:
            data = response.json()
        except ValueError:
            self.last_status = f"GET {path}: not JSON"
            return None
        return data if isinstance(data, dict) else None
