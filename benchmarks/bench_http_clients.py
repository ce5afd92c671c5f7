"""Which HTTP client reads SSE streams best on one core: httpx, aiohttp or servewise's own.

The synthetic server of ``tests/support/sse_server.py`` runs pinned to one core and sends as
fast as it can; this process is pinned to the other and reads, once per client, ``--runs``
times each (median reported). Two measurements:

* **chunks/s**: ``--streams`` concurrent streams of ``--tokens`` one-token chunks;
* **CPU µs per request**: ``--rounds`` rounds of ``--streams`` concurrent one-token answers —
  what it costs the client to send a request and take in a short answer (process CPU time
  divided by requests), which is what delays other streams' chunks when many requests end and
  restart together.

Clients:

* ``httpx``: ``AsyncClient.stream`` + ``aiter_lines()``, counting ``data:`` lines;
* ``aiohttp lines``: ``ClientSession.post`` + ``async for line in response.content``;
* ``servewise``: :class:`servewise.bench.client.StreamClient` — the hand-written HTTP/1.1
  client with the SSE decoder and the JSON chunk parser: the whole hot path.

Usage::

    .venv/bin/python benchmarks/bench_http_clients.py [--streams 256] [--tokens 400]
        [--rounds 8] [--runs 3] [--json-out FILE]

It prints a table and writes JSON (``--json-out``, default ``.cache/bench_http_clients.json``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
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

from _startup import bytecode_ready  # noqa: E402

from servewise.bench.client import ClientOptions, Outgoing, StreamClient  # noqa: E402
from support.sse_server import Behaviour, start_sse_server  # noqa: E402


def _body(tokens: int) -> bytes:
    return json.dumps({"model": "synthetic", "prompt": "hi", "max_tokens": tokens,
                       "stream": True}).encode()


async def read_httpx(url: str, streams: int, tokens: int, rounds: int) -> int:
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

        return sum([sum(await asyncio.gather(*(one() for _ in range(streams))))
                    for _ in range(rounds)])


async def read_aiohttp(url: str, streams: int, tokens: int, rounds: int) -> int:
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

        return sum([sum(await asyncio.gather(*(one() for _ in range(streams))))
                    for _ in range(rounds)])


async def read_servewise(url: str, streams: int, tokens: int, rounds: int) -> int:
    """Events read by servewise's client (decoded and parsed)."""
    async with StreamClient(ClientOptions(url, limit=streams)) as client:
        for _ in range(rounds):
            records = await asyncio.gather(*(
                client.send(Outgoing(i, "measure", f"b-{i}", _body(tokens), tokens, None))
                for i in range(streams)))
            assert all(r.ok for r in records), [r.error for r in records if r.error][:3]
        return client.chunks


CLIENTS: dict[str, Callable[[str, int, int, int], Coroutine[None, None, int]]] = {
    "httpx": read_httpx,
    "aiohttp lines": read_aiohttp,
    "servewise": read_servewise,
}


def _measure(read: Callable[[str, int, int, int], Coroutine[None, None, int]], url: str,
             streams: int, tokens: int, rounds: int) -> tuple[float, float]:
    """``(events per second, CPU seconds per request)`` for ``rounds`` rounds of streams
    on one session (its connections kept alive from round to round)."""
    begin, cpu = time.perf_counter(), time.process_time()
    events = asyncio.run(read(url, streams, tokens, rounds))
    elapsed, used = time.perf_counter() - begin, time.process_time() - cpu
    return events / elapsed, used / (rounds * streams)


def main() -> None:
    """Run every client ``--runs`` times; print and write the medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=256)
    parser.add_argument("--tokens", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json-out", default=str(ROOT / ".cache" / "bench_http_clients.json"))
    args = parser.parse_args()
    bytecode_ready()
    cores = sorted(os.sched_getaffinity(0))
    client_cpu, server_cpu = cores[0], cores[-1]
    os.sched_setaffinity(0, {client_cpu})
    # Like the server: a raised priority when the user may (root), so other jobs disturb less.
    with contextlib.suppress(OSError):
        os.setpriority(os.PRIO_PROCESS, 0, -10)
    rates: dict[str, list[float]] = {name: [] for name in CLIENTS}
    per_request: dict[str, list[float]] = {name: [] for name in CLIENTS}
    loads = [os.getloadavg()[0]]
    with start_sse_server(Behaviour(ttft_s=0.0, itl_s=0.0), cpu=server_cpu) as server:
        url = f"{server.base_url}/v1/completions"
        for _ in range(args.runs):
            for name, read in CLIENTS.items():
                rates[name].append(_measure(read, url, args.streams, args.tokens, 1)[0])
                server.reset()
                per_request[name].append(_measure(read, url, args.streams, 1, args.rounds)[1])
                server.reset()
                loads.append(os.getloadavg()[0])
    print(f"{args.streams} streams x {args.tokens} chunks, and {args.rounds} x {args.streams} "
          f"one-token requests; client on CPU {client_cpu}, server on CPU {server_cpu}; "
          f"1-min load average {min(loads):.2f}..{max(loads):.2f}")
    print(f"{'client':<16}{'chunks/s':>12}{'CPU us/request':>16}   runs (chunks/s; us/request)")
    for name in CLIENTS:
        runs = ", ".join(f"{r:,.0f}" for r in rates[name])
        costs = ", ".join(f"{1e6 * c:.0f}" for c in per_request[name])
        print(f"{name:<16}{statistics.median(rates[name]):>12,.0f}"
              f"{1e6 * statistics.median(per_request[name]):>16.0f}   {runs}; {costs}")
    Path(args.json_out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json_out).write_text(json.dumps({
        "date": time.strftime("%Y-%m-%d"), "machine": platform.platform(),
        "python": platform.python_version(), "load_average_range": [min(loads), max(loads)],
        "streams": args.streams, "tokens": args.tokens, "rounds": args.rounds,
        "chunks_per_s": {k: statistics.median(v) for k, v in rates.items()},
        "cpu_us_per_request": {k: 1e6 * statistics.median(v) for k, v in per_request.items()},
        "runs": {"chunks_per_s": rates, "cpu_s_per_request": per_request}}, indent=2) + "\n")


if __name__ == "__main__":
    main()
