"""The streaming HTTP client: one request in, one :class:`RequestRecord` out, never a hang.

aiohttp was picked by measurement (``benchmarks/bench_http_clients.py``, figures in
``docs/benchmarks.md``). One session per load level, with a connection limit equal to the
concurrency, keep-alive, explicit connect and read timeouts (the read timeout is the longest
silence allowed, for headers and body alike). The body is read as raw pieces as they arrive;
each piece is timestamped once, then split into events by the pure
:class:`~servewise.formats.sse.SseDecoder` and read by
:func:`~servewise.formats.openai_stream.parse_chunk`. Failures become
:class:`~servewise.bench.records.RequestError` values.
"""

from __future__ import annotations

from dataclasses import dataclass
from time import perf_counter
from typing import Any, Literal

import aiohttp

from servewise.bench.records import CountSource, RequestError, RequestRecord
from servewise.errors import FormatError
from servewise.formats.openai_stream import DONE, parse_chunk
from servewise.formats.sse import SseDecoder

#: How much of an error body is kept.
ERROR_BODY_LIMIT = 2000


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


def settle_counts(
    times: list[float], texts: list[str], ids: list[int], cumulative: list[int]
) -> tuple[tuple[float, ...], tuple[int, ...], CountSource]:
    """Per-chunk token counts from what the chunks said, best source first.

    ``ids[i]`` is the number of token ids chunk ``i`` listed (-1: none listed);
    ``cumulative[i]`` its ``usage.completion_tokens`` (-1: no usage). Only chunks with at
    least one token are kept, so role-only and empty finish chunks drop out.
    """
    if any(n >= 0 for n in ids):
        counts = [max(n, 0) for n in ids]
        source: CountSource = "token_ids"
    elif any(c >= 0 for c in cumulative):
        counts, previous = [], 0
        for value in cumulative:
            if value < 0:
                counts.append(0)
                continue
            counts.append(max(value - previous, 0))
            previous = max(previous, value)
        source = "continuous_usage"
    else:
        counts = [1 if text else 0 for text in texts]
        source = "chunks"
    kept = [i for i, n in enumerate(counts) if n > 0]
    return tuple(times[i] for i in kept), tuple(counts[i] for i in kept), source


class _Sent:
    """Filled by the trace hooks: when the request was on the wire."""

    __slots__ = ("at",)

    def __init__(self) -> None:
        self.at: float | None = None


async def _on_sent(_session: object, context: Any, _params: object) -> None:
    holder = context.trace_request_ctx
    if isinstance(holder, _Sent):
        holder.at = perf_counter()


class StreamClient:
    """An aiohttp session for one load level; use as ``async with``."""

    def __init__(self, options: ClientOptions) -> None:
        self.options = options
        self._session: aiohttp.ClientSession | None = None
        self.chunks = 0
        """Events read so far (a measure of the client's own work)."""

    async def __aenter__(self) -> StreamClient:
        connector = aiohttp.TCPConnector(limit=self.options.limit, limit_per_host=0,
                                         keepalive_timeout=60, ttl_dns_cache=300)
        timeout = aiohttp.ClientTimeout(total=None, connect=None,
                                        sock_connect=self.options.connect_timeout_s,
                                        sock_read=self.options.read_timeout_s)
        # The request is timed from when its body was written, after any connection set-up.
        trace = aiohttp.TraceConfig()
        trace.on_request_headers_sent.append(_on_sent)
        trace.on_request_chunk_sent.append(_on_sent)
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
        if self.options.api_key:
            headers["Authorization"] = f"Bearer {self.options.api_key}"
        self._session = aiohttp.ClientSession(connector=connector, timeout=timeout,
                                              headers=headers, read_bufsize=2**20,
                                              auto_decompress=False, trace_configs=[trace])
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def send(self, request: Outgoing, scheduled: float | None = None) -> RequestRecord:
        """Send one request and read its stream to the end; errors come back as data.

        ``scheduled`` is the clock reading the arrival process wanted it sent at.
        """
        assert self._session is not None, "use StreamClient as an async context manager"
        times: list[float] = []
        texts: list[str] = []
        ids: list[int] = []
        cumulative: list[int] = []
        usage_out: int | None = None
        usage_in: int | None = None
        finish: str | None = None
        done = False
        error: RequestError | None = None
        sent = _Sent()
        started = perf_counter()

        def failed(kind: str, message: str, status: int | None = None) -> RequestError:
            return RequestError(kind, message, status,  # type: ignore[arg-type]
                                perf_counter() - (sent.at or started), len(times))

        try:
            async with self._session.post(self.options.url, data=request.body,
                                          headers={"X-Request-Id": request.request_id},
                                          trace_request_ctx=sent) as resp:
                if resp.status != 200:
                    body = (await resp.content.read(ERROR_BODY_LIMIT)).decode("utf-8", "replace")
                    error = failed("http_status", f"HTTP {resp.status}: {body}", resp.status)
                elif not resp.content_type.startswith("text/event-stream"):
                    error = failed("not_streaming", f"the answer is {resp.content_type}, not "
                                   "text/event-stream: the server ignored \"stream\": true")
                else:
                    decoder = SseDecoder()
                    async for piece in resp.content.iter_any():
                        now = perf_counter()
                        for event in decoder.feed(piece):
                            data = event.data
                            self.chunks += 1
                            if data == DONE:
                                done = True
                                continue
                            chunk = parse_chunk(data)
                            if chunk.error is not None:
                                error = failed("stream_error", chunk.error)
                                break
                            if chunk.has_choices:
                                times.append(now)
                                texts.append(chunk.text)
                                ids.append(-1 if chunk.token_ids is None else chunk.token_ids)
                                cumulative.append(-1 if chunk.completion_tokens is None
                                                  else chunk.completion_tokens)
                                if chunk.finish_reason is not None:
                                    finish = chunk.finish_reason
                            else:
                                if chunk.completion_tokens is not None:
                                    usage_out = chunk.completion_tokens
                            if chunk.prompt_tokens is not None:
                                usage_in = chunk.prompt_tokens
                        if error is not None or done:
                            break
                    decoder.close()
                    if error is None and not done and finish is None:
                        error = failed("incomplete", "the stream ended without [DONE] or a "
                                       "finish reason")
        except FormatError as exc:
            error = failed("malformed", exc.message)
        except aiohttp.ConnectionTimeoutError as exc:
            error = failed("connect_timeout", f"no connection within "
                           f"{self.options.connect_timeout_s:g} s ({exc})")
        except aiohttp.ServerTimeoutError as exc:
            error = failed("read_timeout", f"nothing read for {self.options.read_timeout_s:g} s "
                           f"({exc})")
        except aiohttp.ClientConnectorError as exc:
            error = failed("connect", str(exc))
        except (aiohttp.ClientPayloadError, aiohttp.ServerDisconnectedError,
                aiohttp.ClientOSError, ConnectionError) as exc:
            error = failed("disconnect", f"{type(exc).__name__}: {exc}")
        except (TimeoutError, aiohttp.ClientError, ValueError, OSError) as exc:
            error = failed("client", f"{type(exc).__name__}: {exc}")
        ended = perf_counter()
        chunk_times, chunk_tokens, source = settle_counts(times, texts, ids, cumulative)
        if usage_out is None and source == "continuous_usage":
            usage_out = max(cumulative)
        total = usage_out if usage_out is not None else sum(chunk_tokens)
        return RequestRecord(
            seq=request.seq,
            phase=request.phase,
            request_id=request.request_id,
            scheduled=scheduled,
            started=started,
            sent=started if sent.at is None else sent.at,
            ended=ended,
            chunk_times=chunk_times,
            chunk_tokens=chunk_tokens,
            count_source=source,
            output_tokens=total,
            output_tokens_source="usage" if usage_out is not None else "chunks",
            prompt_tokens=usage_in,
            expected_prompt_tokens=request.expected_prompt_tokens,
            max_tokens=request.max_tokens,
            finish_reason=finish,
            error=error,
            chunk_texts=tuple(t for t in texts if t) if source == "chunks" else (),
        )
