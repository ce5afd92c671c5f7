"""What one benchmark request produced: timings, token counts, or a typed error.

Times are seconds on the client's monotonic clock (``time.perf_counter()``); the JSON forms
make them relative to the load level's start so records from one run line up.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from servewise.bench.token_counts import CountSource, UsageMode

ErrorKind = Literal[
    "connect",          # the connection could not be made (refused, unreachable, DNS)
    "connect_timeout",  # no connection within --connect-timeout
    "read_timeout",     # no byte for --read-timeout seconds (headers or body)
    "http_status",      # an answer other than 200
    "not_streaming",    # 200, but not a text/event-stream body
    "disconnect",       # the connection broke mid-answer
    "incomplete",       # the stream ended without [DONE] or a finish reason
    "stream_error",     # the server sent an error object inside the stream
    "malformed",        # an event whose data is not an OpenAI chunk
    "oversized",        # the answer outgrew its max_tokens (bytes or events): reading stopped
    "client",           # anything else raised while sending or reading
]

__all__ = ["CountSource", "ErrorKind", "RequestError", "RequestRecord", "UsageMode"]


@dataclass(frozen=True, slots=True)
class RequestError:
    """Why a request failed, as data."""

    kind: ErrorKind
    message: str
    status: int | None = None
    """The HTTP status, when there was one."""
    at_s: float | None = None
    """Seconds after the request was sent."""
    tokens_before: int = 0
    """Output tokens received before the failure."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"kind": self.kind, "message": self.message, "status": self.status,
                "at_s": self.at_s, "tokens_before": self.tokens_before}


@dataclass(frozen=True, slots=True)
class RequestRecord:
    """One request from send to end, with every token-bearing chunk's arrival."""

    seq: int
    """Index of the request within its phase of the load level."""
    phase: Literal["warmup", "measure"]
    request_id: str
    """Sent as ``X-Request-Id`` so server logs can be matched."""
    scheduled: float | None
    """When the arrival process wanted it sent (rate mode), else None."""
    started: float
    """When the client began the request (before taking or making a connection)."""
    sent: float
    """When the request's body had been written to the connection: latencies start here."""
    ended: float
    """When the stream ended (or failed)."""
    chunk_times: tuple[float, ...]
    """Arrival time of each chunk that carried at least one output token."""
    chunk_tokens: tuple[int, ...]
    """Output tokens in each of those chunks."""
    count_source: CountSource
    output_tokens: int
    """Output tokens: ``usage.completion_tokens`` when the server sent it, else the sum of
    ``chunk_tokens``."""
    output_tokens_source: Literal["usage", "chunks"]
    prompt_tokens: int | None
    """``usage.prompt_tokens`` from the server, when it sent usage."""
    expected_prompt_tokens: int | None
    """The prompt length the workload built the prompt for, when it knew it."""
    max_tokens: int
    finish_reason: str | None
    error: RequestError | None = None
    chunk_texts: tuple[str, ...] = ()
    """The text of each token-bearing chunk, kept only when ``count_source`` is ``chunks``
    so a tokenizer can settle the counts afterwards (not stored)."""
    usage_mode: UsageMode = "none"
    """How the server sent usage in this answer: in every text chunk, at the end, or never."""
    token_sources: dict[str, int] | None = None
    """Output tokens attributed per source (see :mod:`servewise.bench.token_counts`)."""
    first_read_events: int = 1
    """Token-bearing events in the read that brought the first one. Above 1, the first token
    sat in the socket until the next arrived (the client read it late, or the kernel merged
    the segments): the TTFT is then an upper bound, late by up to the gaps between them."""
    marks: tuple[str, ...] = ()
    """What the stream showed of its dialect: ``role_chunk``, ``reasoning``, ``tool_calls``,
    ``token_ids``, ``timings``, ``matched_stop``, ``usage_with_text``, ``no_done``."""

    @property
    def ok(self) -> bool:
        """Whether the request completed without an error."""
        return self.error is None

    @property
    def ttft(self) -> float | None:
        """Seconds from the request written to the first token-bearing chunk."""
        return self.chunk_times[0] - self.sent if self.chunk_times else None

    @property
    def e2e(self) -> float | None:
        """Seconds from the request written to the last token-bearing chunk."""
        return self.chunk_times[-1] - self.sent if self.chunk_times else None

    def to_dict(self, origin: float) -> dict[str, Any]:
        """JSON-ready form with times in seconds after ``origin`` (the level's start)."""
        return {
            "seq": self.seq,
            "phase": self.phase,
            "request_id": self.request_id,
            "scheduled_s": None if self.scheduled is None else self.scheduled - origin,
            "started_s": self.started - origin,
            "sent_s": self.sent - origin,
            "ended_s": self.ended - origin,
            "chunk_offsets_s": [t - self.sent for t in self.chunk_times],
            "chunk_tokens": list(self.chunk_tokens),
            "count_source": self.count_source,
            "output_tokens": self.output_tokens,
            "output_tokens_source": self.output_tokens_source,
            "token_sources": self.token_sources,
            "usage_mode": self.usage_mode,
            "marks": list(self.marks),
            "first_read_events": self.first_read_events,
            "prompt_tokens": self.prompt_tokens,
            "expected_prompt_tokens": self.expected_prompt_tokens,
            "max_tokens": self.max_tokens,
            "finish_reason": self.finish_reason,
            "error": None if self.error is None else self.error.to_dict(),
        }
