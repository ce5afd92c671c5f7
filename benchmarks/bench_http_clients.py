"""Which HTTP client reads SSE streams fastest on one core: httpx or aiohttp.

The synthetic server of ``tests/support/sse_server.py`` runs pinned to one core and sends
``--streams`` concurrent streams of ``--tokens`` one-token chunks as fast as it can; this
process is pinned to the other core and reads them, once per client, ``--runs`` times each
(median reported). Clients:

* ``httpx``: ``AsyncClient.stream`` + ``aiter_lines()``, counting ``data:`` lines;
* ``aiohttp lines``: ``ClientSession.post`` + ``async for line in response.content``;
* ``servewise``: :class:`servewise.bench.client.StreamClient` — aiohttp raw pieces, one
  timestamp per piece, the SSE decoder and the JSON chunk parser: the whole hot path.

Usage::

    .venv/bin/python benchmarks/bench_http_clients.py [--streams 256] [--tokens 400] [--runs 3]
        [--json-out FILE]

It prints a table and writes JSON (``--json-out``, default ``bench_http_clients.json``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Coroutine
from pathlib import Path

import aiohttp
import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from servewise.bench.client import ClientOptions, Outgoing, StreamClient  # noqa: E402
from support.sse_server import Behaviour, start_sse_server  # noqa: E402


def _body(tokens: int) -> bytes:
    return json.dumps({"model": "synthetic", "prompt": "hi", "max_tokens": tokens,
                       "stream": True}).encode()


async def read_httpx(url: str, streams: int, tokens: int) -> int:
    """Lines starting with ``data:`` read by httpx."""
    limits = httpx.Limits(max_connections=streams, max_keepalive_connections=streams)
    async with httpx.AsyncClient(limits=limits, timeout=60) as client:

        async def one() -> int:
            count = 0
            async with client.stream("POST", url, content=_body(tokens),
                                     headers={"Content-Type": "application/json"}) as resp:
                async for line in resp.aiter_lines():
                    if line.startswith("data:"):
                        count += 1
            return count

        return sum(await asyncio.gather(*(one() for _ in range(streams))))


async def read_aiohttp(url: str, streams: int, tokens: int) -> int:
    """Lines starting with ``data:`` read by aiohttp's line iterator."""
    connector = aiohttp.TCPConnector(limit=streams)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def one() -> int:
            count = 0
            async with session.post(url, data=_body(tokens),
                                    headers={"Content-Type": "application/json"}) as resp:
                async for line in resp.content:
                    if line.startswith(b"data:"):
                        count += 1
            return count

        return sum(await asyncio.gather(*(one() for _ in range(streams))))


async def read_servewise(url: str, streams: int, tokens: int) -> int:
    """Events read by servewise's client (decoded and parsed)."""
    async with StreamClient(ClientOptions(url, limit=streams)) as client:
        records = await asyncio.gather(*(
            client.send(Outgoing(i, "measure", f"b-{i}", _body(tokens), tokens, None))
            for i in range(streams)))
        assert all(r.ok for r in records), [r.error for r in records if r.error][:3]
        return client.chunks


CLIENTS: dict[str, Callable[[str, int, int], Coroutine[None, None, int]]] = {
    "httpx": read_httpx,
    "aiohttp lines": read_aiohttp,
    "servewise": read_servewise,
}


def main() -> None:
    """Run every client ``--runs`` times; print and write the medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=256)
    parser.add_argument("--tokens", type=int, default=400)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json-out", default="bench_http_clients.json")
    args = parser.parse_args()
    cores = sorted(os.sched_getaffinity(0))
    client_cpu, server_cpu = cores[0], cores[-1]
    os.sched_setaffinity(0, {client_cpu})
    results: dict[str, list[float]] = {name: [] for name in CLIENTS}
    busy: dict[str, list[float]] = {name: [] for name in CLIENTS}
    behaviour = Behaviour(ttft_s=0.0, itl_s=0.0)
    with start_sse_server(behaviour, cpu=server_cpu) as server:
        url = f"{server.base_url}/v1/completions"
        for _ in range(args.runs):
            for name, read in CLIENTS.items():
                begin, cpu = time.perf_counter(), time.process_time()
                lines = asyncio.run(read(url, args.streams, args.tokens))
                elapsed = time.perf_counter() - begin
                results[name].append(lines / elapsed)
                busy[name].append((time.process_time() - cpu) / elapsed)
                server.reset()
    load = os.getloadavg()
    print(f"{args.streams} streams x {args.tokens} chunks; client on CPU {client_cpu}, server "
          f"on CPU {server_cpu}; load average {load[0]:.2f}")
    print(f"{'client':<16}{'chunks/s (median)':>20}{'client CPU busy':>17}  runs")
    for name, rates in results.items():
        runs = ", ".join(f"{r:,.0f}" for r in rates)
        print(f"{name:<16}{statistics.median(rates):>20,.0f}"
              f"{statistics.median(busy[name]):>17.0%}  {runs}")
    Path(args.json_out).write_text(json.dumps({
        "date": time.strftime("%Y-%m-%d"), "machine": platform.platform(),
        "python": platform.python_version(), "load_average": load, "streams": args.streams,
        "tokens": args.tokens, "chunks_per_s": {k: statistics.median(v)
                                                 for k, v in results.items()},
        "client_cpu_busy": {k: statistics.median(v) for k, v in busy.items()},
        "runs": results}, indent=2) + "\n")


if __name__ == "__main__":
    main()
