"""Pytest plugin: a real OCI registry (Debian's ``docker-registry``) on 127.0.0.1.

The session fixture ``registry`` starts ``/usr/bin/docker-registry serve <config>`` with
filesystem storage in a temporary directory (no auth, deletes enabled, log level warn) on a
free port, waits for ``GET /v2/`` to answer 200, yields a :class:`Registry`, and stops the
process at the end of the session. Tests push images with plain HTTP through
:meth:`Registry.push_blob` and :meth:`Registry.push_manifest`. When the binary is missing the
tests are skipped (``make system-deps`` installs it), or fail under CI.

:func:`start_registry` is the same launcher as a context manager.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from support.engine import free_port, log_tail, missing_dependency, stop_process_group

REGISTRY_BINARY = Path("/usr/bin/docker-registry")
DEFAULT_START_TIMEOUT = 30.0


class RegistryError(RuntimeError):
    """The registry did not start, or refused a push."""


def sha256_digest(data: bytes) -> str:
    """Return the OCI digest (``sha256:<hex>``) of ``data``."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Registry:
    """A running registry reachable over plain HTTP."""

    base_url: str
    """``http://127.0.0.1:<port>``, without a trailing slash."""
    host: str
    """``127.0.0.1:<port>``, as image references name it."""
    storage_dir: Path
    """Root of the registry's filesystem storage."""
    log_path: Path
    """The registry's combined stdout and stderr."""

    def client(self) -> httpx.Client:
        """Return a new HTTP client for this registry (close it, or use it in ``with``)."""
        return httpx.Client(base_url=self.base_url, timeout=30.0)

    def push_blob(self, repo: str, data: bytes) -> str:
        """Upload ``data`` as a blob of ``repo`` (monolithic POST then PUT); return its digest."""
        digest = sha256_digest(data)
        with self.client() as client:
            start = client.post(f"/v2/{repo}/blobs/uploads/")
            if start.status_code != 202 or "Location" not in start.headers:
                raise RegistryError(
                    f"upload start for {repo}: {start.status_code} {start.text[:500]}"
                )
            location = start.headers["Location"]
            sep = "&" if "?" in location else "?"
            done = client.put(
                f"{location}{sep}digest={digest}",
                content=data,
                headers={"Content-Type": "application/octet-stream"},
            )
            if done.status_code != 201:
                raise RegistryError(f"blob PUT for {repo}: {done.status_code} {done.text[:500]}")
        return digest

    def push_manifest(self, repo: str, ref: str, body: bytes, media_type: str) -> str:
        """PUT ``body`` as manifest ``repo:ref`` with ``media_type``; return its digest."""
        with self.client() as client:
            resp = client.put(
                f"/v2/{repo}/manifests/{ref}",
                content=body,
                headers={"Content-Type": media_type},
            )
        if resp.status_code != 201:
            raise RegistryError(f"manifest PUT {repo}:{ref}: {resp.status_code} {resp.text[:500]}")
        digest: str = resp.headers.get("Docker-Content-Digest", sha256_digest(body))
        return digest


def registry_config(storage_dir: Path, port: int) -> str:
    """Return the registry's configuration (JSON, which its YAML parser reads)."""
    config = {
        "version": 0.1,
        "log": {"level": "warn", "accesslog": {"disabled": True}},
        "storage": {
            "filesystem": {"rootdirectory": str(storage_dir)},
            "delete": {"enabled": True},
            "maintenance": {"uploadpurging": {"enabled": False}},
        },
        "http": {"addr": f"127.0.0.1:{port}", "secret": "servewise-tests"},
    }
    return json.dumps(config, indent=2)


@contextlib.contextmanager
def start_registry(
    workdir: Path, binary: Path = REGISTRY_BINARY, timeout: float = DEFAULT_START_TIMEOUT
) -> Iterator[Registry]:
    """Start ``binary serve`` with storage under ``workdir``; yield it once ``/v2/`` is 200."""
    storage = workdir / "storage"
    storage.mkdir(parents=True, exist_ok=True)
    port = free_port()
    config_path = workdir / "config.yml"
    config_path.write_text(registry_config(storage, port))
    log_path = workdir / "registry.log"
    base_url = f"http://127.0.0.1:{port}"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [str(binary), "serve", str(config_path)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=workdir,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + timeout
        with httpx.Client(base_url=base_url, timeout=2.0) as client:
            while True:
                code = process.poll()
                if code is not None:
                    raise RegistryError(
                        f"docker-registry exited with {code}:\n{log_tail(log_path)}"
                    )
                if time.monotonic() > deadline:
                    raise RegistryError(f"docker-registry not ready:\n{log_tail(log_path)}")
                with contextlib.suppress(httpx.TransportError):
                    if client.get("/v2/").status_code == 200:
                        break
                time.sleep(0.1)
        yield Registry(
            base_url=base_url, host=f"127.0.0.1:{port}", storage_dir=storage, log_path=log_path
        )
    finally:
        stop_process_group(process, grace=5.0)


@pytest.fixture(scope="session")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    """Run a docker-registry for the whole session; skip (or fail under CI) when missing."""
    if not REGISTRY_BINARY.exists():
        missing_dependency(
            f"{REGISTRY_BINARY} is missing: run `make system-deps` (Debian docker-registry)"
        )
    try:
        with start_registry(tmp_path_factory.mktemp("registry")) as reg:
            yield reg
    except RegistryError as exc:
        pytest.fail(str(exc), pytrace=False)
