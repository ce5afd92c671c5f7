"""The streaming client: one request in, one :class:`RequestRecord` out, never a hang.

It runs on :class:`~servewise.bench.http.HttpPool` (why not aiohttp or httpx: see that module
and ``benchmarks/bench_http_clients.py``): one pool per load level, with a connection limit
equal to the concurrency, keep-alive, explicit connect and read timeouts (the read timeout is
the longest silence allowed, for headers and body alike). Each network read is timestamped
once, then split into events by the pure :class:`~servewise.formats.sse.SseDecoder` and read
by :func:`~servewise.formats.openai_stream.parse_chunk`. Latencies start when the request's
bytes were written. Failures become :class:`~servewise.bench.records.RequestError` values.
"""

from __future__ import annotations

from dataclasses import dataclass
from time import perf_counter
from typing import Literal
from urllib.parse import urlsplit

from servewise.bench.http import ArrivalStamps, HttpFailure, HttpPool
from servewise.bench.records import RequestError, RequestRecord
from servewise.bench.token_counts import account
from servewise.errors import FormatError
from servewise.formats.http1 import ResponseHead
from servewise.formats.openai_stream import DONE, parse_chunk
from servewise.formats.sse import SseDecoder

#: How much of an error body is kept.
ERROR_BODY_LIMIT = 2000
#: The most bytes one streamed answer may bring (at least; see :func:`answer_limits`).
MAX_ANSWER_BYTES = 64 * 2**20


def answer_limits(max_tokens: int) -> tuple[int, int]:
    """The most body bytes and events one answer asked for ``max_tokens`` may bring: a
    server that ignores ``max_tokens`` and streams forever is stopped there."""
    return max(MAX_ANSWER_BYTES, 4096 * max_tokens), 4 * max_tokens + 1024


@dataclass(frozen=True)
class ClientOptions:
    """Where and how to send."""

    url: str
    """The full endpoint URL (``.../v1/completions`` or ``.../v1/chat/completions``)."""
    connect_timeout_s: float = 10.0
    read_timeout_s: float = 600.0
    limit: int = 0
    """Connections at most (the concurrency); 0 means no limit (rate mode)."""
    api_key: str | None = None


@dataclass(frozen=True)
class Outgoing:
    """One request ready to send."""

    seq: int
    phase: Literal["warmup", "measure"]
    request_id: str
    body: bytes
    """The JSON body, already encoded."""
    max_tokens: int
    expected_prompt_tokens: int | None
    at_s: float | None = None
    """When to send it, in seconds after its phase began (rate mode), else None."""


class _StreamSink:
    """Reads one streamed answer: events, their arrival times and what they say."""

    __slots__ = ("cumulative", "decoder", "done", "error", "error_body", "events", "finish",
                 "ids", "kind", "marks", "max_bytes", "max_events", "received", "status",
                 "texts", "times", "usage_chunk", "usage_in", "usage_out")

    def __init__(self, max_tokens: int = 0) -> None:
        self.decoder = SseDecoder()
        self.max_bytes, self.max_events = answer_limits(max_tokens)
        self.received = 0
        self.times: list[float] = []
        self.texts: list[str] = []
        self.ids: list[int] = []
        self.cumulative: list[int] = []
        self.usage_out: int | None = None
        self.usage_in: int | None = None
        self.finish: str | None = None
        self.done = False
        self.error: tuple[str, str] | None = None
        self.error_body = b""
        self.status = 0
        self.kind = "stream"
        self.events = 0
        self.marks: set[str] = set()
        self.usage_chunk = False
        """A usage-only chunk came (OpenAI's and TGI's last event)."""

    def head(self, head: ResponseHead, now: float) -> None:
        self.status = head.status
        if head.status != 200:
            self.kind = "status"
        elif head.content_type != "text/event-stream":
            self.kind = "not_streaming"
            self.error = ("not_streaming", f"the answer is {head.content_type or 'untyped'}, "
                          "not text/event-stream: the server ignored \"stream\": true")

    def data(self, piece: bytes, now: float) -> bool:
        if self.kind != "stream":
            self.error_body += piece[: ERROR_BODY_LIMIT - len(self.error_body)]
            return self.kind == "status" and len(self.error_body) < ERROR_BODY_LIMIT
        self.received += len(piece)
        if self.received > self.max_bytes:
            self.error = ("oversized", f"the answer passed {self.max_bytes} bytes: the server "
                          "kept streaming (does it ignore max_tokens?); stopped reading")
            return False
        try:
            events = self.decoder.feed(piece)
        except FormatError as error:
            self.error = ("malformed", error.message)
            return False
        for event in events:
            self.events += 1
            if self.events > self.max_events:
                self.error = ("oversized", f"more than {self.max_events} events: the server "
                              "kept streaming past max_tokens; stopped reading")
                return False
            data = event.data
            if data == DONE:
                self.done = True
                continue
            try:
                chunk = parse_chunk(data)
            except FormatError as error:
                self.error = ("malformed", error.message)
                return False
            if chunk.error is not None:
                self.error = ("stream_error", chunk.error)
                return False
            used = chunk.completion_tokens
            if chunk.has_choices:
                self.times.append(now)
                self.texts.append(chunk.text)
                self.ids.append(-1 if chunk.token_ids is None else chunk.token_ids)
                self.cumulative.append(-1 if used is None else used)
                if chunk.finish_reason is not None:
                    self.finish = chunk.finish_reason
                if chunk.reasoning or chunk.tool_call or chunk.marks:
                    self._mark(chunk.reasoning, chunk.tool_call, chunk.marks)
                if used is not None and chunk.text:
                    self.marks.add("usage_with_text")
            elif used is not None:
                self.usage_chunk = True
            if used is not None:
                self.usage_out = used if self.usage_out is None else max(self.usage_out, used)
            if chunk.prompt_tokens is not None:
                self.usage_in = chunk.prompt_tokens
        return True

    def _mark(self, reasoning: bool, tool_call: bool, marks: tuple[str, ...]) -> None:
        if reasoning:
            self.marks.add("reasoning")
        if tool_call:
            self.marks.add("tool_calls")
        self.marks.update(marks)

    def stream_marks(self) -> tuple[str, ...]:
        """What the answer showed of the server's dialect (see ``RequestRecord.marks``)."""
        marks = set(self.marks)
        if self.texts and not self.texts[0] and self.ids[0] <= 0:
            marks.add("role_chunk")
        if max(self.ids, default=-1) >= 0:
            marks.add("token_ids")
        if not self.done and self.kind == "stream":
            marks.add("no_done")
        if "usage_with_text" in marks and sum(1 for c in self.cumulative if c >= 0) >= 2:
            marks.discard("usage_with_text")  # usage on every chunk: not a final-event mark
        return tuple(sorted(marks))


class StreamClient:
    """A connection pool for one load level; use as ``async with``."""

    def __init__(self, options: ClientOptions) -> None:
        self.options = options
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
        if options.api_key:
            headers["Authorization"] = f"Bearer {options.api_key}"
        self._pool = HttpPool(options.url, connect_timeout_s=options.connect_timeout_s,
                              read_timeout_s=options.read_timeout_s, limit=options.limit,
                              headers=headers)
        self._path = urlsplit(options.url).path or "/"
        self.chunks = 0
        """Events read so far (a measure of the client's own work)."""

    @property
    def stamps(self) -> ArrivalStamps:
        """How the reads so far were timed (the kernel's receive time, or at the read)."""
        return self._pool.stamps

    async def __aenter__(self) -> StreamClient:
        await self._pool.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._pool.__aexit__(*exc)

    async def send(self, request: Outgoing, scheduled: float | None = None) -> RequestRecord:
        """Send one request and read its stream to the end; errors come back as data.

        ``scheduled`` is the clock reading the arrival process wanted it sent at.
        """
        sink = _StreamSink(request.max_tokens)
        started = perf_counter()
        sent = started
        failure: tuple[str, str] | None = None
        wire = self._pool.build("POST", self._path, request.body,
                                f"X-Request-Id: {request.request_id}\r\n")
        try:
            sent, _ = await self._pool.exchange(wire, sink)
        except HttpFailure as exc:
            failure = (exc.kind, exc.message)
            sent = exc.sent or started
        except FormatError as exc:
            failure = ("malformed", exc.message)
        ended = perf_counter()
        sink.decoder.close()
        self.chunks += sink.events
        if failure is None:
            failure = sink.error
        if failure is None and sink.kind == "status":
            failure = ("http_status", f"HTTP {sink.status}: "
                       f"{sink.error_body.decode('utf-8', 'replace')}")
        if failure is None and not sink.done and sink.finish is None and not sink.usage_chunk:
            failure = ("incomplete", "the stream ended without [DONE], a finish reason or a "
                       "final usage event")
        error = None
        if failure is not None:
            error = RequestError(failure[0], failure[1],  # type: ignore[arg-type]
                                 sink.status or None, ended - sent,
                                 sum(1 for t in sink.texts if t))
        found = account(sink.times, sink.texts, sink.ids, sink.cumulative, sink.usage_out)
        return RequestRecord(
            seq=request.seq,
            phase=request.phase,
            request_id=request.request_id,
            scheduled=scheduled,
            started=started,
            sent=sent,
            ended=ended,
            chunk_times=found.times,
            chunk_tokens=found.counts,
            count_source=found.source,
            output_tokens=found.total,
            output_tokens_source="usage" if sink.usage_out is not None else "chunks",
            prompt_tokens=sink.usage_in,
            expected_prompt_tokens=request.expected_prompt_tokens,
            max_tokens=request.max_tokens,
            finish_reason=sink.finish,
            error=error,
            chunk_texts=found.texts,
            usage_mode=found.usage_mode,
            token_sources=found.sources,
            marks=sink.stream_marks(),
            first_read_events=sum(1 for t in found.times[:8] if t == found.times[0])
            if found.times else 1,
        )
