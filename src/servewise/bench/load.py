"""Load shapes: a fixed number of requests in flight, or arrivals at a request rate.

* **concurrency C** (closed loop): C workers, each sending its next request as soon as its
  previous one ends; the client's connection limit is C.
* **rate R** (open loop): requests are sent at arrival times whose gaps follow a gamma
  distribution with shape ``burstiness`` and mean 1/R (shape 1 is a Poisson process; below 1
  burstier, above 1 more regular); ``inf`` sends everything at once. Nothing waits for a
  free slot, so how late each request left (``lateness``) measures the client itself.

Warm-up requests run first, at the same load, and are recorded as ``phase: warmup``. A
phase ends after its requests, or with ``duration_s`` when no new request is started after
that many seconds (requests in flight still finish, bounded by the read timeout).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from random import Random
from time import perf_counter
from typing import Literal

from servewise.bench.client import ClientOptions, Outgoing, StreamClient
from servewise.bench.records import RequestRecord

#: Seconds between progress callbacks.
PROGRESS_EVERY_S = 0.25


@dataclass(frozen=True)
class LoadLevel:
    """One point of a sweep."""

    kind: Literal["concurrency", "rate"]
    value: float
    """Requests in flight (concurrency) or requests per second (rate; ``inf`` allowed)."""
    burstiness: float = 1.0

    @property
    def label(self) -> str:
        """``concurrency 8`` or ``rate 2.5/s``."""
        if self.kind == "concurrency":
            return f"concurrency {int(self.value)}"
        return f"rate {self.value:g}/s"

    def workload_fields(self) -> dict[str, float | int | str | None]:
        """``max_concurrency`` or ``request_rate`` (and ``burstiness``) for the JSON."""
        if self.kind == "concurrency":
            return {"max_concurrency": int(self.value)}
        rate = "inf" if math.isinf(self.value) else self.value
        return {"request_rate": rate, "burstiness": self.burstiness}


def short_label(workload: dict[str, object]) -> str:
    """``c=8`` or ``4/s``: a result's load level, from its JSON ``workload``."""
    if "max_concurrency" in workload:
        return f"c={workload['max_concurrency']}"
    return f"{workload['request_rate']}/s"


@dataclass(frozen=True)
class LevelProgress:
    """A snapshot for a live display."""

    label: str
    phase: str
    done: int
    failed: int
    total: int | None
    """Requests planned in this phase (None when only a duration bounds it)."""
    in_flight: int
    output_tokens: int
    elapsed_s: float
    duration_s: float | None


def arrival_offsets(count: int, rate: float, burstiness: float, rng: Random,
                    duration_s: float | None = None) -> list[float]:
    """Arrival times (seconds from the start) of up to ``count`` requests; the first at 0.

    Gaps are gamma-distributed with shape ``burstiness`` and mean ``1/rate``. With
    ``duration_s`` the arrivals stop before that time.
    """
    if math.isinf(rate):
        return [0.0] * count
    offsets: list[float] = []
    now = 0.0
    while len(offsets) < count:
        if duration_s is not None and now >= duration_s:
            break
        offsets.append(now)
        now += rng.gammavariate(burstiness, 1.0 / (rate * burstiness))
    return offsets


class LevelRunner:
    """One load level's client session; run its phases in turn with :meth:`phase`.

    Use as ``async with``; the connections made during warm-up stay open for the measured
    phase. Record times are ``time.perf_counter()`` readings; :attr:`origin` is the level's
    start, to make them relative.
    """

    def __init__(self, options: ClientOptions, level: LoadLevel, *,
                 progress: Callable[[LevelProgress], None] | None = None) -> None:
        limit = int(level.value) if level.kind == "concurrency" else 0
        self.level = level
        self._client = StreamClient(ClientOptions(options.url, options.connect_timeout_s,
                                                  options.read_timeout_s, limit,
                                                  options.api_key))
        self._progress = progress
        self.origin = perf_counter()

    @property
    def events_read(self) -> int:
        """Server-sent events the client has read so far."""
        return self._client.chunks

    @property
    def read_stamps(self) -> dict[str, int]:
        """Network reads so far timed by the kernel's receive time and at the read."""
        return self._client.stamps.to_dict()

    async def __aenter__(self) -> LevelRunner:
        await self._client.__aenter__()
        self.origin = perf_counter()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._client.__aexit__(*exc)

    async def phase(self, requests: Sequence[Outgoing],
                    duration_s: float | None = None) -> list[RequestRecord]:
        """Send ``requests`` at this level (stopping new ones after ``duration_s``).

        In rate mode each request goes at its ``at_s`` (see :func:`arrival_offsets`).
        """
        if not requests:
            return []
        level = self.level
        state = _Phase(level.label, requests[0].phase,
                       None if duration_s is not None else len(requests), duration_s)
        progress = self._progress
        ticker = asyncio.create_task(_tick(state, progress)) if progress else None
        try:
            if level.kind == "concurrency":
                found = await _closed_loop(self._client, requests, int(level.value),
                                           duration_s, state)
            else:
                found = await _open_loop(self._client, requests, state)
        finally:
            if ticker is not None:
                ticker.cancel()
        if progress:
            progress(state.snapshot())
        return found


class _Phase:
    """Counters shared by the workers of one phase (one event loop: no locks needed)."""

    def __init__(self, label: str, phase: str, total: int | None,
                 duration: float | None) -> None:
        self.label = label
        self.phase = phase
        self.total = total
        self.duration = duration
        self.started = perf_counter()
        self.done = self.failed = self.in_flight = self.tokens = 0

    def finish(self, record: RequestRecord) -> RequestRecord:
        self.in_flight -= 1
        self.done += 1
        self.failed += 0 if record.ok else 1
        self.tokens += record.output_tokens
        return record

    def snapshot(self) -> LevelProgress:
        return LevelProgress(self.label, self.phase, self.done, self.failed, self.total,
                             self.in_flight, self.tokens, perf_counter() - self.started,
                             self.duration)


async def _tick(state: _Phase, progress: Callable[[LevelProgress], None]) -> None:
    while True:
        progress(state.snapshot())
        await asyncio.sleep(PROGRESS_EVERY_S)


async def _closed_loop(client: StreamClient, requests: Sequence[Outgoing], concurrency: int,
                       duration: float | None, state: _Phase) -> list[RequestRecord]:
    queue = iter(requests)
    found: list[RequestRecord] = []
    deadline = None if duration is None else state.started + duration

    async def worker() -> None:
        for request in queue:
            if deadline is not None and perf_counter() >= deadline:
                return
            state.in_flight += 1
            found.append(state.finish(await client.send(request)))

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return found


async def _open_loop(client: StreamClient, requests: Sequence[Outgoing],
                     state: _Phase) -> list[RequestRecord]:
    """Send each request at its ``at_s``; never wait for an earlier one to finish."""
    tasks: list[asyncio.Task[RequestRecord]] = []
    loop = asyncio.get_running_loop()
    begin = perf_counter()
    begin_loop = loop.time()

    async def send(request: Outgoing, scheduled: float) -> RequestRecord:
        state.in_flight += 1
        return state.finish(await client.send(request, scheduled))

    for request in requests:
        offset = request.at_s or 0.0
        delay = begin_loop + offset - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(send(request, begin + offset)))
    return list(await asyncio.gather(*tasks))
