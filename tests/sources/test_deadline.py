"""Every network wait of sources/ keeps the command's deadline.

A socket that accepts and never answers, and one that trickles a byte at a time, against
each source that speaks HTTP: a registry, a package index, a remote wheel, the Hub. Each
ends within its deadline plus a little slack, with a :class:`DeadlineError` naming the host,
what was waited for and what to try; nothing that timed out is tried again. The retry
policy is held too: what a retry can fix (503 with a short Retry-After, a dropped
connection) is retried; a long Retry-After is not waited for.
"""

from __future__ import annotations

import pickle
import time
from http.server import BaseHTTPRequestHandler

import pytest

from servewise.errors import DeadlineError, RateLimitError, RegistryError, UsageError
from servewise.sources import SourceOptions, open_source
from servewise.sources._http import httpx
from servewise.sources.deadline import (
    Deadline,
    Waiting,
    current_deadline,
    deadline_scope,
    send,
)
from servewise.sources.hub import HubReader
from servewise.sources.pypi import open_pypi
from servewise.sources.remote_wheel import open_url
from support.clock import FakeClock
from support.http_servers import Served, serve
from support.silent import elapsed, silent_server, trickle_server

#: Seconds a command may run past its deadline (thread start, connection set-up, exit).
SLACK_S = 2.0


def _check(error: DeadlineError, host: str) -> None:
    assert host in error.message
    assert error.fields["host"] == host
    assert error.fields["waited_for"]
    assert error.hint is not None and "--timeout" in error.hint
    assert error.to_dict()["error"] == "deadline"


def test_registry_that_never_answers_ends_at_the_deadline() -> None:
    with silent_server() as server:
        began = time.monotonic()
        with pytest.raises(DeadlineError) as caught:
            open_source(f"{server.address}/fake/img:1",
                        SourceOptions(deadline=Deadline.start(1.5)))
        assert elapsed(began) < 1.5 + SLACK_S
        _check(caught.value, server.address)
        assert "manifest" in caught.value.fields["waited_for"]
        assert server.accepted == 1  # a timeout is never tried again


def test_the_wait_limit_holds_without_an_overall_deadline() -> None:
    with silent_server() as server:
        began = time.monotonic()
        with pytest.raises(DeadlineError) as caught:
            open_source(f"{server.address}/fake/img:1",
                        SourceOptions(deadline=Deadline.start(None, wait_s=1.0)))
        assert elapsed(began) < 1.0 + SLACK_S
        assert "waited 1.0 s for an answer" in caught.value.message
        assert server.accepted == 1


def test_package_index_that_never_answers() -> None:
    with silent_server() as server:
        began = time.monotonic()
        with pytest.raises(DeadlineError) as caught:
            open_pypi("pypi:vllm==0.33.0", SourceOptions(index_url=server.url + "/simple/",
                                                         deadline=Deadline.start(1.0)))
        assert elapsed(began) < 1.0 + SLACK_S
        _check(caught.value, server.address)
        assert "index page of vllm" in caught.value.fields["waited_for"]


def test_remote_wheel_that_never_answers() -> None:
    with silent_server() as server:
        began = time.monotonic()
        with pytest.raises(DeadlineError) as caught:
            open_url(f"{server.url}/vllm-0.33.0-cp38-abi3-manylinux1_x86_64.whl",
                     SourceOptions(deadline=Deadline.start(1.0)))
        assert elapsed(began) < 1.0 + SLACK_S
        _check(caught.value, server.address)
        assert "zip directory" in caught.value.fields["waited_for"]


def test_a_trickle_of_bytes_does_not_outlast_the_deadline() -> None:
    """Bytes that keep coming reset no timeout: the overall deadline still ends the read."""
    with trickle_server(every_s=0.2) as server:
        began = time.monotonic()
        with pytest.raises(DeadlineError) as caught:
            open_url(f"{server.url}/x-1.0-py3-none-any.whl",
                     SourceOptions(deadline=Deadline.start(1.5)))
        assert elapsed(began) < 1.5 + SLACK_S
        assert "deadline" in caught.value.message
        assert caught.value.fields["timeout_s"] == 1.5


def test_hub_that_never_answers() -> None:
    with silent_server() as server:
        began = time.monotonic()
        with pytest.raises(DeadlineError) as caught:
            HubReader(endpoint=server.url, deadline=Deadline.start(1.0)).read("org/model")
        assert elapsed(began) < 1.0 + SLACK_S
        _check(caught.value, server.address)
        assert "org/model" in caught.value.fields["waited_for"]


def test_progress_is_told_while_a_wait_lasts() -> None:
    told: list[Waiting] = []
    deadline = Deadline.start(1.2, on_wait=told.append, tick_s=0.2)
    with silent_server() as server, pytest.raises(DeadlineError):
        open_source(f"{server.address}/fake/img:1", SourceOptions(deadline=deadline))
    assert len(told) >= 3
    assert all(w.host == server.address and "manifest" in w.what for w in told)
    assert told[-1].waited_s > told[0].waited_s
    assert "gives up after 1.2 s" in told[0].describe()


def test_a_deadline_travels_to_workers_without_its_callback() -> None:
    deadline = Deadline.start(30, on_wait=lambda waiting: None)
    copy = pickle.loads(pickle.dumps(deadline))
    assert copy.expires_at == deadline.expires_at and copy.on_wait is None
    assert copy.wait_s == deadline.wait_s == 30


def test_the_clock_says_what_is_left_and_when_it_is_over() -> None:
    clock = FakeClock()
    deadline = Deadline.start(10, wait_s=60, clock=clock)
    assert deadline.wait_limit() == 10 and deadline.remaining() == 10
    clock.advance(7.5)
    assert deadline.wait_limit() == 2.5 and deadline.allows(2) and not deadline.allows(3)
    deadline.check("h", "x")
    clock.advance(2.5)
    with pytest.raises(DeadlineError, match="after the 10 s deadline") as caught:
        deadline.check("h", "x")
    assert "raise it" in (caught.value.hint or "")
    assert pickle.loads(pickle.dumps(deadline)).remaining() == 0.0


def test_a_retry_pause_past_the_deadline_is_not_taken() -> None:
    served = _flaky([(503, {"Retry-After": "3"}), (503, {"Retry-After": "3"})])
    clock = FakeClock()
    with serve(served) as base, httpx.Client() as client:
        answer = send(client, client.build_request("GET", base + "/x"),
                      Deadline.start(5, clock=clock), host="h", what="x")
    # 3 s fits the 5 s deadline once; the second 3 s would not.
    assert answer.status_code == 503 and clock.slept == [3.0]
    assert len(served.requests) == 2


def test_a_deadline_must_be_positive() -> None:
    with pytest.raises(UsageError, match="more than 0"):
        Deadline.start(0)


def test_the_current_deadline_is_the_scope_s() -> None:
    mine = Deadline.start(5)
    with deadline_scope(mine):
        assert current_deadline() is mine
    assert current_deadline() is not mine


# -- the retry policy ------------------------------------------------------------------

def _flaky(statuses: list[tuple[int, dict[str, str]]]) -> Served:
    """A server answering each status in turn, then 200."""

    def handle(h: BaseHTTPRequestHandler, served: Served) -> bool:
        if statuses:
            status, headers = statuses.pop(0)
            h.send_body(status, b"busy", headers)  # type: ignore[attr-defined]
        else:
            h.send_body(200, b"fine", {})  # type: ignore[attr-defined]
        return True

    return Served(handler=handle)


def test_a_short_retry_after_is_waited_for() -> None:
    served = _flaky([(503, {"Retry-After": "0"}), (429, {"Retry-After": "0.2"})])
    clock = FakeClock()
    with serve(served) as base, httpx.Client() as client:
        answer = send(client, client.build_request("GET", base + "/x"),
                      Deadline.start(10, clock=clock), host="h", what="x")
    assert answer.status_code == 200 and len(served.requests) == 3
    assert clock.slept == [0.0, 0.2]


def test_a_retry_after_past_the_deadline_is_not_waited_for() -> None:
    served = _flaky([(503, {"Retry-After": "5"})])
    began = time.monotonic()
    with serve(served) as base, httpx.Client() as client:
        answer = send(client, client.build_request("GET", base + "/x"), Deadline.start(2),
                      host="h", what="x")
    assert answer.status_code == 503 and len(served.requests) == 1
    assert elapsed(began) < 1.5  # neither the 5 s asked for nor the 2 s deadline


def test_a_long_rate_limit_is_reported_not_waited_for() -> None:
    served = _flaky([(429, {"Retry-After": "3600"})])
    with serve(served) as base, pytest.raises(RateLimitError) as caught:
        open_source(base.removeprefix("http://") + "/fake/img:1",
                    SourceOptions(deadline=Deadline.start(10)))
    assert caught.value.fields["retry_after_s"] == 3600
    assert len(served.requests) == 1


def test_a_dropped_connection_is_tried_again() -> None:
    drops = [True]

    def handle(h: BaseHTTPRequestHandler, served: Served) -> bool:
        if drops:
            drops.pop()
            h.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort")
            h.close_connection = True
            return True
        h.send_body(200, b"fine", {})  # type: ignore[attr-defined]
        return True

    served = Served(handler=handle)
    clock = FakeClock()
    with serve(served) as base, httpx.Client() as client:
        answer = send(client, client.build_request("GET", base + "/x"),
                      Deadline.start(10, clock=clock), host="h", what="x")
    assert answer.status_code == 200 and answer.content == b"fine"
    assert len(served.requests) == 2 and clock.slept == [0.5]


def test_a_refused_connection_is_not_a_deadline() -> None:
    with silent_server() as server:
        address = server.address
    with pytest.raises(RegistryError) as caught:
        open_source(f"{address}/fake/img:1", SourceOptions(deadline=Deadline.start(5)))
    assert not isinstance(caught.value, DeadlineError)
    assert "cannot reach" in caught.value.message
