"""A benchmark run: check the server, build prompts, run each load level, summarize.

:func:`run_bench` is the one entry point the CLI calls. It returns a :class:`BenchResult`:
the JSON document (one entry per load level in the recipe benchmark shape) and the raw
per-request records; :func:`save_run` puts both in the store so a recipe can cite the run.
"""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import json
import math
import random
import secrets
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from servewise import __version__
from servewise.bench.client import ClientOptions, Outgoing
from servewise.bench.http import CollectSink, HttpFailure, HttpPool
from servewise.bench.interrupt import run_interruptibly
from servewise.bench.load import LevelProgress, LevelRunner, LoadLevel, arrival_offsets
from servewise.bench.metrics import FORMULAS, summarize
from servewise.bench.records import RequestRecord
from servewise.bench.server_metrics import Snapshot, beside_client, difference, snapshot
from servewise.bench.token_counts import reconcile
from servewise.bench.tokenizer import LocalTokenizer, PromptTokenizer, ServerTokenizer
from servewise.bench.workload import (
    BUILD_CONCURRENCY,
    Prompt,
    RandomPromptBuilder,
    WorkloadSpec,
    cycle,
    load_dataset,
)
from servewise.errors import FormatError, SourceError, UsageError
from servewise.store import Store

Endpoint = Literal["completions", "chat"]
_PATHS = {"completions": "/v1/completions", "chat": "/v1/chat/completions"}
#: Owners a server names in ``/v1/models`` and the engine they mean (vLLM's and SGLang's
#: ``ModelCard.owned_by`` defaults, llama.cpp's ``{"owned_by", "llamacpp"}``).
OWNERS = {"vllm": "vllm", "sglang": "sglang", "llamacpp": "llama.cpp"}


@dataclass(frozen=True)
class BenchConfig:
    """Everything ``servewise bench`` was asked to do."""

    url: str
    model: str
    workload: WorkloadSpec
    levels: tuple[LoadLevel, ...]
    endpoint: Endpoint | None = None
    """None: from the URL's path, else completions."""
    num_prompts: int | None = None
    duration_s: float | None = None
    warmup: int | None = None
    """Warm-up requests per level; None: one per concurrency slot, or one second of arrivals."""
    gpus: int | None = None
    tokenizer: Path | None = None
    slos_ms: dict[str, float] = field(default_factory=dict)
    seed: int | None = None
    ignore_eos: bool = True
    min_tokens: bool = True
    continuous_usage: bool = True
    token_ids: bool = False
    temperature: float | None = None
    extra_body: dict[str, Any] = field(default_factory=dict)
    connect_timeout_s: float = 10.0
    read_timeout_s: float = 600.0
    api_key: str | None = None
    server_metrics: bool = False
    """Scrape the engine's Prometheus ``/metrics`` around each level's measured requests."""
    timeout_s: float | None = None
    """One deadline for the whole command, in seconds (None: none). Preparation waits no
    longer than it or the read timeout; a level still running at it is stopped and the
    levels finished before it are kept."""


@dataclass(frozen=True)
class LevelRecords:
    """The raw records of one load level."""

    level: LoadLevel
    origin: float
    records: tuple[RequestRecord, ...]


@dataclass(frozen=True)
class BenchResult:
    """The JSON document and the raw records of a run."""

    run_id: str
    document: dict[str, Any]
    levels: tuple[LevelRecords, ...]


def resolve_url(url: str, endpoint: Endpoint | None) -> tuple[str, str, Endpoint]:
    """``(base URL, endpoint URL, endpoint)`` from what the user typed."""
    if not url.startswith(("http://", "https://")):
        raise UsageError(f"not an HTTP URL: {url!r}",
                         hint="give the server's address, e.g. http://127.0.0.1:8000")
    base = url.rstrip("/")
    found: Endpoint | None = None
    for name, path in _PATHS.items():
        if base.endswith(path):
            base, found = base[: -len(path)], name  # type: ignore[assignment]
    if found is None and base.endswith("/v1"):
        base = base[:-3]
    if found is not None and endpoint is not None and found != endpoint:
        raise UsageError(f"the URL names the {found} endpoint but --endpoint is {endpoint}",
                         hint="give the server's base URL, or drop --endpoint")
    chosen: Endpoint = endpoint or found or "completions"
    return base, base + _PATHS[chosen], chosen


def default_num_prompts(level: LoadLevel) -> int:
    """Five requests per concurrency slot (at least 10); 30 s of arrivals (at least 10)."""
    if level.kind == "concurrency":
        return max(5 * int(level.value), 10)
    return 100 if math.isinf(level.value) else max(10, math.ceil(30 * level.value))


def default_warmup(level: LoadLevel) -> int:
    """One request per concurrency slot; one second of arrivals (1..64); none at rate inf."""
    if level.kind == "concurrency":
        return int(level.value)
    return 0 if math.isinf(level.value) else min(max(1, math.ceil(level.value)), 64)


def _body(config: BenchConfig, endpoint: Endpoint, prompt: Prompt) -> bytes:
    body: dict[str, Any] = {"model": config.model, "max_tokens": prompt.max_tokens,
                            "stream": True,
                            "stream_options": {"include_usage": True}}
    if endpoint == "chat":
        body["messages"] = (list(prompt.messages) if prompt.messages is not None
                            else [{"role": "user", "content": prompt.text or ""}])
    else:
        body["prompt"] = prompt.text or ""
    if config.continuous_usage:
        body["stream_options"]["continuous_usage_stats"] = True
    if config.token_ids:
        body["return_token_ids"] = True
    if config.ignore_eos:
        body["ignore_eos"] = True
    if config.min_tokens:
        body["min_tokens"] = prompt.max_tokens
    if config.temperature is not None:
        body["temperature"] = config.temperature
    body.update(config.extra_body)
    return json.dumps(body).encode()


async def _check_model(pool: HttpPool, base: str, model: str) -> str | None:
    """Fail early when the server is unreachable or does not serve ``model``; return the
    model's ``owned_by`` (which names the engine on vLLM, SGLang and llama.cpp)."""
    try:
        status, found = await pool.call_json("GET", "/v1/models")
    except (HttpFailure, FormatError) as error:
        raise SourceError(f"cannot reach {base}: {error}",
                          hint="is the server up? check the URL and port, or raise "
                               "--read-timeout / --timeout for a slow server",
                          url=base) from None
    if status in (401, 403):
        raise SourceError(f"{base}/v1/models answers {status}: the server wants a key",
                          hint="pass --api-key (or the key the server was started with)",
                          url=base, status=status)
    if status != 200:
        # an OpenAI-compatible engine (vLLM, SGLang, llama.cpp, TGI) always lists its models:
        # anything else is another server, and a run against it would be stored as junk
        raise SourceError(
            f"{base}/v1/models answers {status}: this is not an OpenAI-compatible server "
            "(or not the engine's port)",
            hint="check the port (vLLM 8000, SGLang 30000) and any path prefix a proxy adds; "
            "`curl URL/v1/models` must list the model", url=base, status=status)
    if not isinstance(found, dict) or not isinstance(found.get("data"), list):
        return None  # an odd listing: the requests will tell
    entries = [m for m in found["data"] if isinstance(m, dict)]
    listed = [m.get("id") for m in entries]
    if listed and model not in listed:
        raise UsageError(f"the server does not serve {model!r}; it serves {listed}",
                         hint=f"pass --model {listed[0]}", url=base)
    owners = [m.get("owned_by") for m in entries if m.get("id") == model]
    return owners[0] if owners and isinstance(owners[0], str) else None


def describe_server(owner: str | None, tokenize: bool,
                    records: Sequence[RequestRecord]) -> dict[str, Any]:
    """The ``server`` block: which dialect the streams spoke, how usage came, what else.

    The dialect comes from ``/v1/models``' ``owned_by`` when it names an engine, else from
    what the streams showed: token ids (vLLM), ``timings`` (llama.cpp), ``matched_stop``
    (SGLang), the role repeated beside each text delta (TGI); else ``openai-compatible``.
    """
    good = [r for r in records if r.ok]
    marks: Counter[str] = Counter(m for r in good for m in r.marks)
    modes = Counter(r.usage_mode for r in good)
    if owner in OWNERS:
        dialect, evidence = OWNERS[owner], f"/v1/models owned_by {owner!r}"
    else:
        for mark, name in (("token_ids", "vllm"), ("timings", "llama.cpp"),
                           ("matched_stop", "sglang"), ("role_with_text", "tgi")):
            if marks[mark]:
                dialect, evidence = name, f"streams carried {mark}"
                break
        else:
            dialect, evidence = "openai-compatible", "no engine-specific field seen"
    return {
        "dialect": dialect,
        "dialect_evidence": evidence,
        "owned_by": owner,
        "usage": modes.most_common(1)[0][0] if modes else None,
        "usage_by_request": dict(modes),
        "tokenize": tokenize,
        "reasoning": bool(marks["reasoning"]),
        "tool_calls": bool(marks["tool_calls"]),
        "done_missing": marks["no_done"],
        "role_chunk": bool(marks["role_chunk"]),
    }


def _settle_with_tokenizer(record: RequestRecord, tokenizer: LocalTokenizer) -> RequestRecord:
    """Per-chunk counts from the local tokenizer when the server gave none per chunk; a final
    usage figure still sets the total (the difference spread over the chunks)."""
    if record.count_source != "chunks" or not record.chunk_texts:
        return record
    counts = tokenizer.count_chunks(record.chunk_texts)
    kept = [i for i, n in enumerate(counts) if n > 0]
    texts = [record.chunk_texts[i] for i in kept]
    usage = record.output_tokens if record.output_tokens_source == "usage" else None
    settled, sources = reconcile([counts[i] for i in kept], texts, usage, "tokenizer")
    keep = [j for j, n in enumerate(settled) if n > 0]
    return dataclasses.replace(
        record, chunk_times=tuple(record.chunk_times[kept[j]] for j in keep),
        chunk_tokens=tuple(settled[j] for j in keep), count_source="tokenizer",
        output_tokens=usage if usage is not None else sum(settled), chunk_texts=(),
        token_sources=sources)


class _Run:
    """State of one run while it goes."""

    def __init__(self, config: BenchConfig, progress: Callable[[LevelProgress], None] | None):
        self.config = config
        self.progress = progress
        self.base, self.url, self.endpoint = resolve_url(config.url, config.endpoint)
        self.seed = config.seed if config.seed is not None else secrets.randbits(32)
        self.run_id = time.strftime("bench-%Y%m%d-%H%M%S-") + secrets.token_hex(3)
        self.local = (LocalTokenizer(config.tokenizer, chat=self.endpoint == "chat")
                      if config.tokenizer is not None else None)
        self.tokenizer: PromptTokenizer | None = self.local
        self.builder: RandomPromptBuilder | None = None
        self.dataset: list[Prompt] | None = None
        self._pool: HttpPool | None = None
        self.owner: str | None = None
        self.tokenize = False
        self.deadline = (time.monotonic() + config.timeout_s
                         if config.timeout_s is not None else None)
        self.stopped: str | None = None

    def remaining(self) -> float | None:
        """Seconds left before the command's deadline (None: no deadline)."""
        return None if self.deadline is None else max(self.deadline - time.monotonic(), 0.0)

    def _say(self, label: str, phase: str) -> None:
        if self.progress:
            self.progress(LevelProgress(label, phase, 0, 0, None, 0, 0, 0.0, None))

    async def prepare(self) -> None:
        config = self.config
        headers = {"Content-Type": "application/json"}
        if config.api_key:
            headers["Authorization"] = f"Bearer {config.api_key}"
        left = self.remaining()
        wait = config.read_timeout_s if left is None else min(config.read_timeout_s, left)
        pool = HttpPool(self.base, connect_timeout_s=min(config.connect_timeout_s, wait),
                        read_timeout_s=wait, limit=BUILD_CONCURRENCY, headers=headers)
        self._pool = await pool.__aenter__()
        self._say("server", f"waiting for {self.base}/v1/models (up to {wait:g} s)")
        self.owner = await _check_model(pool, self.base, config.model)
        server = ServerTokenizer(pool, self.base, config.model, chat=self.endpoint == "chat")
        self.tokenize = await server.available()
        spec = config.workload
        if spec.dataset is not None:
            self.dataset = load_dataset(spec.dataset, osl=spec.osl, chat=self.endpoint == "chat")
            return
        if self.tokenizer is None and self.tokenize:
            self.tokenizer = server
        self._say("workload", "tokenizing the word pool")
        self.builder = RandomPromptBuilder(self.tokenizer, spec, self.seed)
        await self.builder.prepare()

    async def prompts(self, count: int, level: int, notes: list[str]) -> tuple[list[Prompt], int]:
        """``count`` prompts for a level and how many of them missed their length."""
        if self.dataset is not None:
            taken, reused = cycle(self.dataset, count)
            if reused:
                notes.append(f"the prompt file has {len(self.dataset)} prompts: {reused} were "
                             "sent again")
            return taken, 0
        assert self.builder is not None
        built = await self.builder.build(count, level)
        notes.extend(n for n in built.notes if n not in notes)
        return built.prompts, built.off_length

    def outgoing(self, prompts: Sequence[Prompt], level: int, phase: Literal["warmup", "measure"],
                 offsets: Sequence[float] | None = None) -> list[Outgoing]:
        """Requests ready to send (bodies encoded once, before the clock starts)."""
        tag = "w" if phase == "warmup" else "m"
        return [Outgoing(i, phase, f"{self.run_id}-{level}-{tag}{i}",
                         _body(self.config, self.endpoint, p), p.max_tokens, p.expected_tokens,
                         None if offsets is None else offsets[i])
                for i, p in enumerate(prompts)]

    async def level(self, index: int, level: LoadLevel) -> tuple[dict[str, Any], LevelRecords]:
        config = self.config
        notes: list[str] = []
        warm_count = config.warmup if config.warmup is not None else default_warmup(level)
        rng = random.Random(f"{self.seed}-arrivals-{index}")
        offsets: list[float] | None = None
        count = config.num_prompts or default_num_prompts(level)
        if level.kind == "rate":
            timed = config.duration_s is not None and not math.isinf(level.value)
            cap = config.num_prompts or (10**7 if timed else count)
            offsets = arrival_offsets(cap, level.value, level.burstiness, rng,
                                      config.duration_s if timed else None)
            count = len(offsets)
        self._say(level.label, "building prompts")
        warm_prompts, _ = await self.prompts(warm_count, 1000 + index, notes)
        options = ClientOptions(self.url, config.connect_timeout_s, config.read_timeout_s,
                                api_key=config.api_key)
        async with LevelRunner(options, level, progress=self.progress) as runner:
            warm_offsets = (arrival_offsets(warm_count, level.value, level.burstiness, rng)
                            if level.kind == "rate" else None)
            records = await runner.phase(self.outgoing(warm_prompts, index, "warmup",
                                                       warm_offsets))
            open_ended = (level.kind == "concurrency" and config.duration_s is not None
                          and not config.num_prompts)
            if open_ended:
                count = _estimate(records, int(level.value), config.duration_s or 0.0)
            self._say(level.label, "building prompts")
            prompts, off_length = await self.prompts(count, index, notes)
            if open_ended:
                prompts, _ = cycle(prompts, 50 * count)
            before = await self.scrape() if config.server_metrics else None
            gc.collect()
            gc.freeze()
            try:
                measured = await runner.phase(self.outgoing(prompts, index, "measure", offsets),
                                              config.duration_s)
            finally:
                gc.unfreeze()
            after = await self.scrape() if config.server_metrics else None
            events = runner.events_read
            read_stamps = runner.read_stamps
            origin = runner.origin
        sent = len(measured)
        if open_ended and sent > count:
            notes.append(f"{sent - count} prompts were sent again: --duration outlasted the "
                         f"{count} prompts built from the warm-up's pace")
        everything = records + measured
        if self.local is not None:
            local = self.local
            everything = [_settle_with_tokenizer(r, local) for r in everything]
        requested = None if level.kind == "concurrency" else level.value
        entry: dict[str, Any] = {
            "workload": {**config.workload.describe(), **level.workload_fields(),
                         "num_prompts": sent,
                         "length_distribution": config.workload.distribution()},
            **summarize(everything, gpus=config.gpus, slos_ms=config.slos_ms,
                        requested_rate=None if requested is None or math.isinf(requested)
                        else requested, client_chunks=events, reads_timed_by=read_stamps),
            "warmup_requests": len(records),
            "prompts_off_length": off_length,
            "notes": notes,
        }
        if config.server_metrics:
            entry["server_metrics"] = _engine_view(before, after, f"{self.base}/metrics", entry)
        return entry, LevelRecords(level, origin, tuple(everything))

    async def scrape(self) -> Snapshot | str:
        """The engine's ``/metrics`` now, or why it could not be read."""
        assert self._pool is not None
        sink = CollectSink()
        try:
            await self._pool.exchange(self._pool.build("GET", "/metrics", b""), sink)
            if sink.status != 200:
                return f"GET /metrics answered HTTP {sink.status}"
            return snapshot(sink.body.decode("utf-8", "replace"))
        except HttpFailure as error:
            return f"GET /metrics failed: {error}"
        except FormatError as error:
            return f"GET /metrics is not Prometheus text: {error.message}"

    async def run(self) -> BenchResult:
        entries: list[dict[str, Any]] = []
        levels: list[LevelRecords] = []
        try:
            try:
                async with asyncio.timeout(self.remaining()):  # not wait_for (bench.interrupt)
                    await self.prepare()
            except TimeoutError:
                raise SourceError(
                    f"{self.base} did not answer the preparation calls within the "
                    f"{self.config.timeout_s:g} s --timeout",
                    hint="is the server up and not overloaded? raise --timeout",
                    url=self.base) from None
            for index, level in enumerate(self.config.levels):
                try:
                    async with asyncio.timeout(self.remaining()):
                        entry, records = await self.level(index, level)
                except TimeoutError:
                    self.stopped = (f"stopped at the {self.config.timeout_s:g} s --timeout "
                                    f"during {level.label}; {len(entries)} of "
                                    f"{len(self.config.levels)} levels finished")
                    break
                entries.append(entry)
                levels.append(records)
        finally:
            if self._pool is not None:
                await self._pool.__aexit__(None, None, None)
        everything = [r for level in levels for r in level.records]
        return BenchResult(self.run_id, self.document(entries, everything), tuple(levels))

    def document(self, entries: list[dict[str, Any]],
                 records: Sequence[RequestRecord] = ()) -> dict[str, Any]:
        config = self.config
        server = describe_server(self.owner, self.tokenize, records)
        counter = (self.local.description if self.local is not None else
                   "server (token ids, or usage in every chunk); else one token per event "
                   "carrying text, reconciled with the final usage")
        if server["reasoning"]:
            counter += "; reasoning deltas (reasoning_content / reasoning) counted as output"
        return {
            "run_id": self.run_id,
            "created_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "servewise_version": __version__,
            "url": self.url,
            "endpoint": self.endpoint,
            "model": config.model,
            "gpus": config.gpus,
            "seed": self.seed,
            "prompt_tokenizer": (self.builder.description if self.builder is not None
                                 else "none: prompts from the file as they are"),
            "output_token_counter": counter,
            "server": server,
            "stopped": self.stopped,
            "request": {
                "ignore_eos": config.ignore_eos, "min_tokens": config.min_tokens,
                "continuous_usage_stats": config.continuous_usage,
                "return_token_ids": config.token_ids, "temperature": config.temperature,
                "extra_body": config.extra_body,
            },
            "server_metrics": config.server_metrics,
            "timeouts_s": {"connect": config.connect_timeout_s, "read": config.read_timeout_s,
                           "overall": config.timeout_s},
            "duration_limit_s": config.duration_s,
            "slos_ms": config.slos_ms or None,
            "formulas": FORMULAS,
            "results": entries,
        }


def _engine_view(before: Snapshot | str | None, after: Snapshot | str | None, url: str,
                 entry: dict[str, Any]) -> dict[str, Any]:
    """The engine's figures for a level beside the client's, or why there are none."""
    for found in (before, after):
        if isinstance(found, str) or found is None:
            return {"engine": None, "url": url, "error": found or "not scraped"}
    assert isinstance(before, Snapshot) and isinstance(after, Snapshot)
    view = difference(before, after, url)
    if view.get("engine") is not None:
        view["client_minus_engine"] = beside_client(view, entry)
    return view


def _estimate(warmup: Sequence[RequestRecord], concurrency: int, duration_s: float) -> int:
    """Requests a closed loop will send in ``duration_s``, from the warm-up's latencies."""
    e2e = [r.ended - r.started for r in warmup if r.ok]
    if not e2e:
        return max(5 * concurrency, 10)
    mean = sum(e2e) / len(e2e)
    return math.ceil(concurrency * duration_s / max(mean, 1e-3) * 1.5) + concurrency


def run_bench(config: BenchConfig,
              progress: Callable[[LevelProgress], None] | None = None) -> BenchResult:
    """Run the whole benchmark (blocking); raise :class:`ServewiseError` on bad input."""
    if not config.levels:
        raise UsageError("no load level given", hint="pass --concurrency 1,8 or --rate 2,4")
    return run_interruptibly(_Run(config, progress).run())


def save_run(store: Store, result: BenchResult) -> None:
    """Keep the document and every raw request record in the store."""
    rows = [(index, record.phase, record.seq, record.to_dict(level.origin))
            for index, level in enumerate(result.levels) for record in level.records]
    store.put_bench_run(result.run_id, result.document, rows)
