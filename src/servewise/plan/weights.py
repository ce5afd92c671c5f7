"""Weight bytes from a tensor list: by role, by dtype, and per GPU under TP/PP/DP/EP.

Every tensor's size is what its header (or a model card) says; nothing is estimated from
a parameter count. Tensor names are read into a *role* (embeddings, head, attention, dense
MLP, routed experts, shared experts, router, norm, vision tower, MTP/draft layer, other)
and a *sharding rule*, which say where the bytes land on each rank:

* column/row-parallel matrices: divided by TP;
* ``k_proj``/``v_proj`` when there are fewer KV heads than TP ranks: one head per rank
  (vLLM's ``QKVParallelLinear`` replicates KV heads), so ``1 / kv_heads`` each;
* embeddings and head: vocab-parallel, the vocabulary padded to 64 rows
  (vLLM ``DEFAULT_VOCAB_PADDING_SIZE``) then divided by TP;
* norms, routers, MLA's ``q_a``/``kv_a`` projections, hyper-connection parameters and
  other 1-D tensors: replicated;
* routed experts: TP-sharded inside each expert, or, with expert parallelism over
  ``tp * dp`` ranks, ``ceil(experts / ep)`` whole experts per rank;
* PP: each stage holds its layers (vLLM ``get_pp_indices``), the embeddings on the first
  stage and the head on the last. MTP layers are not loaded unless a draft is asked for.

Names are grouped with the expert index replaced by ``*`` (:func:`collapse`), so a
256-expert model is a few thousand entries, not a hundred thousand.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from servewise.formats.checkpoint import WeightTensor
from servewise.plan.model_spec import ModelSpec

#: vLLM pads the vocabulary of embeddings and head to a multiple of this before splitting
#: (vllm/model_executor/layers/vocab_parallel_embedding.py DEFAULT_VOCAB_PADDING_SIZE).
VOCAB_PADDING = 64

ROLES = ("embeddings", "head", "attention", "dense_mlp", "experts", "shared_experts",
         "router", "norms", "vision", "mtp", "other")

_LAYER = re.compile(r"(?:^|\.)(?:layers|h|blocks|layer)\.(\d+)\.")
_MTP = re.compile(r"(?:^|\.)mtp(?:\.(\d+))?\.")
_VISION = re.compile(r"vision_tower|visual\.|vision_model|multi_modal_projector|mm_projector|"
                     r"audio_tower|vision_embed|patch_embed|image_newline")
_EMBED = re.compile(r"(?:^|\.)(?:embed_tokens|embed|wte|word_embeddings|tok_embeddings)\.")
_HEAD = re.compile(r"(?:^|\.)(?:lm_head|head|output|shared_head\.head)\.(?:weight|scale|"
                   r"weight_scale\w*|qweight|scales)$")
_ROUTER = re.compile(r"\.(?:mlp|ffn|block_sparse_moe)\.(?:gate|router)\.|\.router\.|"
                     r"e_score_correction_bias|\.gate\.(?:weight|bias|tid2eid)$")
_SHARED = re.compile(r"shared_expert")
_ATTN = re.compile(r"self_attn|\.attn\.|\.attention\.|linear_attn|\.mixer\.|\.compressor\.|"
                   r"\.indexer\.")
_MLP = re.compile(r"\.(?:mlp|ffn|feed_forward|block_sparse_moe)\.")
_REPLICATED_ATTN = re.compile(r"\.(?:q_a_proj|kv_a_proj_with_mqa|fused_qkv_a_proj|wq_a|wkv|"
                              r"kv_a_layernorm|q_a_layernorm|kv_norm|q_norm|k_norm|sinks|"
                              r"attn_sink|ape|position_bias)\b")
_KV_PROJ = re.compile(r"\.(?:k_proj|v_proj)\.")


@dataclass(frozen=True)
class ClassifiedTensor:
    """A tensor with its role, layer and how it shards."""

    tensor: WeightTensor
    role: str
    layer: int | None
    rule: str
    """``split`` (divided by TP), ``replicated``, ``vocab``, ``kv`` or ``experts``."""


def _layer_of(name: str) -> int | None:
    match = _LAYER.search(name)
    return int(match.group(1)) if match else None


def classify(tensor: WeightTensor, spec: ModelSpec) -> ClassifiedTensor:
    """The role, layer and sharding rule of one tensor."""
    name = tensor.name
    layer = _layer_of(name)
    one_d = len(tensor.shape) <= 1
    if _VISION.search(name):
        return ClassifiedTensor(tensor, "vision", None, "replicated" if one_d else "split")
    if _MTP.search(name) or (layer is not None and layer >= spec.num_layers > 0):
        return ClassifiedTensor(tensor, "mtp", layer, "replicated" if one_d else "split")
    if layer is None:
        if _EMBED.search(name):
            return ClassifiedTensor(tensor, "embeddings", None, "vocab")
        if _HEAD.search(name):
            return ClassifiedTensor(tensor, "head", None, "vocab")
        if "norm" in name:
            return ClassifiedTensor(tensor, "norms", None, "replicated")
        return ClassifiedTensor(tensor, "other", None, "replicated")
    leaf = name.rsplit(".", 2)
    if one_d and ("norm" in leaf[-2] or "norm" in leaf[-1]):
        return ClassifiedTensor(tensor, "norms", layer, "replicated")
    if ".experts." in name and not _SHARED.search(name):
        return ClassifiedTensor(tensor, "experts", layer, "experts")
    if _ROUTER.search(name):
        return ClassifiedTensor(tensor, "router", layer, "replicated")
    if _SHARED.search(name):
        return ClassifiedTensor(tensor, "shared_experts", layer,
                                "replicated" if one_d else "split")
    if _ATTN.search(name):
        if _REPLICATED_ATTN.search(name) or one_d:
            return ClassifiedTensor(tensor, "attention", layer, "replicated")
        if _KV_PROJ.search(name):
            return ClassifiedTensor(tensor, "attention", layer, "kv")
        return ClassifiedTensor(tensor, "attention", layer, "split")
    if _MLP.search(name):
        return ClassifiedTensor(tensor, "dense_mlp", layer, "replicated" if one_d else "split")
    return ClassifiedTensor(tensor, "other", layer, "replicated" if one_d else "split")


@dataclass(frozen=True)
class Parallel:
    """A parallel layout: tensor, pipeline, data and expert parallel sizes."""

    tp: int = 1
    pp: int = 1
    dp: int = 1
    expert_parallel: bool = False
    dp_attention: bool = False
    """SGLang ``--enable-dp-attention``: the DP ranks run attention *inside* the TP group
    (``--tp 8 --dp 8`` is 8 GPUs, attention TP ``tp / dp``), not as separate replicas."""

    @property
    def gpus(self) -> int:
        """GPUs the layout uses."""
        if self.dp_attention:
            return self.tp * self.pp
        return self.tp * self.pp * self.dp

    @property
    def attention_tp(self) -> int:
        """The TP size of the attention layers (``tp / dp`` under DP attention)."""
        return max(self.tp // self.dp, 1) if self.dp_attention else self.tp

    @property
    def ep(self) -> int:
        """Ranks the experts are spread over (``tp * dp`` with expert parallelism, or the
        TP group under DP attention; else 1)."""
        if not self.expert_parallel:
            return 1
        return self.tp if self.dp_attention else self.tp * self.dp

    def label(self) -> str:
        """``TP2``, ``TP4 PP2``, ``DP8 EP8`` ..."""
        parts = []
        if self.tp > 1 or (self.pp == 1 and self.dp == 1):
            parts.append(f"TP{self.tp}")
        if self.pp > 1:
            parts.append(f"PP{self.pp}")
        if self.dp > 1:
            parts.append(f"DP{self.dp}-attention" if self.dp_attention else f"DP{self.dp}")
        if self.expert_parallel:
            parts.append(f"EP{self.ep}")
        return " ".join(parts)


def pp_layer_ranges(num_layers: int, pp: int) -> list[range]:
    """The layers of each pipeline stage, as vLLM's ``get_pp_indices`` splits them.

    The remainder goes to the stages before the last, one each, ending with the one just
    before the last (vllm/distributed/utils.py).
    """
    sizes = [num_layers // pp] * pp
    for i in range(2, num_layers % pp + 2):
        sizes[-i] += 1
    ranges = []
    start = 0
    for size in sizes:
        ranges.append(range(start, start + size))
        start += size
    return ranges


@dataclass(frozen=True)
class RankWeights:
    """Bytes one rank holds, by role."""

    stage: int
    by_role: dict[str, int]

    @property
    def total(self) -> int:
        """All bytes on the rank."""
        return sum(self.by_role.values())


def _rank_bytes(item: ClassifiedTensor, spec: ModelSpec, layout: Parallel) -> int:
    tensor = item.tensor
    tp = layout.attention_tp if item.role == "attention" else layout.tp
    if item.rule == "replicated":
        return tensor.total_bytes
    if item.rule == "vocab":
        rows = tensor.shape[0] if tensor.shape else 0
        if rows <= 0:
            return tensor.total_bytes
        padded = math.ceil(rows / VOCAB_PADDING) * VOCAB_PADDING
        per_rank_rows = math.ceil(padded / tp)
        return tensor.total_bytes * per_rank_rows // rows
    if item.rule == "kv":
        heads = spec.kv_heads or 1
        if heads < tp:
            return tensor.total_bytes // heads
        return math.ceil(tensor.total_bytes / tp)
    if item.rule == "experts":
        if layout.ep > 1:
            if tensor.count > 1:  # one tensor per expert (experts.* x count)
                return tensor.nbytes * math.ceil(tensor.count / layout.ep)
            experts = spec.moe.experts if spec.moe is not None else 0
            if tensor.shape and experts and tensor.shape[0] == experts:
                # fused [experts, ...] tensors (gpt-oss): whole experts per rank
                return tensor.total_bytes * math.ceil(experts / layout.ep) // experts
            return math.ceil(tensor.total_bytes / layout.ep)
        return math.ceil(tensor.total_bytes / tp)
    return math.ceil(tensor.total_bytes / tp)


def per_rank(classified: Sequence[ClassifiedTensor], spec: ModelSpec, layout: Parallel,
             *, load_mtp: bool = False) -> list[RankWeights]:
    """Bytes on one rank of each pipeline stage (ranks within a stage hold the same)."""
    stages = pp_layer_ranges(spec.num_layers, layout.pp)
    out = []
    for index, layers in enumerate(stages):
        by_role = dict.fromkeys(ROLES, 0)
        first, last = index == 0, index == len(stages) - 1
        for item in classified:
            role = item.role
            if role == "mtp":
                if not (load_mtp and last):
                    continue
            elif role in ("embeddings", "vision"):
                if not first:
                    continue
            elif role == "head" or (role in ("norms", "other") and item.layer is None):
                if not last:
                    continue
            elif item.layer is not None and item.layer not in layers:
                continue
            by_role[role] += _rank_bytes(item, spec, layout)
        out.append(RankWeights(index, by_role))
    if spec.tie_embeddings and layout.pp > 1:
        # tied head: the last stage keeps its own copy of the embedding matrix
        emb = sum(_rank_bytes(i, spec, layout) for i in classified if i.role == "embeddings")
        if not any(i.role == "head" for i in classified):
            out[-1].by_role["head"] += emb
    return out


@dataclass(frozen=True)
class WeightSummary:
    """A checkpoint's bytes by role and dtype, and the dtypes no table knows."""

    total_bytes: int
    tensors: int
    by_role: dict[str, int]
    by_dtype: dict[str, int]
    unknown_dtypes: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data."""
        return {
            "total_bytes": self.total_bytes,
            "tensors": self.tensors,
            "bytes_by_role": {k: v for k, v in self.by_role.items() if v},
            "bytes_by_dtype": self.by_dtype,
            "unknown_dtypes": list(self.unknown_dtypes),
        }


def summarize(classified: Sequence[ClassifiedTensor], known_dtypes: Iterable[str]) -> WeightSummary:
    """Totals over the whole checkpoint."""
    known = set(known_dtypes)
    by_role = dict.fromkeys(ROLES, 0)
    by_dtype: dict[str, int] = {}
    for item in classified:
        by_role[item.role] += item.tensor.total_bytes
        dtype = item.tensor.dtype
        by_dtype[dtype] = by_dtype.get(dtype, 0) + item.tensor.total_bytes
    unknown = tuple(sorted(d for d in by_dtype if d not in known))
    return WeightSummary(
        total_bytes=sum(by_role.values()),
        tensors=sum(item.tensor.count for item in classified),
        by_role=by_role,
        by_dtype=dict(sorted(by_dtype.items(), key=lambda kv: -kv[1])),
        unknown_dtypes=unknown,
    )
