"""``--quantization`` on a checkpoint that is not quantized: the weights the engine keeps.

vLLM and SGLang quantize a BF16/FP16 checkpoint while loading it when told
``--quantization fp8``: every linear layer (attention projections, MLP, experts, shared
experts) is stored as FP8 E4M3 with one FP32 scale per tensor, while embeddings, the output
head, norms and the router stay as loaded (vLLM ``vllm/model_executor/layers/quantization/
fp8.py``: ``Fp8Config.get_quant_method`` quantizes ``LinearBase`` and ``FusedMoE`` only,
``ParallelLMHead`` is an embedding; SGLang ``python/sglang/srt/layers/quantization/fp8.py``
the same). A checkpoint that already carries a ``quantization_config`` is read as it is: the
flag names its method. Other online methods are not modelled, and the plan says so.
"""

from __future__ import annotations

import math
from dataclasses import replace

from servewise.formats.checkpoint import WeightTensor
from servewise.plan.model import ModelInfo

#: Online methods the planner models: the dtype each quantized linear weight becomes and
#: its bytes per element.
ONLINE = {"fp8": ("F8_E4M3", 1)}
#: Roles whose weights the online methods quantize (linear layers and fused experts).
QUANTIZED_ROLES = frozenset({"attention", "dense_mlp", "experts", "shared_experts"})
_FLOATS = frozenset({"BF16", "F16", "F32"})
_SCALE_BYTES = 4


def _quantized(tensor: WeightTensor, dtype: str, width: int) -> WeightTensor:
    return replace(tensor, dtype=dtype, nbytes=math.prod(tensor.shape) * width + _SCALE_BYTES)


def online_quantized(model: ModelInfo, method: str) -> tuple[ModelInfo, str]:
    """``model`` as the engine holds it after ``--quantization method``, and a note saying
    what was planned. Raises KeyError for a method the planner does not model."""
    declared_config = model.quant_config or model.config.quantization
    if declared_config:
        declared = str(declared_config.get("quant_method", "its own method"))
        return model, (f"--quantization {method}: {model.ref} is already quantized "
                       f"({declared}); planned with the weights as stored")
    if method not in ONLINE:
        raise KeyError(method)
    dtype, width = ONLINE[method]
    tensors = []
    changed = 0
    for item in model.classified:  # the roles the planner already gave each tensor
        tensor = item.tensor
        if (item.role in QUANTIZED_ROLES and tensor.dtype in _FLOATS
                and len(tensor.shape) >= 2):
            tensors.append(_quantized(tensor, dtype, width))
            changed += tensor.count
        else:
            tensors.append(tensor)
    before = model.weights.total_bytes
    quantized = replace(model, tensors=tuple(tensors))
    after = quantized.weights.total_bytes
    return quantized, (f"--quantization {method}: {changed:,} linear weights quantized while "
                       f"loading ({before / 2**30:.1f} GiB on disk, {after / 2**30:.1f} GiB "
                       "held); the load itself is not modelled")
