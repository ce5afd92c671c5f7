"""A checkpoint's tensor list computed from its ``config.json`` alone (no weight files).

When only the config is at hand (a folder with ``config.json`` and nothing else, a user
card, a config-only bundled card), the tensors are *computed*: each layer's projections from
the shapes the config gives (hidden size, heads, KV heads, head size, MLP and expert sizes,
MLA ranks, linear-attention heads), each in the dtype the checkpoint's quantization gives it:

* none: the config's ``torch_dtype``;
* FP8 block (``quant_method: fp8`` with ``weight_block_size``): ``F8_E4M3`` weights and one
  ``F32`` ``weight_scale_inv`` per block; FP8 per tensor (ModelOpt, compressed-tensors
  ``float`` 8 bit): ``F8_E4M3`` and ``F32`` scalars;
* NVFP4 (ModelOpt ``NVFP4``, compressed-tensors 4-bit ``float``): two values per ``U8``, one
  ``F8_E4M3`` scale per 16 and ``F32`` scalars; MXFP4 (``quant_method: mxfp4``, gpt-oss):
  the experts as ``U8`` blocks and one ``U8`` scale per 32;
* int4 (AWQ, GPTQ, compressed-tensors ``pack-quantized``): eight values per ``I32``, one
  ``F16`` scale (and packed zero point) per group.

Embeddings, head, norms and routers stay in the config's dtype; modules the quantization
config leaves out (``ignore``, ``modules_to_not_convert``, ``exclude_modules``) too. What is
not computed is said in the notes: vision and audio towers, and anything of a family the
planner does not know (:func:`computed_tensors` raises for those). How far such estimates
are from the tensor lists of the bundled cards is measured by ``tests/plan/
test_config_weights.py`` and shown in docs/check.md.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from servewise.errors import SourceError
from servewise.formats.checkpoint import WeightTensor
from servewise.formats.hfconfig import HfConfig
from servewise.formats.safetensors import DTYPE_BITS
from servewise.plan.model_spec import GDN_TYPES, ModelSpec, model_spec

COMPUTED_NOTE = ("weights computed from config.json (shapes, dtypes, quantization_config), "
                 "not read from the checkpoint's files")

MEASURED_MISS = ("on the 14 bundled cards with a tensor list whose family this computes, such "
                 "estimates match the text model's bytes within 0.003 % on 13 and miss Kimi-K2 "
                 "by 2.1 % (an MTP layer its config does not declare); with a vision tower, "
                 "which is not computed, the whole checkpoint is up to 3.8 % larger")
"""How far computed weights are from the bundled cards (``tests/plan/test_config_weights.py``
measures it again; docs/check.md has the table)."""

_DTYPES = {"bfloat16": "BF16", "float16": "F16", "half": "F16", "float32": "F32",
           "float": "F32"}

#: Families whose layers this module writes out; others raise (their weights are not guessed).
COMPUTED_FAMILIES = ("dense", "moe", "mla", "dsa", "gdn-hybrid")


@dataclass(frozen=True)
class Quant:
    """How a checkpoint stores its linear weights."""

    kind: str
    """``none``, ``fp8_block``, ``fp8_tensor``, ``fp8_channel``, ``nvfp4``, ``mxfp4``,
    ``int4``."""
    block: tuple[int, int] = (128, 128)
    group: int = 128
    scale_dtype: str = "F32"
    skip: tuple[str, ...] = ()
    """Module names (or ``re:`` patterns) kept unquantized."""
    per_module: tuple[tuple[str, str], ...] = ()
    """ModelOpt ``MIXED_PRECISION``: (module, kind) for each quantized module; a module
    absent from it is not quantized."""

    def kind_of(self, module: str) -> str:
        """How ``module`` is stored: its own entry (or its parent's: ``mlp.experts`` for
        each expert's projections), else the checkpoint-wide kind."""
        if not self.per_module:
            return "none" if self.skips(module) else self.kind
        table = dict(self.per_module)
        name = module.replace(".*", "")
        while name:
            if name in table:
                return table[name]
            name = name.rpartition(".")[0]
        return "none"

    def skips(self, name: str) -> bool:
        """Whether the module ``name`` is left unquantized."""
        for item in self.skip:
            if item.startswith("re:"):
                if re.search(item[3:], name):
                    return True
            elif item and (name == item or name.endswith("." + item)
                           or f".{item}." in f".{name}." or name.startswith(item + ".")):
                return True
        return False


def _skips(mapping: Mapping[str, Any]) -> tuple[str, ...]:
    found: list[str] = []
    for key in ("ignore", "ignored_layers", "modules_to_not_convert", "exclude_modules"):
        value = mapping.get(key)
        if isinstance(value, list):
            found += [str(item).removesuffix("*").rstrip(".") if not str(item).startswith(
                "re:") else str(item) for item in value]
    return tuple(found)


def quant_of(config: HfConfig, hf_quant: Mapping[str, Any] | None) -> tuple[Quant, list[str]]:
    """The storage of the checkpoint's linear weights, and notes on what was assumed."""
    notes: list[str] = []
    q = dict(config.quantization)
    modelopt = (hf_quant or {}).get("quantization")
    if isinstance(modelopt, Mapping) and not q:
        q = {"quant_method": "modelopt", **modelopt}
    method = str(q.get("quant_method") or "").lower()
    algo = str(q.get("quant_algo") or "").upper()
    skip = _skips(q)
    if not method:
        return Quant("none"), notes
    if method == "fp8":
        block = q.get("weight_block_size")
        if isinstance(block, list) and len(block) == 2:
            scale = "F8_E8M0" if str(q.get("scale_fmt") or "") == "ue8m0" else "F32"
            return Quant("fp8_block", block=(int(block[0]), int(block[1])), scale_dtype=scale,
                         skip=skip), notes
        return Quant("fp8_tensor", skip=skip), notes
    if method == "modelopt" or algo:
        layers = q.get("quantized_layers")
        if algo == "MIXED_PRECISION" and isinstance(layers, Mapping):
            kinds = {name: _modelopt_kind(str((entry or {}).get("quant_algo") or ""))
                     for name, entry in layers.items() if isinstance(entry, Mapping)}
            return Quant("mixed", group=16, skip=skip,
                         per_module=tuple(sorted(kinds.items()))), notes
        if "NVFP4" in algo:
            return Quant("nvfp4", group=16, skip=skip), notes
        if "FP8" in algo:
            return Quant("fp8_tensor", skip=skip), notes
    if method == "mxfp4":
        return Quant("mxfp4", group=32, skip=skip), notes
    if method in ("awq", "gptq", "awq_marlin", "gptq_marlin"):
        return Quant("int4", group=int(q.get("group_size") or 128), skip=skip), notes
    if method == "compressed-tensors":
        groups = q.get("config_groups")
        weights: Mapping[str, Any] = {}
        if isinstance(groups, Mapping) and groups:
            first = next(iter(groups.values()))
            if isinstance(first, Mapping) and isinstance(first.get("weights"), Mapping):
                weights = first["weights"]
        bits, kind = int(weights.get("num_bits") or 16), str(weights.get("type") or "")
        group = int(weights.get("group_size") or 128)
        if bits == 8 and kind == "float":
            strategy = str(weights.get("strategy") or "tensor")
            if strategy == "block" and isinstance(weights.get("block_structure"), list):
                size = weights["block_structure"]
                return Quant("fp8_block", block=(int(size[0]), int(size[1])), skip=skip), notes
            return Quant("fp8_channel" if strategy == "channel" else "fp8_tensor",
                         skip=skip), notes
        if bits == 4 and kind == "float":
            return Quant("nvfp4", group=16, skip=skip), notes
        if bits == 4 and kind == "int":
            return Quant("int4", group=group, skip=skip), notes
    notes.append(f"quantization {method or algo!r} is not modelled: linear weights counted in "
                 f"{config.dtype or 'bfloat16'} (an upper bound)")
    return Quant("none"), notes


def _modelopt_kind(algo: str) -> str:
    """The storage of one ModelOpt ``quant_algo`` (``NVFP4``, ``W4A16_NVFP4``, ``FP8``)."""
    if "NVFP4" in algo.upper():
        return "nvfp4"
    if "FP8" in algo.upper():
        return "fp8_tensor"
    return "none"


class _Writer:
    """Collects the tensors of one checkpoint."""

    def __init__(self, dtype: str, quant: Quant) -> None:
        self.dtype = dtype
        self.quant = quant
        self.rows: list[WeightTensor] = []

    def add(self, name: str, shape: Sequence[int], dtype: str | None = None,
            count: int = 1) -> None:
        kind = dtype or self.dtype
        elements = math.prod(shape)
        self.rows.append(WeightTensor(name, kind, tuple(shape),
                                      elements * DTYPE_BITS[kind] // 8, count))

    def linear(self, module: str, out: int, inp: int, *, count: int = 1,
               bias: bool = False, quantized: bool = True) -> None:
        """One linear layer ``[out, inp]`` (``count`` alike: experts) as the checkpoint
        stores it."""
        q = self.quant
        if bias:
            self.add(f"{module}.bias", [out], count=count)
        kind = q.kind_of(module) if quantized else "none"
        if kind == "none":
            self.add(f"{module}.weight", [out, inp], count=count)
            return
        if kind == "fp8_block":
            self.add(f"{module}.weight", [out, inp], "F8_E4M3", count)
            self.add(f"{module}.weight_scale_inv", [math.ceil(out / q.block[0]),
                                                    math.ceil(inp / q.block[1])],
                     q.scale_dtype, count)
        elif kind in ("fp8_tensor", "fp8_channel"):
            self.add(f"{module}.weight", [out, inp], "F8_E4M3", count)
            self.add(f"{module}.weight_scale", [out, 1] if kind == "fp8_channel" else [],
                     "F32", count)
            self.add(f"{module}.input_scale", [], "F32", count)
        elif kind == "nvfp4":
            self.add(f"{module}.weight", [out, math.ceil(inp / 2)], "U8", count)
            self.add(f"{module}.weight_scale", [out, math.ceil(inp / 16)], "F8_E4M3", count)
            self.add(f"{module}.weight_scale_2", [], "F32", count)
            if q.kind != "mixed":  # W4A16 layers of a mixed checkpoint keep no input scale
                self.add(f"{module}.input_scale", [], "F32", count)
        elif kind == "int4":
            groups = math.ceil(inp / q.group)
            self.add(f"{module}.qweight", [math.ceil(inp / 8), out], "I32", count)
            self.add(f"{module}.scales", [groups, out], "F16", count)
            self.add(f"{module}.qzeros", [groups, math.ceil(out / 8)], "I32", count)
        else:  # mxfp4 packs the experts only (gpt-oss); other linears stay as loaded
            self.add(f"{module}.weight", [out, inp], count=count)


def _int(text: Mapping[str, Any], *keys: str, default: int = 0) -> int:
    for key in keys:
        value = text.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return default


def computed_tensors(config: HfConfig, hf_quant: Mapping[str, Any] | None = None
                     ) -> tuple[list[WeightTensor], list[str]]:
    """The tensor list the checkpoint of ``config`` holds, computed, and notes on what the
    computation leaves out. A family it does not know raises :class:`SourceError`."""
    spec = model_spec(config)
    if not spec.supported or not spec.family.startswith(COMPUTED_FAMILIES):
        reason = spec.unsupported_reason or f"family {spec.family!r}"
        raise SourceError(
            f"the weights of {config.model_type or 'this model'} cannot be computed from its "
            f"config.json ({reason})",
            hint="give the checkpoint's *.safetensors files (their headers are enough: "
            "servewise reads no tensor data)", model_type=config.model_type)
    quant, notes = quant_of(config, hf_quant)
    dtype = _DTYPES.get((config.dtype or "bfloat16").lower(), "BF16")
    out = _Writer(dtype, quant)
    text = config.text
    prefix = "model.language_model" if config.is_multimodal else "model"
    head = "lm_head"
    out.add(f"{prefix}.embed_tokens.weight", [spec.vocab, spec.hidden])
    out.add(f"{prefix}.norm.weight", [spec.hidden])
    if not spec.tie_embeddings:  # quantized only where a mixed checkpoint says so
        out.linear(head, spec.vocab, spec.hidden, quantized=bool(quant.per_module))
    mtp = spec.mtp_layers if spec.family in ("mla", "dsa") else 0
    for index in range(spec.num_layers + mtp):
        layer = f"{prefix}.layers.{index}"
        _layer(out, spec, text, layer, index, config.model_type)
        if index >= spec.num_layers:  # DeepSeek's MTP layer around its decoder layer
            # its own copies of the embeddings and the head, as DeepSeek's checkpoints hold
            out.add(f"{layer}.embed_tokens.weight", [spec.vocab, spec.hidden])
            out.add(f"{layer}.shared_head.head.weight", [spec.vocab, spec.hidden])
            out.add(f"{layer}.enorm.weight", [spec.hidden])
            out.add(f"{layer}.hnorm.weight", [spec.hidden])
            out.linear(f"{layer}.eh_proj", spec.hidden, 2 * spec.hidden)
            out.add(f"{layer}.shared_head.norm.weight", [spec.hidden])
    if spec.mtp_layers and config.model_type in GDN_TYPES:
        _qwen_mtp(out, spec, text, config.model_type)
    elif spec.mtp_layers and not mtp:
        notes.append(f"{spec.mtp_layers} MTP draft layer(s) not computed")
    if config.is_multimodal:
        notes.append("the vision/audio tower is not computed (text model only)")
    return out.rows, [COMPUTED_NOTE, *notes]


def _layer(out: _Writer, spec: ModelSpec, text: Mapping[str, Any], layer: str, index: int,
           model_type: str) -> None:
    hidden = spec.hidden
    out.add(f"{layer}.input_layernorm.weight", [hidden])
    out.add(f"{layer}.post_attention_layernorm.weight", [hidden])
    cache = spec.layers[min(index, len(spec.layers) - 1)]
    if cache.kind in ("mla", "dsa"):
        _mla(out, spec, text, f"{layer}.self_attn")
    elif cache.kind == "gdn":
        _gdn(out, spec, text, f"{layer}.linear_attn")
    else:
        _attention(out, spec, text, f"{layer}.self_attn", model_type)
    _mlp(out, spec, text, f"{layer}.mlp", index, model_type)


def _qwen_mtp(out: _Writer, spec: ModelSpec, text: Mapping[str, Any], model_type: str) -> None:
    """Qwen3-Next/3.5's MTP block: a projection of the embedding and the hidden state, then
    full-attention decoder layers with the model's MLP (``mtp.*``, kept unquantized)."""
    hidden = spec.hidden
    out.linear("mtp.fc", hidden, 2 * hidden, quantized=False)
    for norm in ("pre_fc_norm_embedding", "pre_fc_norm_hidden", "norm"):
        out.add(f"mtp.{norm}.weight", [hidden])
    plain = _Writer(out.dtype, Quant("none"))
    for index in range(spec.mtp_layers):
        layer = f"mtp.layers.{index}"
        plain.add(f"{layer}.input_layernorm.weight", [hidden])
        plain.add(f"{layer}.post_attention_layernorm.weight", [hidden])
        _attention(plain, spec, text, f"{layer}.self_attn", model_type)
        _mlp(plain, spec, text, f"{layer}.mlp", spec.num_layers, model_type)
    out.rows += plain.rows


def _attention(out: _Writer, spec: ModelSpec, text: Mapping[str, Any], attn: str,
               model_type: str) -> None:
    hidden, hd = spec.hidden, spec.head_dim
    bias = bool(text.get("attention_bias")) or model_type in ("qwen2", "qwen2_moe")
    gated = model_type in GDN_TYPES  # Qwen3-Next/3.5 full attention: q_proj holds a gate
    out.linear(f"{attn}.q_proj", spec.heads * hd * (2 if gated else 1), hidden, bias=bias)
    out.linear(f"{attn}.k_proj", spec.kv_heads * hd, hidden, bias=bias)
    out.linear(f"{attn}.v_proj", spec.kv_heads * hd, hidden, bias=bias)
    out.linear(f"{attn}.o_proj", hidden, spec.heads * hd,
               bias=bool(text.get("attention_bias")) and model_type == "gpt_oss")
    if model_type == "minimax_m2" and text.get("use_qk_norm"):  # one norm over all heads
        out.add(f"{attn}.q_norm.weight", [spec.heads * hd])
        out.add(f"{attn}.k_norm.weight", [spec.kv_heads * hd])
    elif model_type in ("qwen3", "qwen3_moe", "gemma3", "gemma3_text", *GDN_TYPES) or \
            text.get("use_qk_norm"):
        out.add(f"{attn}.q_norm.weight", [hd])
        out.add(f"{attn}.k_norm.weight", [hd])
    if model_type == "gpt_oss":
        out.add(f"{attn}.sinks", [spec.heads])


def _mla(out: _Writer, spec: ModelSpec, text: Mapping[str, Any], attn: str) -> None:
    hidden, heads = spec.hidden, spec.heads
    q_lora, kv_lora = _int(text, "q_lora_rank"), _int(text, "kv_lora_rank")
    rope, nope = _int(text, "qk_rope_head_dim"), _int(text, "qk_nope_head_dim")
    v_dim = _int(text, "v_head_dim", default=nope)
    if q_lora:
        out.linear(f"{attn}.q_a_proj", q_lora, hidden)
        out.add(f"{attn}.q_a_layernorm.weight", [q_lora])
        out.linear(f"{attn}.q_b_proj", heads * (nope + rope), q_lora)
    else:
        out.linear(f"{attn}.q_proj", heads * (nope + rope), hidden)
    out.linear(f"{attn}.kv_a_proj_with_mqa", kv_lora + rope, hidden)
    out.add(f"{attn}.kv_a_layernorm.weight", [kv_lora])
    out.linear(f"{attn}.kv_b_proj", heads * (nope + v_dim), kv_lora)
    out.linear(f"{attn}.o_proj", hidden, heads * v_dim)
    index = _int(text, "index_head_dim")
    if index and spec.family == "dsa":  # DeepSeek V3.2's indexer (replicated, small)
        index_heads = _int(text, "index_n_heads", default=64)
        out.linear(f"{attn}.indexer.wq_b", index_heads * index, q_lora or hidden)
        out.linear(f"{attn}.indexer.wk", index, hidden)
        out.add(f"{attn}.indexer.k_norm.weight", [index])
        out.add(f"{attn}.indexer.weights_proj.weight", [index_heads, hidden])


def _gdn(out: _Writer, spec: ModelSpec, text: Mapping[str, Any], attn: str) -> None:
    nk, nv = _int(text, "linear_num_key_heads"), _int(text, "linear_num_value_heads")
    dk, dv = _int(text, "linear_key_head_dim"), _int(text, "linear_value_head_dim")
    kernel = _int(text, "linear_conv_kernel_dim", default=4)
    conv = 2 * nk * dk + nv * dv
    if spec.model_type == "qwen3_next":
        out.linear(f"{attn}.in_proj_qkvz", conv + nv * dv, spec.hidden)
        out.linear(f"{attn}.in_proj_ba", 2 * nv, spec.hidden, quantized=False)
    else:  # Qwen3.5 splits them
        out.linear(f"{attn}.in_proj_qkv", conv, spec.hidden)
        out.linear(f"{attn}.in_proj_z", nv * dv, spec.hidden)
        out.linear(f"{attn}.in_proj_a", nv, spec.hidden, quantized=False)
        out.linear(f"{attn}.in_proj_b", nv, spec.hidden, quantized=False)
    out.add(f"{attn}.conv1d.weight", [conv, 1, kernel])
    out.add(f"{attn}.A_log", [nv], "F32")
    out.add(f"{attn}.dt_bias", [nv])
    out.add(f"{attn}.norm.weight", [dv])
    out.linear(f"{attn}.out_proj", spec.hidden, nv * dv)


def _mlp(out: _Writer, spec: ModelSpec, text: Mapping[str, Any], mlp: str, index: int,
         model_type: str) -> None:
    hidden, moe = spec.hidden, spec.moe
    dense = moe is None or index < moe.dense_layers or (
        _int(text, "decoder_sparse_step", default=1) > 1
        and (index + 1) % _int(text, "decoder_sparse_step", default=1) != 0)
    if dense:
        inter = spec.intermediate
        for name, shape in (("gate_proj", (inter, hidden)), ("up_proj", (inter, hidden)),
                            ("down_proj", (hidden, inter))):
            out.linear(f"{mlp}.{name}", *shape)
        return
    assert moe is not None
    experts, inter = moe.experts, moe.intermediate
    if model_type == "gpt_oss":
        _gpt_oss_experts(out, mlp, experts, hidden, inter)
        return
    out.add(f"{mlp}.gate.weight", [experts, hidden])
    if model_type in ("deepseek_v3", "kimi_k2", "deepseek_v32", "glm4_moe", "glm_moe_dsa",
                      "minimax_m2") or text.get("topk_method") == "noaux_tc":
        out.add(f"{mlp}.gate.e_score_correction_bias", [experts], "F32")
    for name, shape in (("gate_proj", (inter, hidden)), ("up_proj", (inter, hidden)),
                        ("down_proj", (hidden, inter))):
        out.linear(f"{mlp}.experts.*.{name}", *shape, count=experts)
    llama4 = model_type in ("llama4", "llama4_text")  # one shared expert, always
    if moe.shared_experts or moe.shared_intermediate or llama4:
        size = moe.shared_intermediate or moe.intermediate * max(1, moe.shared_experts)
        shared = "shared_expert" if model_type in ("qwen2_moe", *GDN_TYPES) or llama4 else \
            "shared_experts"
        for name, shape in (("gate_proj", (size, hidden)), ("up_proj", (size, hidden)),
                            ("down_proj", (hidden, size))):
            out.linear(f"{mlp}.{shared}.{name}", *shape)
        if shared == "shared_expert" and not llama4:
            out.add(f"{mlp}.shared_expert_gate.weight", [1, hidden])


def _gpt_oss_experts(out: _Writer, mlp: str, experts: int, hidden: int, inter: int) -> None:
    out.add(f"{mlp}.router.weight", [experts, hidden])
    out.add(f"{mlp}.router.bias", [experts])
    for name, rows, cols in (("gate_up_proj", 2 * inter, hidden), ("down_proj", hidden, inter)):
        base = f"{mlp}.experts.{name}"
        if out.quant.kind == "mxfp4":
            out.add(f"{base}_blocks", [experts, rows, math.ceil(cols / 32), 16], "U8")
            out.add(f"{base}_scales", [experts, rows, math.ceil(cols / 32)], "U8")
        else:
            out.add(base, [experts, cols, rows])
        out.add(f"{base}_bias", [experts, rows])


__all__ = ["COMPUTED_FAMILIES", "COMPUTED_NOTE", "MEASURED_MISS", "Quant", "computed_tensors",
           "quant_of"]
