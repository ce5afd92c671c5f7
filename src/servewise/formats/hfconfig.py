"""A Hugging Face ``config.json`` (and a checkpoint's ``hf_quant_config.json``), parsed.

Only the JSON is read here; what the fields mean for memory is
:mod:`servewise.plan.model_spec`'s business. Multimodal configs keep the language model's
fields under ``text_config`` (Gemma 3, Qwen3.5, Kimi-VL); :attr:`HfConfig.text` is that
sub-config with the top-level fields the text model inherits (dtype, quantization)::

    config = parse_config(data, source="config.json")
    config.model_type, config.text["num_hidden_layers"]
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from servewise.errors import FormatError

#: Keys of the top-level config the text model inherits when it has a ``text_config``.
_INHERITED = ("torch_dtype", "dtype", "quantization_config", "tie_word_embeddings")

#: Where multimodal configs keep the language model's fields.
_TEXT_KEYS = ("text_config", "llm_config", "language_config")


@dataclass(frozen=True)
class HfConfig:
    """A parsed ``config.json``: the whole document and its text model's fields."""

    raw: Mapping[str, Any]
    text: Mapping[str, Any]
    source: str | None = None

    @property
    def model_type(self) -> str:
        """The text model's ``model_type`` (the top-level one when it has none)."""
        inner = self.text.get("model_type")
        outer = self.raw.get("model_type")
        return str(inner or outer or "")

    @property
    def architectures(self) -> tuple[str, ...]:
        """``architectures`` of the top level (what an engine loads)."""
        value = self.raw.get("architectures") or ()
        return tuple(str(item) for item in value) if isinstance(value, list) else ()

    @property
    def is_multimodal(self) -> bool:
        """Whether the config wraps a text model with other towers (vision, audio)."""
        return any(key in self.raw for key in _TEXT_KEYS) or "vision_config" in self.raw

    @property
    def quantization(self) -> Mapping[str, Any]:
        """``quantization_config`` (empty when the checkpoint is not quantized)."""
        value = self.text.get("quantization_config") or self.raw.get("quantization_config")
        return value if isinstance(value, dict) else {}

    @property
    def dtype(self) -> str:
        """The checkpoint's declared dtype (``torch_dtype`` or ``dtype``), e.g. ``bfloat16``."""
        for mapping in (self.text, self.raw):
            for key in ("torch_dtype", "dtype"):
                value = mapping.get(key)
                if isinstance(value, str) and value:
                    return value
        return ""


#: The numbers of a config that size memory and lists, with the range a real model has
#: (0 is "not given"): a config beyond them is refused before anything is sized by them.
NUMBER_RANGES: dict[str, tuple[int, int]] = {
    **dict.fromkeys(("num_hidden_layers", "n_layer", "num_layers", "mtp_num_hidden_layers",
                     "num_nextn_predict_layers", "first_k_dense_replace"), (0, 10_000)),
    **dict.fromkeys(("hidden_size", "d_model", "n_embd", "intermediate_size",
                     "ffn_hidden_size", "moe_intermediate_size", "head_dim", "kv_lora_rank",
                     "q_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim",
                     "index_head_dim"), (0, 2**20)),
    **dict.fromkeys(("num_attention_heads", "n_head", "num_key_value_heads",
                     "n_routed_experts", "num_experts", "num_local_experts",
                     "num_experts_per_tok", "n_shared_experts"), (0, 2**16)),
    **dict.fromkeys(("vocab_size", "padded_vocab_size"), (0, 2**26)),
    **dict.fromkeys(("max_position_embeddings", "seq_length", "max_seq_len",
                     "sliding_window"), (0, 2**40)),
}
#: How deeply a config's JSON may nest (real ones: under 10).
MAX_DEPTH = 64


def check_numbers(fields: Mapping[str, Any], source: str | None) -> None:
    """Raise :class:`FormatError` for a sizing number outside :data:`NUMBER_RANGES`."""
    for key, (low, high) in NUMBER_RANGES.items():
        value = fields.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and not low <= value <= high:
            raise FormatError("config.json", offset=0, expected=f"{key} from {low} to {high}",
                              found=f"{key} = {value}", source=source,
                              hint="this is not a real model's config; fix the number or "
                              "point at the model's own config.json")


def _depth(value: Any, limit: int) -> int:
    """How deeply ``value`` nests, counting no further than ``limit + 1`` (no recursion)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return depth
        deepest = max(deepest, depth)
        children = item.values() if isinstance(item, dict) else item if isinstance(
            item, list) else ()
        stack.extend((child, depth + 1) for child in children
                     if isinstance(child, (dict, list)))
    return deepest


def _json_object(data: bytes, what: str, source: str | None) -> dict[str, Any]:
    try:
        document = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise FormatError(what, offset=getattr(exc, "pos", 0) or 0, expected="UTF-8 JSON",
                          found=f"{type(exc).__name__}: {exc}", source=source) from None
    except RecursionError:
        raise FormatError(what, offset=0, expected=f"JSON nested at most {MAX_DEPTH} deep",
                          found="deeper nesting than Python's JSON reader allows",
                          source=source) from None
    if _depth(document, MAX_DEPTH) > MAX_DEPTH:
        raise FormatError(what, offset=0, expected=f"JSON nested at most {MAX_DEPTH} deep",
                          found=f"more than {MAX_DEPTH} levels", source=source)
    if not isinstance(document, dict):
        raise FormatError(what, offset=0, expected="a JSON object",
                          found=type(document).__name__, source=source)
    return document


def config_from_mapping(document: Mapping[str, Any], source: str | None = None) -> HfConfig:
    """An :class:`HfConfig` from an already-decoded ``config.json`` document."""
    text: Mapping[str, Any] = document
    for key in _TEXT_KEYS:
        inner = document.get(key)
        if isinstance(inner, dict):
            merged = {k: document[k] for k in _INHERITED if k in document and k not in inner}
            text = {**merged, **inner}
            break
    check_numbers(text, source)
    if not (text.get("model_type") or document.get("model_type") or document.get("architectures")):
        raise FormatError(
            "config.json",
            offset=0,
            expected="a Hugging Face model config (model_type or architectures)",
            found="neither key",
            source=source,
            hint="point at the model's folder or repository, whose config.json names its "
            "architecture",
        )
    return HfConfig(dict(document), dict(text), source)


def parse_config(data: bytes, *, source: str | None = None) -> HfConfig:
    """Parse ``config.json`` bytes."""
    return config_from_mapping(_json_object(data, "config.json", source), source)


def parse_quant_config(data: bytes, *, source: str | None = None) -> dict[str, Any]:
    """Parse ``hf_quant_config.json`` (ModelOpt's quantization description)."""
    document = _json_object(data, "hf_quant_config.json", source)
    if not isinstance(document.get("quantization", {}), dict):
        raise FormatError("hf_quant_config.json", offset=0,
                          expected="a 'quantization' object",
                          found=type(document.get("quantization")).__name__, source=source)
    return document
