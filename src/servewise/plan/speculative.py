"""Speculative decoding as the engines count it: the draft's weights and its KV layers.

``--speculative-config`` takes vLLM's JSON (``{"method": "mtp", "num_speculative_tokens":
2}``, ``{"method": "eagle3", "model": "org/draft"}``, ``{"method": "ngram", ...}``). What
the engine adds to memory depends on where the draft comes from:

* **MTP** (DeepSeek V3/R1/V4, Qwen3-Next/3.5, GLM-4.5+ ...): the checkpoint's own
  multi-token-prediction layers are loaded as the draft (their weights are counted with the
  last pipeline stage) and each MTP layer has an attention layer whose KV pages join the
  pool like one more decoder layer (vLLM's draft layers are in the KV cache config).
* **EAGLE / EAGLE-3 / a draft model** (``"model"`` names it): the draft checkpoint's
  tensors are loaded on every rank of the last stage (sharded by the draft's TP, the
  target's by default; embeddings and head it shares with the target are absent from its
  checkpoint, so they are not counted twice), and its decoder layers' KV pages join the pool.
* **n-gram / suffix** lookup: no weights and no KV.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from servewise.errors import UsageError
from servewise.plan.model import ModelInfo
from servewise.plan.model_spec import LayerCache

FLAG = "--speculative-config"
MTP_METHODS = frozenset({"mtp", "deepseek_mtp", "qwen3_next_mtp", "qwen3_5_mtp", "glm4_moe_mtp",
                         "mimo_mtp", "ernie_mtp", "longcat_flash_mtp", "deepseek_v4_mtp"})
DRAFT_METHODS = frozenset({"eagle", "eagle3", "draft_model", "medusa", "mlp_speculator"})
LOOKUP_METHODS = frozenset({"ngram", "suffix", "ngram_gpu"})


@dataclass(frozen=True)
class Speculative:
    """A parsed ``--speculative-config`` with its draft resolved."""

    method: str
    num_tokens: int
    draft: ModelInfo | None = None
    draft_tp: int | None = None

    @property
    def uses_mtp(self) -> bool:
        """Whether the draft is the target checkpoint's own MTP layers."""
        return self.method in MTP_METHODS

    def extra_layers(self, target: ModelInfo) -> tuple[LayerCache, ...]:
        """The attention layers the draft adds to the KV cache, on the last stage."""
        if self.uses_mtp:
            attention = [layer for layer in target.spec.layers
                         if layer.kind not in ("gdn", "mamba2", "none")]
            if not attention:
                return ()
            return (attention[-1],) * target.spec.mtp_layers
        if self.draft is not None:
            return tuple(layer for layer in self.draft.spec.layers if layer.kind != "none")
        return ()

    def draft_weights_per_rank(self, tp: int) -> int:
        """Bytes of a separate draft model on one rank (MTP layers are the target's)."""
        if self.draft is None:
            return 0
        return self.draft.weights.total_bytes // max(self.draft_tp or tp, 1)

    def describe(self) -> str:
        """One line for the plan's notes."""
        if self.uses_mtp:
            return (f"speculative decoding: {self.method}, {self.num_tokens} token(s); the "
                    "checkpoint's MTP layers' weights and KV pages are counted")
        if self.draft is not None:
            return (f"speculative decoding: {self.method} draft {self.draft.ref} "
                    f"({self.draft.weights.total_bytes / 2**30:.2f} GiB), {self.num_tokens} "
                    "token(s); its weights and KV pages are counted")
        return f"speculative decoding: {self.method} lookup: no weights or KV added"


def parse_speculative(text: str) -> dict[str, Any]:
    """The JSON of ``--speculative-config``, checked for its method and token count."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{FLAG}: not JSON ({exc.msg} at character {exc.pos})",
                         hint=f"""give {FLAG} '{{"method": "mtp", "num_speculative_tokens": 1}}'""",
                         flag=FLAG, found=text) from None
    if not isinstance(data, dict):
        raise UsageError(f"{FLAG}: expected a JSON object", flag=FLAG, found=text,
                         hint="give an object with method and num_speculative_tokens")
    tokens = data.get("num_speculative_tokens", 1)
    if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 1:
        raise UsageError(f"{FLAG}: num_speculative_tokens must be a whole number >= 1",
                         flag=FLAG, found=tokens, hint="give num_speculative_tokens 1, 2 or 3")
    method = data.get("method")
    if method is None:
        method = "draft_model" if data.get("model") else "mtp"
    if not isinstance(method, str) or method not in MTP_METHODS | DRAFT_METHODS | LOOKUP_METHODS:
        known = ", ".join(sorted(MTP_METHODS | DRAFT_METHODS | LOOKUP_METHODS))
        raise UsageError(f"{FLAG}: unknown method {method!r}", flag=FLAG, found=method,
                         hint=f"use one of {known}")
    return {**data, "method": method, "num_speculative_tokens": tokens}


def resolve_speculative(data: dict[str, Any], target: ModelInfo,
                        load: Callable[[str], ModelInfo]) -> Speculative:
    """A :class:`Speculative` for ``target``; ``load`` reads a draft model by reference."""
    method = str(data["method"])
    tokens = int(data["num_speculative_tokens"])
    if method in MTP_METHODS:
        if not target.spec.mtp_layers:
            raise UsageError(
                f"{FLAG}: method {method} needs the model's MTP layers, but {target.ref} has "
                "none (no num_nextn_predict_layers / mtp_num_hidden_layers in its config)",
                flag=FLAG, hint="use an EAGLE or draft model with \"model\", or ngram")
        return Speculative(method, tokens)
    if method in LOOKUP_METHODS:
        return Speculative(method, tokens)
    ref = data.get("model")
    if not isinstance(ref, str) or not ref:
        raise UsageError(f"{FLAG}: method {method} needs \"model\" (the draft checkpoint)",
                         flag=FLAG, hint="add \"model\": \"org/name\", a folder or a card id")
    draft_tp = data.get("draft_tensor_parallel_size")
    if draft_tp is not None and (not isinstance(draft_tp, int) or draft_tp < 1):
        raise UsageError(f"{FLAG}: draft_tensor_parallel_size must be >= 1", flag=FLAG,
                         found=draft_tp, hint="drop it to use the target's TP")
    return Speculative(method, tokens, load(ref), draft_tp)
