"""Output-token accounting that a server's streaming dialect cannot fool.

Pure functions: what the chunks of one streamed answer said in, per-chunk token counts, the
request's total and where each token was attributed from out.

Servers differ in what they tell a client (see ``docs/bench.md``, "Dialects"):

* vLLM with ``return_token_ids`` lists each chunk's token ids; with
  ``stream_options.continuous_usage_stats`` it puts the cumulative ``usage`` in every chunk
  (SGLang does too);
* TGI, llama.cpp, OpenAI and most OpenAI-compatible servers send ``usage`` once, at the end
  (a usage-only chunk, or on the last chunk beside its text or finish reason), or not at all.

Per-chunk counts come, best first, from token ids; from per-chunk usage, only when the
server really sent usage on every chunk that carried text (one usage figure on the last
event is a total, not a per-chunk count); from a local tokenizer; else one token per event
that carried text. A final usage figure then reconciles the total: when the per-chunk counts
were estimated (tokenizer or events) and disagree with it, the difference is spread over the
chunks in proportion to their text, and the request says how many tokens each source gave.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

CountSource = Literal["token_ids", "continuous_usage", "tokenizer", "chunks"]
UsageMode = Literal["continuous", "final", "none"]


@dataclass(frozen=True, slots=True)
class Accounted:
    """One request's token-bearing chunks and where their counts came from."""

    times: tuple[float, ...]
    """Arrival time of each chunk that carried at least one output token."""
    counts: tuple[int, ...]
    """Output tokens in each of those chunks."""
    source: CountSource
    """Where the per-chunk counts came from before any reconciliation."""
    total: int
    """Output tokens: the server's usage figure when it sent one, else the chunks' sum."""
    usage_mode: UsageMode
    """How the server sent usage in this answer."""
    sources: dict[str, int]
    """Tokens attributed per source (``token_ids``, ``continuous_usage``, ``tokenizer``,
    ``events``, ``final_usage``); ``final_usage`` is what the final usage figure added to (or,
    negative, took from) estimated counts."""
    texts: tuple[str, ...] = ()
    """The text of each token-bearing chunk when the counts were estimated from events (kept
    so a local tokenizer can settle them afterwards)."""


def usage_mode(texts: Sequence[str], cumulative: Sequence[int], final_usage: int | None
               ) -> UsageMode:
    """``continuous`` when every chunk that carried text carried usage too (and at least two
    chunks did); ``final`` when usage came otherwise; ``none`` when it never came."""
    with_usage = sum(1 for value in cumulative if value >= 0)
    carrying = [value for text, value in zip(texts, cumulative, strict=True) if text]
    if with_usage >= 2 and carrying and min(carrying) >= 0:
        return "continuous"
    if with_usage or final_usage is not None:
        return "final"
    return "none"


def apportion(total: int, weights: Sequence[int]) -> list[int]:
    """``total`` split over ``weights`` (each at least one when ``total`` allows), by the
    largest-remainder rule; the shares sum to ``total`` exactly."""
    count = len(weights)
    if count == 0:
        return []
    total = max(total, 0)
    floor = 1 if total >= count else 0
    shares = [floor] * count
    rest = total - floor * count
    weight_sum = sum(max(w, 0) for w in weights)
    if rest <= 0:
        return shares
    if weight_sum == 0:
        weights, weight_sum = [1] * count, count
    exact = [rest * max(w, 0) / weight_sum for w in weights]
    whole = [int(x) for x in exact]
    left = rest - sum(whole)
    order = sorted(range(count), key=lambda i: (whole[i] - exact[i], i))
    for i in order[:left]:
        whole[i] += 1
    return [s + w for s, w in zip(shares, whole, strict=True)]


def reconcile(counts: Sequence[int], texts: Sequence[str], total: int | None,
              source: CountSource) -> tuple[list[int], dict[str, int]]:
    """Estimated per-chunk counts brought to the server's final ``total``.

    Counts the server gave per chunk (token ids, continuous usage) are kept as they are; a
    disagreement is reported by the summary, not hidden. Estimated counts (tokenizer,
    events) that sum to something else are replaced by ``total`` spread over the chunks in
    proportion to their estimated count weighted by text length.
    """
    label = "events" if source == "chunks" else source
    found = sum(counts)
    if total is None or source in ("token_ids", "continuous_usage") or found == total:
        return list(counts), {label: found}
    weights = [max(n, 1) * max(len(t), 1) for n, t in zip(counts, texts, strict=True)]
    spread = apportion(total, weights)
    return spread, {label: found, "final_usage": total - found}


def account(times: Sequence[float], texts: Sequence[str], ids: Sequence[int],
            cumulative: Sequence[int], final_usage: int | None) -> Accounted:
    """Settle one answer's counts.

    ``times``, ``texts``, ``ids`` and ``cumulative`` describe each chunk that had a choice:
    its arrival, its text (content, reasoning and tool-call deltas), how many token ids it
    listed (-1: none listed) and its ``usage.completion_tokens`` (-1: no usage).
    ``final_usage`` is the largest ``completion_tokens`` the answer carried anywhere (a
    usage-only chunk included), or None.
    """
    mode = usage_mode(texts, cumulative, final_usage)
    counts: list[int]
    source: CountSource
    if max(ids, default=-1) >= 0:
        counts, source = [max(n, 0) for n in ids], "token_ids"
    elif mode == "continuous":
        source = "continuous_usage"
        counts, previous = [], 0
        for value in cumulative:
            counts.append(max(value - previous, 0) if value >= 0 else 0)
            previous = max(previous, value)
    else:
        counts, source = [1 if text else 0 for text in texts], "chunks"
    kept = [i for i, n in enumerate(counts) if n > 0]
    kept_times = tuple(times[i] for i in kept)
    kept_counts = [counts[i] for i in kept]
    kept_texts = [texts[i] for i in kept]
    settled, sources = reconcile(kept_counts, kept_texts, final_usage, source)
    total = final_usage if final_usage is not None else sum(settled)
    if min(settled, default=1) <= 0:  # a final total below the events: some carried none
        keep = [i for i, n in enumerate(settled) if n > 0]
        kept_times = tuple(kept_times[i] for i in keep)
        kept_texts = [kept_texts[i] for i in keep]
        settled = [settled[i] for i in keep]
    return Accounted(kept_times, tuple(settled), source, total, mode, sources,
                     tuple(kept_texts) if source == "chunks" else ())
