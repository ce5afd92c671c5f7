"""Small in-process HTTP servers on 127.0.0.1 for tests: files with or without range support,
a PEP 503/691 package index, and a fake registry for faults the real one cannot produce.

Each runs a ``ThreadingHTTPServer`` on a free port in a daemon thread and counts the body
bytes it sends, so tests can check what a client transferred.
"""

from __future__ import annotations

import contextlib
import hashlib
import html
import json
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_RANGE_RE = re.compile(r"^bytes=(\d*)-(\d*)$")


@dataclass
class Served:
    """What a test server holds and has sent."""

    files: dict[str, bytes] = field(default_factory=dict)
    """Path (``/x.whl``) → body."""
    ranges: bool = True
    sent_bytes: int = 0
    requests: list[tuple[str, str, str]] = field(default_factory=list)
    """``(method, path, Range header)`` of each request."""
    handler: Callable[[BaseHTTPRequestHandler, Served], bool] | None = None
    """Called first; returns True when it answered the request itself."""
    lock: threading.Lock = field(default_factory=threading.Lock)


class _Handler(BaseHTTPRequestHandler):
    served: Served
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def send_body(self, status: int, body: bytes, headers: dict[str, str]) -> None:
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
            with self.served.lock:
                self.served.sent_bytes += len(body)

    def _answer(self) -> None:
        served = self.served
        with served.lock:
            served.requests.append((self.command, self.path, self.headers.get("Range", "")))
        if served.handler is not None and served.handler(self, served):
            return
        path = self.path.split("?", 1)[0]
        if path not in served.files:
            self.send_body(404, b"not found", {"Content-Type": "text/plain"})
            return
        body = served.files[path]
        kind = "text/html" if path.endswith("/") else "application/octet-stream"
        headers = {"Content-Type": kind}
        wanted = self.headers.get("Range")
        if served.ranges:
            headers["Accept-Ranges"] = "bytes"
        if wanted and served.ranges:
            match = _RANGE_RE.match(wanted)
            if match is None or match.groups() == ("", ""):
                self.send_body(416, b"", headers)
                return
            start_s, end_s = match.groups()
            if start_s == "":
                start, end = max(0, len(body) - int(end_s)), len(body) - 1
            else:
                start, end = int(start_s), min(int(end_s or len(body) - 1), len(body) - 1)
            if start >= len(body):
                self.send_body(416, b"", {**headers, "Content-Range": f"bytes */{len(body)}"})
                return
            headers["Content-Range"] = f"bytes {start}-{end}/{len(body)}"
            self.send_body(206, body[start : end + 1], headers)
            return
        self.send_body(200, body, headers)

    do_GET = _answer
    do_HEAD = _answer
    do_POST = _answer


@contextlib.contextmanager
def serve(served: Served) -> Iterator[str]:
    """Serve ``served`` on 127.0.0.1; yield the base URL (``http://127.0.0.1:PORT``)."""
    handler = type("Handler", (_Handler,), {"served": served})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def index_pages(project: str, wheels: dict[str, bytes], base: str, *,
                upload_times: dict[str, str] | None = None) -> dict[str, bytes]:
    """PEP 691 JSON and PEP 503 HTML pages for ``project``, files under ``/files/``."""
    times = upload_times or {}
    files = []
    anchors = []
    for name, data in wheels.items():
        sha = hashlib.sha256(data).hexdigest()
        entry: dict[str, Any] = {"filename": name, "url": f"{base}/files/{name}",
                                 "hashes": {"sha256": sha}, "size": len(data)}
        if name in times:
            entry["upload-time"] = times[name]
        files.append(entry)
        anchors.append(f'<a href="/files/{html.escape(name)}#sha256={sha}">{html.escape(name)}</a>')
    page = {"meta": {"api-version": "1.1"}, "name": project, "files": files}
    return {
        f"/json/{project}/": json.dumps(page).encode(),
        f"/html/{project}/": ("<!DOCTYPE html><html><body>" + "<br>".join(anchors)
                              + "</body></html>").encode(),
        **{f"/files/{name}": data for name, data in wheels.items()},
    }


def index_handler(handler: BaseHTTPRequestHandler, served: Served) -> bool:
    """Serve ``/json/…`` pages with the PEP 691 content type."""
    path = handler.path.split("?", 1)[0]
    if path.startswith("/json/") and path in served.files:
        body = served.files[path]
        handler.send_response(200)
        handler.send_header("Content-Type", "application/vnd.pypi.simple.v1+json")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)
        return True
    return False
