"""Workloads: random prompts of an exact token length, shared prefixes, JSONL prompt files.

Random prompts are built from a pool of token ids (a tokenized text of random common
words): take the target number of ids, decode them, count the prompt as the server will
(special tokens and, for chat through the server, the template included), then drop or add
ids until the count is exact — at most :data:`MAX_TRIES` rounds; a prompt that still misses
is kept and counted in ``prompts_off_length``. With a shared prefix, the prefix is built the
same way once per prefix and only the rest of each prompt is adjusted.

Lengths are fixed, or uniform over ``[floor(L(1-r)), ceil(L(1+r))]`` with ``--range-ratio r``
(vLLM's convention; SGLang's differs, see ``docs/bench.md``).

A prompt file is JSON Lines: one object per line with ``prompt`` (a string) or ``messages``
(OpenAI chat messages), and optionally ``max_tokens`` (or ``output_tokens``).
"""

from __future__ import annotations

import asyncio
import json
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from servewise.bench.tokenizer import PromptTokenizer
from servewise.errors import SourceError, UsageError

MAX_TRIES = 10
#: Prompts built at once when a tokenizer is a server (requests in flight).
BUILD_CONCURRENCY = 16

WORDS = (
    "time", "year", "people", "way", "day", "man", "thing", "woman", "life", "child", "world",
    "school", "state", "family", "student", "group", "country", "problem", "hand", "part",
    "place", "case", "week", "company", "system", "program", "question", "work", "government",
    "number", "night", "point", "home", "water", "room", "mother", "area", "money", "story",
    "fact", "month", "lot", "right", "study", "book", "eye", "job", "word", "business", "issue",
    "side", "kind", "head", "house", "service", "friend", "father", "power", "hour", "game",
    "line", "end", "member", "law", "car", "city", "community", "name", "president", "team",
    "minute", "idea", "kid", "body", "information", "back", "parent", "face", "others", "level",
    "office", "door", "health", "person", "art", "war", "history", "party", "result", "change",
    "morning", "reason", "research", "girl", "guy", "moment", "air", "teacher", "force",
    "education", "foot", "boy", "age", "policy", "music", "market", "sense", "nation", "plan",
    "college", "interest", "death", "experience", "effect", "class", "control", "care", "field",
    "development", "role", "effort", "rate", "heart", "drug", "show", "leader", "light", "voice",
    "wife", "police", "mind", "price", "report", "decision", "son", "view", "relationship",
    "town", "road", "arm", "difference", "value", "building", "action", "model", "season",
    "society", "tax", "director", "position", "player", "record", "paper", "space", "ground",
    "form", "event", "official", "matter", "center", "couple", "site", "project", "activity",
    "star", "table", "need", "court", "oil", "situation", "cost", "industry", "figure", "street",
    "image", "phone", "data", "picture", "practice", "piece", "land", "product", "doctor", "wall",
    "patient", "worker", "news", "test", "movie", "north", "love", "support", "technology",
    "step", "baby", "computer", "type", "attention", "film", "tree", "source", "organ", "river",
    "garden", "window", "stone", "bridge", "cloud", "summer", "winter", "autumn", "spring",
    "bread", "cheese", "apple",
)


@dataclass(frozen=True)
class Prompt:
    """One request's input and output length."""

    max_tokens: int
    text: str | None = None
    """The prompt for ``/v1/completions`` (or the user message for chat)."""
    messages: tuple[dict[str, Any], ...] | None = None
    """Chat messages given by a prompt file."""
    expected_tokens: int | None = None
    """The prompt length the workload built it for, when it knows it."""


@dataclass(frozen=True)
class WorkloadSpec:
    """What to generate: random prompts (``isl``) or a prompt file (``dataset``)."""

    isl: int | None = None
    osl: int | None = None
    dataset: Path | None = None
    range_ratio: float = 0.0
    prefix_len: int = 0
    num_prefixes: int = 1

    def describe(self) -> dict[str, Any]:
        """The recipe-shaped workload fields (without the load level)."""
        if self.dataset is not None:
            return {"dataset": self.dataset.name, "isl": None, "osl": self.osl}
        return {"dataset": "random", "isl": self.isl, "osl": self.osl}

    def distribution(self) -> dict[str, Any]:
        """How lengths were drawn, stated exactly."""
        if self.dataset is not None:
            return {"kind": "dataset", "path": str(self.dataset)}
        assert self.isl is not None and self.osl is not None
        if self.range_ratio == 0:
            found: dict[str, Any] = {"kind": "fixed"}
        else:
            low_in, high_in = length_bounds(self.isl, self.range_ratio)
            low_out, high_out = length_bounds(self.osl, self.range_ratio)
            found = {"kind": "uniform", "range_ratio": self.range_ratio, "isl_min": low_in,
                     "isl_max": high_in, "osl_min": low_out, "osl_max": high_out}
        if self.prefix_len:
            found.update(prefix_len=self.prefix_len, num_prefixes=self.num_prefixes)
        return found


@dataclass
class BuiltPrompts:
    """Prompts for one load level, and how well they hit their lengths."""

    prompts: list[Prompt]
    off_length: int = 0
    """Random prompts whose length could not be made exact."""
    notes: list[str] = field(default_factory=list)


def length_bounds(length: int, ratio: float) -> tuple[int, int]:
    """``[floor(L(1-r)), ceil(L(1+r))]``, at least 1."""
    return max(1, math.floor(length * (1 - ratio))), max(1, math.ceil(length * (1 + ratio)))


def _draw(rng: random.Random, length: int, ratio: float) -> int:
    if ratio == 0:
        return length
    low, high = length_bounds(length, ratio)
    return rng.randint(low, high)


def load_dataset(path: Path, *, osl: int | None, chat: bool) -> list[Prompt]:
    """Read a JSON Lines prompt file; errors name the line."""
    try:
        lines = path.read_text("utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise SourceError(f"cannot read the prompt file {path}: {error}",
                          hint="pass --dataset a readable UTF-8 JSON Lines file",
                          path=str(path)) from None
    prompts: list[Prompt] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            item = json.loads(line)
        except ValueError as error:
            raise SourceError(f"{where}: not JSON ({error})",
                              hint="each line must be one JSON object", path=str(path),
                              line=number) from None
        if not isinstance(item, dict):
            raise SourceError(f"{where}: expected a JSON object, found {type(item).__name__}",
                              hint='each line looks like {"prompt": "...", "max_tokens": 128}',
                              path=str(path), line=number)
        max_tokens = item.get("max_tokens", item.get("output_tokens", osl))
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
            raise UsageError(f"{where}: no usable max_tokens (found {max_tokens!r})",
                             hint="give each line max_tokens, or pass --osl N",
                             path=str(path), line=number)
        text, messages = item.get("prompt"), item.get("messages")
        if isinstance(text, str):
            prompts.append(Prompt(max_tokens, text=text))
        elif isinstance(messages, list) and messages and all(
                isinstance(m, dict) for m in messages):
            if not chat:
                raise UsageError(f"{where}: chat messages need the chat endpoint",
                                 hint="pass --endpoint chat", path=str(path), line=number)
            prompts.append(Prompt(max_tokens, messages=tuple(messages)))
        else:
            raise SourceError(f"{where}: expected a \"prompt\" string or a \"messages\" list",
                              hint='each line looks like {"prompt": "...", "max_tokens": 128}',
                              path=str(path), line=number)
    if not prompts:
        raise UsageError(f"the prompt file {path} holds no prompts",
                         hint="one JSON object per line", path=str(path))
    return prompts


class RandomPromptBuilder:
    """Random prompts of exact lengths through a tokenizer (or approximately, without one)."""

    def __init__(self, tokenizer: PromptTokenizer | None, spec: WorkloadSpec, seed: int) -> None:
        assert spec.isl is not None and spec.osl is not None
        self.tokenizer = tokenizer
        self.spec = spec
        self.seed = seed
        self._pool: list[int] = []
        self._prefixes: list[str] = []
        self._base = 0

    @property
    def prefixes(self) -> tuple[str, ...]:
        """The shared prefixes, once :meth:`prepare` has built them."""
        return tuple(self._prefixes)

    @property
    def description(self) -> str:
        """How prompt lengths were made (named in the JSON)."""
        if self.tokenizer is None:
            return "none: one word per token, approximate (input lengths from server usage)"
        return self.tokenizer.description

    async def prepare(self) -> None:
        """Tokenize the word pool and build the shared prefixes, once."""
        spec = self.spec
        assert spec.isl is not None
        if spec.prefix_len >= spec.isl:
            raise UsageError(f"--prefix-len {spec.prefix_len} leaves no room in --isl {spec.isl}",
                             hint="make the prefix shorter than the input length")
        rng = random.Random(self.seed)
        if self.tokenizer is None:
            self._prefixes = [" ".join(rng.choice(WORDS) for _ in range(spec.prefix_len))
                              for _ in range(spec.num_prefixes)] if spec.prefix_len else [""]
            self._base = 1
            return
        self._pool = await self.tokenizer.encode(" " + " ".join(rng.choice(WORDS)
                                                                for _ in range(4096)))
        self._base = await self.tokenizer.count_prompt("")
        low = length_bounds(spec.isl, spec.range_ratio)[0]
        if low <= self._base + spec.prefix_len:
            raise UsageError(
                f"an input length of {low} tokens leaves no room for a prompt: the server adds "
                f"{self._base} token(s) itself",
                hint=f"use --isl above {self._base + spec.prefix_len}")
        self._prefixes = [""]
        if spec.prefix_len:
            self._prefixes = [
                (await self._exact("", spec.prefix_len + self._base, rng))[0]
                for _ in range(spec.num_prefixes)
            ]

    async def _exact(self, prefix: str, target: int, rng: random.Random) -> tuple[str, int]:
        """A text starting with ``prefix`` that counts ``target`` tokens, and its count."""
        tokenizer = self.tokenizer
        assert tokenizer is not None
        base = await tokenizer.count_prompt(prefix) if prefix else self._base
        ids = [rng.choice(self._pool) for _ in range(max(target - base, 1))]
        text, count = prefix, base
        for _ in range(MAX_TRIES):
            text = prefix + await tokenizer.decode(ids)
            count = await tokenizer.count_prompt(text)
            if count == target:
                break
            if count > target:
                del ids[max(len(ids) - (count - target), 1):]
            else:
                ids.extend(rng.choice(self._pool) for _ in range(target - count))
        return text, count

    async def build(self, count: int, level: int) -> BuiltPrompts:
        """``count`` prompts for load level ``level`` (each level gets fresh prompts)."""
        spec = self.spec
        assert spec.isl is not None and spec.osl is not None
        rng = random.Random(f"{self.seed}-{level}")
        plans = [(_draw(rng, spec.isl, spec.range_ratio), _draw(rng, spec.osl, spec.range_ratio),
                  self._prefixes[i % len(self._prefixes)], rng.getrandbits(64))
                 for i in range(count)]
        if self.tokenizer is None:
            prompts = []
            for isl, osl, prefix, salt in plans:
                words = random.Random(salt)
                rest = " ".join(words.choice(WORDS)
                                for _ in range(max(isl - self._base - spec.prefix_len, 1)))
                prompts.append(Prompt(osl, text=(prefix + " " + rest).strip()))
            return BuiltPrompts(prompts, notes=[self.description])
        gate = asyncio.Semaphore(BUILD_CONCURRENCY)

        exact = self.tokenizer.exact

        async def one(isl: int, osl: int, prefix: str, salt: int) -> tuple[Prompt, bool]:
            async with gate:
                text, counted = await self._exact(prefix, isl, random.Random(salt))
            return Prompt(osl, text=text, expected_tokens=counted if exact else None), \
                counted == isl

        built = await asyncio.gather(*(one(*plan) for plan in plans))
        notes = [] if exact else [f"{self.description} has no chat template: prompt lengths "
                                  "count the message text only"]
        return BuiltPrompts([p for p, _ in built],
                            off_length=sum(1 for _, hit in built if not hit), notes=notes)


def cycle(prompts: Sequence[Prompt], count: int) -> tuple[list[Prompt], int]:
    """``count`` prompts taken in order, starting again when the list runs out."""
    taken = [prompts[i % len(prompts)] for i in range(count)]
    return taken, max(count - len(prompts), 0)
