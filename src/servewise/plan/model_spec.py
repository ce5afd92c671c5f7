"""Architecture specs: what a ``config.json`` means for memory, layer by layer.

:func:`model_spec` turns a parsed config into a :class:`ModelSpec`: the per-layer cache
kind (full or sliding-window attention, MLA, DeepSeek sparse attention, DeepSeek-V4
compressed attention, gated-DeltaNet or Mamba-2 state, or nothing), the attention shape,
the MoE shape and the draft (MTP) layers. Families covered: dense MHA/GQA (Llama, Qwen2/3,
Mistral, Phi-3), Gemma 2/3 (5:1 and 1:1 sliding windows), gpt-oss, MoE (Mixtral, Qwen2/3-MoE,
GLM-4.x MoE), MLA (DeepSeek V2/V3/R1, Kimi K2, Kimi-VL), DeepSeek V3.2 (sparse attention),
DeepSeek V4 (compressed KV), and the linear hybrids Qwen3-Next / Qwen3.5 and Nemotron-H.

An architecture outside that list is never guessed: the spec comes back with
``supported=False``, the fields that were read, and the reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from servewise.formats.hfconfig import NUMBER_RANGES, HfConfig

#: ``model_type`` values read as a plain decoder with full (or uniformly windowed) attention.
DENSE_TYPES = frozenset(
    {"llama", "mistral", "qwen2", "qwen3", "phi3", "granite", "olmo2", "internlm2",
     "mixtral", "qwen2_moe", "qwen3_moe", "glm4_moe", "glm4", "ministral", "llama4_text",
     "cohere", "cohere2", "exaone", "smollm3", "starcoder2", "gemma", "minimax_m2",
     "llama4", "qwen3_vl_text", "qwen3_vl_moe_text"}
)
MLA_TYPES = frozenset({"deepseek_v2", "deepseek_v3", "kimi_k2", "deepseek_v32", "glm_moe_dsa",
                       "kimi_vl"})
GEMMA_WINDOWED = frozenset({"gemma2", "gemma3", "gemma3_text"})
GDN_TYPES = frozenset({"qwen3_next", "qwen3_5", "qwen3_5_text", "qwen3_5_moe",
                       "qwen3_5_moe_text"})
MAMBA_TYPES = frozenset({"nemotron_h"})
#: Kimi Delta Attention (linear, GDN-shaped state) interleaved with MLA layers.
KDA_TYPES = frozenset({"kimi_linear"})

#: transformers' defaults for fields Gemma 3's published configs leave out
#: (``Gemma3TextConfig``; google/gemma-3-27b-it's text_config relies on them).
GEMMA3_TEXT_DEFAULTS: Mapping[str, Any] = {
    "vocab_size": 262208,
    "sliding_window_pattern": 6,
    "head_dim": 256,
    "num_attention_heads": 8,
    "num_key_value_heads": 4,
    "max_position_embeddings": 131072,
    "tie_word_embeddings": True,
}
GEMMA3_SOURCE = "https://github.com/huggingface/transformers/blob/main/src/transformers/models/gemma3/configuration_gemma3.py"


@dataclass(frozen=True)
class LayerCache:
    """What one decoder layer keeps per token (or per sequence, for linear layers)."""

    kind: str
    """``full``, ``sliding``, ``mla``, ``dsa`` (MLA + indexer), ``dsv4``, ``gdn``, ``mamba2``
    or ``none`` (an MLP-only layer)."""
    kv_heads: int = 0
    head_k: int = 0
    head_v: int = 0
    window: int = 0
    latent: int = 0
    """MLA: the cached latent width, ``kv_lora_rank + qk_rope_head_dim`` (576 for DeepSeek)."""
    compress_ratio: int = 0
    """DeepSeek-V4: 0 (sliding window only), 4 (C4, with indexer) or 128 (C128)."""
    index_head_dim: int = 0
    state_heads: int = 0
    """Linear layers: value heads (GDN) or Mamba heads, before TP."""
    state_k: int = 0
    state_v: int = 0
    conv_dim: int = 0
    conv_kernel: int = 0


@dataclass(frozen=True)
class MoeSpec:
    """The mixture-of-experts shape."""

    experts: int
    top_k: int
    intermediate: int
    shared_experts: int = 0
    shared_intermediate: int = 0
    dense_layers: int = 0
    """Leading layers with a dense MLP instead of experts (DeepSeek ``first_k_dense_replace``)."""


@dataclass(frozen=True)
class ModelSpec:
    """A model's shape as far as memory is concerned."""

    model_type: str
    architecture: str
    family: str
    supported: bool
    hidden: int
    vocab: int
    num_layers: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    max_position: int
    dtype: str
    quant_method: str
    tie_embeddings: bool
    layers: tuple[LayerCache, ...]
    moe: MoeSpec | None = None
    mtp_layers: int = 0
    unsupported_reason: str = ""
    notes: tuple[str, ...] = field(default=())

    @property
    def uses_mla(self) -> bool:
        """Whether attention caches one shared latent (MLA): replicated on every TP rank."""
        return any(layer.kind in ("mla", "dsa", "dsv4") for layer in self.layers)

    @property
    def layer_kinds(self) -> dict[str, int]:
        """How many layers of each cache kind."""
        counts: dict[str, int] = {}
        for layer in self.layers:
            counts[layer.kind] = counts.get(layer.kind, 0) + 1
        return counts

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data."""
        return {
            "model_type": self.model_type,
            "architecture": self.architecture,
            "family": self.family,
            "supported": self.supported,
            "unsupported_reason": self.unsupported_reason or None,
            "hidden_size": self.hidden,
            "vocab_size": self.vocab,
            "num_layers": self.num_layers,
            "num_attention_heads": self.heads,
            "num_kv_heads": self.kv_heads,
            "head_dim": self.head_dim,
            "intermediate_size": self.intermediate,
            "max_position_embeddings": self.max_position,
            "dtype": self.dtype,
            "quant_method": self.quant_method or None,
            "tie_word_embeddings": self.tie_embeddings,
            "layer_kinds": self.layer_kinds,
            "moe": None if self.moe is None else {
                "experts": self.moe.experts,
                "top_k": self.moe.top_k,
                "moe_intermediate_size": self.moe.intermediate,
                "shared_experts": self.moe.shared_experts,
                "dense_layers": self.moe.dense_layers,
            },
            "mtp_layers": self.mtp_layers,
            "notes": list(self.notes),
        }


def _int(text: Mapping[str, Any], *keys: str, default: int = 0) -> int:
    for key in keys:
        value = text.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return default


def _quant_method(config: HfConfig) -> str:
    quant = config.quantization
    method = quant.get("quant_method")
    return str(method) if method else ""


def _layer_types(text: Mapping[str, Any], count: int) -> list[str] | None:
    types = text.get("layer_types")
    if isinstance(types, list) and len(types) >= count and all(isinstance(t, str) for t in types):
        return [str(t) for t in types[:count]]
    return None


def _attention_layers(text: Mapping[str, Any], model_type: str, count: int, kv_heads: int,
                      head_dim: int) -> tuple[list[LayerCache], list[str]]:
    notes: list[str] = []
    window = _int(text, "sliding_window")
    types = _layer_types(text, count)
    full = LayerCache("full", kv_heads, head_dim, head_dim)

    def sliding() -> LayerCache:
        return LayerCache("sliding", kv_heads, head_dim, head_dim, window=window)

    if types is not None and window:
        return [sliding() if t == "sliding_attention" else full for t in types], notes
    if model_type in GEMMA_WINDOWED and window:
        if model_type == "gemma2":
            # Gemma 2: even layers use the window (transformers Gemma2 layer_types)
            return [sliding() if i % 2 == 0 else full for i in range(count)], notes
        pattern = _int(text, "sliding_window_pattern",
                       default=int(GEMMA3_TEXT_DEFAULTS["sliding_window_pattern"]))
        return [sliding() if (i + 1) % pattern else full for i in range(count)], notes
    if model_type == "qwen2" or model_type == "qwen3":
        if text.get("use_sliding_window") and window:
            first = _int(text, "max_window_layers", default=count)
            return [sliding() if i >= first else full for i in range(count)], notes
        return [full] * count, notes
    chunk = _int(text, "attention_chunk_size")
    if model_type.startswith("llama4") and chunk:
        # Llama 4: RoPE layers attend within a chunk, NoPE layers (every 4th) globally;
        # vLLM keeps a chunk plus the batch for chunked layers (ChunkedLocalAttentionSpec),
        # read here as a window of attention_chunk_size.
        rope = text.get("no_rope_layers")
        if not (isinstance(rope, list) and len(rope) >= count):
            interval = _int(text, "no_rope_layer_interval", default=4)
            rope = [int((i + 1) % interval != 0) for i in range(count)]
        notes.append(f"chunked local attention ({chunk}-token chunks) on the RoPE layers, "
                     "estimated as a sliding window of the chunk size")
        chunked = LayerCache("sliding", kv_heads, head_dim, head_dim, window=chunk)
        return [chunked if rope[i] else full for i in range(count)], notes
    if window and model_type in ("mistral", "mixtral", "ministral", "phi3", "starcoder2"):
        notes.append(f"sliding window {window} on every layer")
        return [sliding()] * count, notes
    return [full] * count, notes


def _dsv4_ratios_from_layer_types(text: Mapping[str, Any], count: int) -> list[int] | None:
    """transformers 5 writes DeepSeek-V4's ``compress_ratios`` as ``layer_types`` names."""
    types = _layer_types(text, count)
    rates = text.get("compress_rates")
    if types is None or not isinstance(rates, dict):
        return None
    ratios = []
    for kind in types:
        if kind == "sliding_attention":
            ratios.append(0)
        elif isinstance(rates.get(kind), int):
            ratios.append(int(rates[kind]))
        else:
            return None
    return ratios


def _moe(text: Mapping[str, Any]) -> MoeSpec | None:
    experts = _int(text, "n_routed_experts", "num_experts", "num_local_experts")
    if experts <= 1:
        return None
    shared = _int(text, "n_shared_experts")
    shared_intermediate = _int(text, "shared_expert_intermediate_size")
    if shared_intermediate and not shared:
        shared = 1
    return MoeSpec(
        experts=experts,
        top_k=_int(text, "num_experts_per_tok", "num_experts_per_token", "moe_topk", "top_k",
                   default=1),
        intermediate=_int(text, "moe_intermediate_size", "intermediate_size"),
        shared_experts=shared,
        shared_intermediate=shared_intermediate or _int(text, "moe_intermediate_size") * shared,
        dense_layers=_int(text, "first_k_dense_replace"),
    )


def _kimi_linear(base: ModelSpec, text: Mapping[str, Any], count: int,
                 notes: list[str]) -> ModelSpec:
    """Kimi-Linear: KDA layers (a gated delta rule, vLLM's GDN state shapes: one
    ``num_heads x head_dim x head_dim`` state and short convolutions over q, k and v) and
    MLA layers, as ``linear_attn_config`` lists them (1-based layer numbers)."""
    linear = text.get("linear_attn_config")
    if not isinstance(linear, Mapping):
        return replace(base, family="kda-hybrid", unsupported_reason="kimi_linear config "
                       "without linear_attn_config")
    kda = linear.get("kda_layers")
    if not isinstance(kda, list) or not all(isinstance(i, int) for i in kda):
        return replace(base, family="kda-hybrid", unsupported_reason="kimi_linear config "
                       "without linear_attn_config.kda_layers")
    kda_set = {int(i) - 1 for i in kda}
    heads = _int(linear, "num_heads")
    dim = _int(linear, "head_dim")
    state = LayerCache("gdn", state_heads=heads, state_k=dim, state_v=dim,
                       conv_dim=3 * heads * dim,
                       conv_kernel=_int(linear, "short_conv_kernel_size", default=4))
    latent = _int(text, "kv_lora_rank") + _int(text, "qk_rope_head_dim")
    mla = LayerCache("mla", 1, latent, 0, latent=latent)
    layers = [state if i in kda_set else mla for i in range(count)]
    notes = [*notes, "KDA layers sized as vLLM's GDN state (KimiGatedDeltaNetAttention "
             "subclasses GatedDeltaNetAttention): the state dtype follows the model's"]
    return replace(base, family="kda-hybrid", supported=True, layers=tuple(layers),
                   notes=tuple(notes))


def model_spec(config: HfConfig) -> ModelSpec:
    """Read a config into a :class:`ModelSpec` (``supported=False`` for unknown families)."""
    model_type = config.model_type
    text: dict[str, Any] = dict(config.text)
    notes: list[str] = []
    if model_type in ("gemma3", "gemma3_text"):
        missing = [key for key in GEMMA3_TEXT_DEFAULTS if key not in text]
        for key in missing:
            text[key] = GEMMA3_TEXT_DEFAULTS[key]
        if missing:
            notes.append("transformers defaults used for " + ", ".join(missing) +
                         f" ({GEMMA3_SOURCE})")
    hidden = _int(text, "hidden_size", "d_model", "n_embd")
    heads = _int(text, "num_attention_heads", "n_head")
    count = _int(text, "num_hidden_layers", "n_layer", "num_layers")
    kv_heads = _int(text, "num_key_value_heads", default=heads)
    head_dim = _int(text, "head_dim", default=hidden // heads if heads else 0)
    moe = _moe(text)
    architecture = config.architectures[0] if config.architectures else ""
    tie = bool(text.get("tie_word_embeddings", config.raw.get("tie_word_embeddings", False)))
    base = ModelSpec(
        model_type=model_type,
        architecture=architecture,
        family="unknown",
        supported=False,
        hidden=hidden,
        vocab=_int(text, "vocab_size", "padded_vocab_size"),
        num_layers=count,
        heads=heads,
        kv_heads=kv_heads,
        head_dim=head_dim,
        intermediate=_int(text, "intermediate_size", "ffn_hidden_size"),
        max_position=_int(text, "max_position_embeddings", "seq_length", "max_seq_len"),
        dtype=config.dtype or "bfloat16",
        quant_method=_quant_method(config),
        tie_embeddings=tie,
        layers=(),
        moe=moe,
        notes=tuple(notes),
    )
    if not (hidden and heads and count):
        return replace(base, unsupported_reason="config.json lacks hidden_size, "
                       "num_attention_heads or num_hidden_layers")
    low, high = NUMBER_RANGES["num_hidden_layers"]
    if not low <= count <= high:  # bounds the per-layer lists below ([full] * count)
        return replace(base, unsupported_reason=f"num_hidden_layers = {count}: expected "
                       f"{low} to {high}")
    if model_type in MLA_TYPES:
        latent = _int(text, "kv_lora_rank") + _int(text, "qk_rope_head_dim")
        if not _int(text, "kv_lora_rank"):
            layers = [LayerCache("full", kv_heads, head_dim, head_dim)] * count
            family = "gqa"
        else:
            index = _int(text, "index_head_dim")
            kind = "dsa" if index and model_type in ("deepseek_v32", "glm_moe_dsa") else "mla"
            layers = [LayerCache(kind, 1, latent, 0, latent=latent, index_head_dim=index)] * count
            family = kind
        return replace(base, family=family, supported=True, layers=tuple(layers),
                         mtp_layers=_int(text, "num_nextn_predict_layers"), notes=tuple(notes))
    if model_type == "deepseek_v4":
        ratios = text.get("compress_ratios") or _dsv4_ratios_from_layer_types(text, count)
        if not isinstance(ratios, list) or len(ratios) < count:
            return replace(base, family="dsv4", supported=False, layers=(), notes=tuple(notes),
                             unsupported_reason="deepseek_v4 config without compress_ratios "
                             "for every layer")
        layers = [
            LayerCache("dsv4", 1, head_dim, 0, window=_int(text, "sliding_window", default=128),
                       latent=head_dim, compress_ratio=int(ratio) if int(ratio) > 1 else 0,
                       index_head_dim=_int(text, "index_head_dim") if int(ratio) == 4 else 0)
            for ratio in ratios[:count]
        ]
        return replace(base, family="dsv4", supported=True, layers=tuple(layers),
                         mtp_layers=_int(text, "num_nextn_predict_layers"), notes=tuple(notes))
    if model_type in GDN_TYPES:
        types = _layer_types(text, count)
        interval = _int(text, "full_attention_interval", default=4)
        if types is None:
            types = ["full_attention" if (i + 1) % interval == 0 else "linear_attention"
                     for i in range(count)]
        nk = _int(text, "linear_num_key_heads")
        nv = _int(text, "linear_num_value_heads")
        dk = _int(text, "linear_key_head_dim")
        dv = _int(text, "linear_value_head_dim")
        gdn = LayerCache("gdn", state_heads=nv, state_k=dk, state_v=dv,
                         conv_dim=2 * nk * dk + nv * dv,
                         conv_kernel=_int(text, "linear_conv_kernel_dim", default=4))
        full = LayerCache("full", kv_heads, head_dim, head_dim)
        layers = [full if t == "full_attention" else gdn for t in types]
        return replace(base, family="gdn-hybrid", supported=True, layers=tuple(layers),
                         mtp_layers=_int(text, "mtp_num_hidden_layers",
                                         "num_nextn_predict_layers"),
                         notes=tuple(notes))
    if model_type in KDA_TYPES:
        return _kimi_linear(base, text, count, notes)
    if model_type in MAMBA_TYPES:
        pattern = str(text.get("hybrid_override_pattern") or "")
        if len(pattern) < count:
            return replace(base, family="mamba-hybrid", supported=False, layers=(),
                             notes=tuple(notes), unsupported_reason="nemotron_h config "
                             "without a hybrid_override_pattern for every layer")
        mheads = _int(text, "mamba_num_heads")
        mdim = _int(text, "mamba_head_dim")
        state = _int(text, "ssm_state_size")
        groups = _int(text, "n_groups", default=1)
        mamba = LayerCache("mamba2", state_heads=mheads, state_k=mdim, state_v=state,
                           conv_dim=mheads * mdim + 2 * groups * state,
                           conv_kernel=_int(text, "conv_kernel", default=4))
        attn = LayerCache("full", kv_heads, head_dim, head_dim)
        chosen = {"M": mamba, "*": attn}
        layers = [chosen.get(symbol, LayerCache("none")) for symbol in pattern[:count]]
        return replace(base, family="mamba-hybrid", supported=True, layers=tuple(layers),
                         notes=tuple(notes))
    if model_type in DENSE_TYPES or model_type in GEMMA_WINDOWED or model_type == "gpt_oss":
        layers, more = _attention_layers(text, model_type, count, kv_heads, head_dim)
        kinds = {layer.kind for layer in layers}
        family = "moe" if moe else "dense"
        if "sliding" in kinds:
            family += "-sliding" if kinds == {"sliding"} else "-hybrid-sliding"
        return replace(base, family=family, supported=True, layers=tuple(layers),
                         notes=tuple(notes + more))
    return replace(
        base,
        unsupported_reason=f"model_type {model_type!r} ({architecture or 'no architectures'}) "
        "is not a family servewise knows; its KV cache layout is not guessed",
    )
