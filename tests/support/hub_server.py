"""A Hugging Face Hub-like HTTP server on 127.0.0.1, for tests and benchmarks.

It serves repositories held in memory (or files on disk) the way the Hub does for
``huggingface_hub`` and the tools built on it: ``GET /api/models/ORG/NAME[/revision/REV]``
(model info with ``siblings`` and sizes), ``GET /api/models/ORG/NAME/tree/REV`` (the file
list), and ``GET|HEAD /ORG/NAME/resolve/REV/FILE`` with ``Range`` support (206 and
``Content-Range``), ``ETag`` and ``X-Repo-Commit`` headers. Every request is counted per
kind, so a test can assert how many ranged reads a client made. Repositories can require a
token (401 without it) and files can be made missing or short.
"""

from __future__ import annotations

import hashlib
import json
import re
import struct
import threading
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlparse


@dataclass
class HubRepo:
    """A repository: file name → bytes (or a callable size + reader for large fake files)."""

    files: dict[str, bytes]
    sha: str = "0123456789abcdef0123456789abcdef01234567"
    token: str | None = None
    """When set, requests without ``Authorization: Bearer TOKEN`` get 401."""
    sizes: dict[str, int] = field(default_factory=dict)
    """Declared sizes that differ from the bytes held (a sparse file: header only)."""

    def size(self, name: str) -> int:
        """The file's size as the Hub reports it."""
        return self.sizes.get(name, len(self.files[name]))


def safetensors_bytes(tensors: Mapping[str, tuple[str, list[int], int]],
                      metadata: Mapping[str, str] | None = None, *, data: bool = True,
                      pad_header_to: int = 0) -> tuple[bytes, int]:
    """A safetensors file: ``name → (dtype, shape, nbytes)``; returns (bytes, full size).

    With ``data=False`` only the prefix and header are returned (the full size is still
    reported), which keeps a 48-shard fake checkpoint small in memory.
    """
    header: dict[str, Any] = {}
    offset = 0
    for name, (dtype, shape, nbytes) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
    if metadata:
        header["__metadata__"] = dict(metadata)
    text = json.dumps(header, separators=(",", ":")).encode()
    if len(text) < pad_header_to:
        text += b" " * (pad_header_to - len(text))
    prefix = struct.pack("<Q", len(text)) + text
    size = len(prefix) + offset
    return (prefix + bytes(offset) if data else prefix), size


class HubServer:
    """The running server: its URL, repositories and request counts."""

    def __init__(self, repos: dict[str, HubRepo]) -> None:
        self.repos = repos
        self.counts: Counter[str] = Counter()
        self.ranges: Counter[str] = Counter()
        self.lock = threading.Lock()
        self.url = ""

    def count(self, kind: str, file: str | None = None) -> None:
        """Count one request."""
        with self.lock:
            self.counts[kind] += 1
            if kind == "range" and file is not None:
                self.ranges[file] += 1

    def reset(self) -> None:
        """Forget the counts."""
        with self.lock:
            self.counts.clear()
            self.ranges.clear()


def _handler(hub: HubServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            return

        def _send(self, status: int, body: bytes, headers: Mapping[str, str] | None = None,
                  head: bool = False) -> None:
            self.send_response(status)
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if not (head or self.command == "HEAD"):
                self.wfile.write(body)

        def _json(self, status: int, data: Any) -> None:
            self._send(status, json.dumps(data).encode(), {"Content-Type": "application/json"})

        def _repo(self, repo_id: str) -> HubRepo | None:
            repo = hub.repos.get(repo_id)
            if repo is None:
                self._json(404, {"error": "Repository not found"})
                return None
            if repo.token is not None:
                auth = self.headers.get("Authorization", "")
                if auth != f"Bearer {repo.token}":
                    self._send(401, b'{"error":"Invalid credentials"}',
                               {"Content-Type": "application/json",
                                "X-Error-Code": "GatedRepo"})
                    return None
            return repo

        def do_HEAD(self) -> None:
            self._serve(head=True)

        def do_GET(self) -> None:
            self._serve(head=False)

        def _serve(self, head: bool) -> None:
            path = unquote(urlparse(self.path).path)
            api = re.fullmatch(r"/api/models/([^/]+/[^/]+)(?:/revision/([^/]+))?/?", path)
            tree = re.fullmatch(r"/api/models/([^/]+/[^/]+)/tree/([^/]+)(?:/.*)?", path)
            resolve = re.fullmatch(r"/([^/]+/[^/]+)/resolve/([^/]+)/(.+)", path)
            if tree:
                hub.count("api")
                repo = self._repo(tree.group(1))
                if repo is not None:
                    self._json(200, [{"type": "file", "path": name, "size": repo.size(name),
                                      "oid": hashlib.sha1(name.encode()).hexdigest()}
                                     for name in sorted(repo.files)])
                return
            if api:
                hub.count("api")
                repo = self._repo(api.group(1))
                if repo is not None:
                    self._json(200, {
                        "id": api.group(1), "modelId": api.group(1), "sha": repo.sha,
                        "private": False, "gated": bool(repo.token),
                        "siblings": [{"rfilename": name, "size": repo.size(name)}
                                     for name in sorted(repo.files)],
                    })
                return
            if resolve:
                repo = self._repo(resolve.group(1))
                if repo is None:
                    return
                name = resolve.group(3)
                if name not in repo.files:
                    self._send(404, b"Entry not found", {"X-Error-Code": "EntryNotFound"})
                    return
                self._file(repo, name, head)
                return
            self._json(404, {"error": "not found"})

        def _file(self, repo: HubRepo, name: str, head: bool) -> None:
            data = repo.files[name]
            size = repo.size(name)
            common = {"ETag": f'"{hashlib.sha1(name.encode()).hexdigest()}"',
                      "X-Repo-Commit": repo.sha, "Accept-Ranges": "bytes",
                      "Content-Type": "application/octet-stream"}
            wanted = self.headers.get("Range")
            match = re.fullmatch(r"bytes=(\d+)-(\d*)", wanted or "")
            if head:
                hub.count("head")
                self.send_response(200)
                for key, value in common.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(size))
                self.end_headers()
                return
            if match is None:
                hub.count("get")
                self._send(200, data, common)
                return
            hub.count("range", name)
            start = int(match.group(1))
            end = min(int(match.group(2)) if match.group(2) else size - 1, size - 1)
            if start >= size:
                self._send(416, b"", {"Content-Range": f"bytes */{size}"})
                return
            body = data[start:end + 1]
            body += bytes(end + 1 - start - len(body))  # sparse files read as zeros
            self._send(206, body, {**common, "Content-Range": f"bytes {start}-{end}/{size}"})

    return Handler


@contextmanager
def run_hub(repos: dict[str, HubRepo]) -> Iterator[HubServer]:
    """Serve ``repos`` on 127.0.0.1 (a free port) for the duration of the block."""
    hub = HubServer(repos)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(hub))
    server.daemon_threads = True
    hub.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield hub
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def sharded_repo(shards: int, tensors_per_shard: int, *, config: Mapping[str, Any],
                 tensor_bytes: int = 2 * 4096 * 4096, header_pad: int = 0) -> HubRepo:
    """A fake sharded checkpoint: headers real, data sparse (sizes reported, not held)."""
    files: dict[str, bytes] = {"config.json": json.dumps(dict(config)).encode()}
    sizes: dict[str, int] = {}
    weight_map: dict[str, str] = {}
    total = 0
    layers = int(config.get("num_hidden_layers", 1))
    for shard in range(shards):
        name = f"model-{shard + 1:05d}-of-{shards:05d}.safetensors"
        tensors = {}
        for index in range(tensors_per_shard):
            layer = (shard * tensors_per_shard + index) % max(layers, 1)
            tensor = f"model.layers.{layer}.mlp.experts.{shard * tensors_per_shard + index}." \
                     "down_proj.weight"
            tensors[tensor] = ("BF16", [4096, tensor_bytes // 8192], tensor_bytes)
            weight_map[tensor] = name
        data, size = safetensors_bytes(tensors, {"format": "pt"}, data=False,
                                       pad_header_to=header_pad)
        files[name] = data
        sizes[name] = size
        total += size - len(data)
    files["model.safetensors.index.json"] = json.dumps(
        {"metadata": {"total_size": total}, "weight_map": weight_map}).encode()
    return HubRepo(files, sizes=sizes)
