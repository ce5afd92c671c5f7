"""The streaming client's failure paths and per-chunk counting, without a server's help."""

from __future__ import annotations

import asyncio
import dataclasses
import socket
import time
from collections.abc import Iterator

import pytest

from servewise.bench.client import ClientOptions, Outgoing, StreamClient
from servewise.bench.load import LoadLevel
from servewise.bench.records import RequestRecord
from servewise.bench.run import BenchConfig, run_bench
from servewise.bench.token_counts import CountSource, account
from servewise.bench.workload import WorkloadSpec
from servewise.errors import SourceError

REQUEST = Outgoing(0, "measure", "t-0", b'{"model":"m","prompt":"x","max_tokens":2,"stream":true}',
                   2, None)


def send_once(options: ClientOptions) -> RequestRecord:
    async def go() -> RequestRecord:
        async with StreamClient(options) as client:
            return await client.send(REQUEST)
    return asyncio.run(go())


@pytest.fixture
def closed_port() -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]  # bound, never listening: connections are refused


def test_connection_refused_is_a_connect_error(closed_port: int) -> None:
    record = send_once(ClientOptions(f"http://127.0.0.1:{closed_port}/v1/completions"))
    assert record.error is not None and record.error.kind == "connect"


def test_run_bench_says_the_server_is_unreachable(closed_port: int) -> None:
    config = BenchConfig(url=f"http://127.0.0.1:{closed_port}", model="m",
                         workload=WorkloadSpec(isl=8, osl=2),
                         levels=(LoadLevel("concurrency", 1),), num_prompts=1)
    with pytest.raises(SourceError) as info:
        run_bench(config)
    assert "cannot reach" in info.value.message and info.value.hint


def test_a_server_that_never_answers_is_a_read_timeout() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)  # accepts in the kernel, never reads or answers
        port = listener.getsockname()[1]
        begin = time.monotonic()
        record = send_once(ClientOptions(f"http://127.0.0.1:{port}/v1/completions",
                                         read_timeout_s=0.3))
    assert record.error is not None and record.error.kind == "read_timeout"
    assert time.monotonic() - begin < 5


def settle_counts(times: list[float], texts: list[str], ids: list[int], cumulative: list[int]
                  ) -> tuple[tuple[float, ...], tuple[int, ...], CountSource]:
    """The per-chunk counts of an answer without a final usage figure."""
    found = account(times, texts, ids, cumulative, None)
    return found.times, found.counts, found.source


def test_settle_counts_prefers_token_ids_then_usage_then_chunks() -> None:
    times = [1.0, 2.0, 3.0, 4.0]
    texts = ["", " a b", "", " c"]
    # Token ids: the role chunk (0 ids) and an empty chunk drop out.
    assert settle_counts(times, texts, [0, 2, 1, 1], [-1] * 4) == ((2.0, 3.0, 4.0), (2, 1, 1),
                                                                  "token_ids")
    # Cumulative usage: deltas; a chunk with text held back but tokens counted stays.
    assert settle_counts(times, texts, [-1] * 4, [0, 2, 3, 4]) == ((2.0, 3.0, 4.0), (2, 1, 1),
                                                                  "continuous_usage")
    assert settle_counts(times, texts, [-1] * 4, [-1] * 4) == ((2.0, 4.0), (1, 1), "chunks")


def test_the_overall_timeout_stops_a_level_and_keeps_what_finished() -> None:
    from support.sse_server import Behaviour, start_sse_server

    # A level that finishes within the deadline is untouched; one whose streams stall for
    # 30 s is stopped at the deadline.
    with start_sse_server(Behaviour(ttft_s=0.01, itl_s=0.002)) as server:
        config = BenchConfig(url=server.base_url, model="synthetic",
                             workload=WorkloadSpec(isl=8, osl=3),
                             levels=(LoadLevel("concurrency", 1), LoadLevel("concurrency", 2)),
                             num_prompts=2, warmup=0, timeout_s=2.5)
        first = run_bench(dataclasses.replace(config, levels=config.levels[:1]))
        assert first.document["stopped"] is None
        begin = time.monotonic()
        with start_sse_server(Behaviour(ttft_s=0.01, itl_s=0.002, stall_after=1,
                                        stall_s=30)) as slow:
            result = run_bench(dataclasses.replace(config, url=slow.base_url,
                                                   levels=(LoadLevel("concurrency", 2),)))
    assert time.monotonic() - begin < 10
    assert result.document["results"] == [] and result.levels == ()
    assert "stopped at the 2.5 s --timeout during" in result.document["stopped"]
    assert result.document["timeouts_s"]["overall"] == 2.5
