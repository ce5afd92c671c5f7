"""Tokenizers for building prompts of an exact length and for counting streamed tokens.

Three kinds, in the order the benchmark tries them:

* :class:`LocalTokenizer` — ``--tokenizer PATH``: a ``tokenizer.json`` (or a folder holding
  one) read with Hugging Face's ``tokenizers`` library;
* :class:`ServerTokenizer` — the server's own ``POST /tokenize`` and ``POST /detokenize``
  (vLLM's and SGLang's shape), so the prompt length is what the server counts;
* none: prompts are built from words, one word per token, which is approximate; the JSON
  says so (``prompt_tokenizer``) and the input lengths are then taken from the server's
  ``usage.prompt_tokens``.

``count_prompt`` counts what the server will see: the prompt with its special tokens, and
for chat requests through the server, the chat template too.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from servewise.bench.http import HttpFailure, HttpPool
from servewise.errors import FormatError, SourceError, UsageError


class PromptTokenizer(Protocol):
    """What prompt building needs from a tokenizer."""

    description: str
    """Named in the JSON output (``prompt_tokenizer``)."""
    exact: bool
    """Whether :meth:`count_prompt` counts exactly what the server will count."""

    async def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` without special tokens."""
        ...

    async def decode(self, ids: Sequence[int]) -> str:
        """Text of ``ids``."""
        ...

    async def count_prompt(self, text: str) -> int:
        """Tokens the server will count for a prompt of ``text`` (special tokens included)."""
        ...


class LocalTokenizer:
    """A ``tokenizer.json`` on disk (Hugging Face ``tokenizers``)."""

    def __init__(self, path: Path, *, chat: bool = False) -> None:
        from tokenizers import Tokenizer

        file = path / "tokenizer.json" if path.is_dir() else path
        if not file.is_file():
            raise UsageError(
                f"no tokenizer.json at {path}",
                hint="pass --tokenizer a model folder that holds tokenizer.json, or the file",
                path=str(path),
            )
        try:
            self._tokenizer = Tokenizer.from_file(str(file))
        except Exception as error:  # the library raises bare Exceptions for bad files
            raise SourceError(
                f"cannot read the tokenizer {file}: {error}",
                hint="the file must be a Hugging Face tokenizer.json",
                path=str(file),
            ) from None
        self.description = f"local tokenizer {file}"
        # The local file has no chat template: for chat the template's tokens are unknown.
        self.exact = not chat

    async def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` without special tokens."""
        return list(self._tokenizer.encode(text, add_special_tokens=False).ids)

    async def decode(self, ids: Sequence[int]) -> str:
        """Text of ``ids``."""
        return str(self._tokenizer.decode(list(ids), skip_special_tokens=False))

    async def count_prompt(self, text: str) -> int:
        """Tokens of ``text`` with the tokenizer's special tokens (BOS) added."""
        return len(self._tokenizer.encode(text, add_special_tokens=True).ids)

    def count_chunks(self, texts: Sequence[str]) -> list[int]:
        """Tokens per streamed piece: each token counts where its last character arrived."""
        ends = []
        position = 0
        for text in texts:
            position += len(text)
            ends.append(position)
        counts = [0] * len(texts)
        encoding = self._tokenizer.encode("".join(texts), add_special_tokens=False)
        for _, stop in encoding.offsets:
            index = bisect.bisect_left(ends, max(stop, 1))
            counts[min(index, len(counts) - 1)] += 1
        return counts


class ServerTokenizer:
    """The server's ``/tokenize`` and ``/detokenize`` endpoints."""

    def __init__(self, pool: HttpPool, base_url: str, model: str, *,
                 chat: bool = False) -> None:
        self._pool = pool
        self._base = base_url
        self._model = model
        self._chat = chat
        self.description = f"server {base_url}/tokenize"
        self.exact = True

    async def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        try:
            status, found = await self._pool.call_json("POST", path, body)
        except (HttpFailure, FormatError) as error:
            raise SourceError(f"{self._base}{path} failed: {error}",
                              hint="pass --tokenizer PATH to tokenize locally",
                              url=f"{self._base}{path}") from None
        if status != 200 or not isinstance(found, dict):
            raise SourceError(
                f"{self._base}{path} answered {status}: {json.dumps(found)[:300]}",
                hint="pass --tokenizer PATH to tokenize locally",
                url=f"{self._base}{path}",
            )
        return found

    async def available(self) -> bool:
        """Whether the server has vLLM's ``/tokenize`` (a probe; False on 404, any failure,
        or another server's endpoint of that name: llama.cpp's takes ``content``, not
        ``prompt``, and answers without ``count``)."""
        try:
            found = await self._post("/tokenize", {"model": self._model, "prompt": "hello",
                                                   "add_special_tokens": False})
        except SourceError:
            return False
        tokens, count = found.get("tokens"), found.get("count")
        return isinstance(tokens, list) and bool(tokens) and count == len(tokens)

    async def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` without special tokens."""
        found = await self._post("/tokenize", {"model": self._model, "prompt": text,
                                               "add_special_tokens": False})
        return [int(i) for i in found["tokens"]]

    async def decode(self, ids: Sequence[int]) -> str:
        """Text of ``ids``."""
        found = await self._post("/detokenize", {"model": self._model, "tokens": list(ids)})
        return str(found["prompt"])

    async def count_prompt(self, text: str) -> int:
        """The server's own count for this prompt (through the chat template for chat)."""
        if self._chat:
            body: dict[str, Any] = {"model": self._model, "add_generation_prompt": True,
                                    "messages": [{"role": "user", "content": text}]}
        else:
            body = {"model": self._model, "prompt": text, "add_special_tokens": True}
        return int((await self._post("/tokenize", body))["count"])
