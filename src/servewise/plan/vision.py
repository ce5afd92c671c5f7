"""The vision encoder's share of vLLM's profile run, read in vLLM's source (0.20.0).

``profile_run`` (``v1/worker/gpu_model_runner.py``) first runs the encoder on a dummy batch
of ``max_items`` images of the largest size, keeps its outputs in the encoder cache and the
dummy inputs in a local variable, then runs the text forward and the sampler warm-up; both
are freed only when ``profile_run`` returns. So the profile peak is the larger of

* the encoder's own forward: every patch of the batch through one vision block, the MLP
  holding its input, the normed input, fc1's output and the activation's output
  (``2 * H_v + 2 * I_v / TP`` model-dtype elements a patch), beside the fp32 pixel values;
* the text forward or sampler peak, plus the cached encoder outputs (``tokens x
  text hidden``) and the pixel values.

``max_items`` follows ``MultiModalBudget._get_max_items`` (``multimodal/encoder_budget.py``):
the encoder budget ``max(max_num_batched_tokens, tokens_per_item)`` over the tokens of one
item, and at most ``max_num_seqs x min(limit, max_model_len // tokens_per_item)`` items.
The largest image: Gemma 3's SigLIP takes ``image_size`` squared (``mm_tokens_per_image``
tokens); the Qwen3-VL/3.5/3.6 processors' ``size.longest_edge`` is 16,777,216 pixels
(``preprocessor_config.json`` of Qwen/Qwen3.5-2B-Base and Qwen/Qwen3.6-35B-A3B-FP8:
``Qwen2VLImageProcessorFast``, patch 16, merge 2): 16,384 tokens of 4 patches each.
An encoder not read here returns ``None`` and the planner keeps its single allowance.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from servewise.plan.model import ModelInfo

#: ``size.longest_edge`` of the Qwen3-VL family's image processor (pixels).
QWEN_VL_MAX_PIXELS = 16_777_216
#: ``limit_mm_per_prompt``'s default per modality when not given (vLLM ``MultiModalConfig``).
DEFAULT_ITEM_LIMIT = 999
#: The HF image processors return fp32 pixel values; the dummy batch keeps them so.
PIXEL_BYTES = 4


@dataclass(frozen=True)
class VisionTower:
    """What the profile run's dummy image costs: per item."""

    tokens: int
    """Embeddings the encoder outputs for one image (placeholders in the prompt)."""
    patches: int
    """Patches one image is cut into (the encoder's sequence)."""
    pixel_values: int
    """fp32 values of one image's preprocessed input."""
    hidden: int
    intermediate: int


def vision_tower(model: ModelInfo) -> VisionTower | None:
    """The encoder's shape for the families read here, else ``None``."""
    raw: dict[str, Any] = dict(model.config.raw)
    vision = raw.get("vision_config")
    if not isinstance(vision, dict):
        return None
    hidden = int(vision.get("hidden_size") or 0)
    inter = int(vision.get("intermediate_size") or 0)
    patch = int(vision.get("patch_size") or 0)
    if not (hidden and inter and patch):
        return None
    kind = str(vision.get("model_type", ""))
    if kind.startswith("siglip") and raw.get("mm_tokens_per_image"):
        side = int(vision.get("image_size") or 0) // patch
        size = int(vision.get("image_size") or 0)
        channels = int(vision.get("num_channels") or 3)
        return VisionTower(int(raw["mm_tokens_per_image"]), side * side,
                           channels * size * size, hidden, inter)
    merge = int(vision.get("spatial_merge_size") or 0)
    if kind.startswith(("qwen3_vl", "qwen3_5")) and merge:
        tokens = QWEN_VL_MAX_PIXELS // (patch * merge) ** 2
        patches = tokens * merge * merge
        per_patch = int(vision.get("in_channels") or 3) * int(
            vision.get("temporal_patch_size") or 2) * patch * patch
        return VisionTower(tokens, patches, patches * per_patch, hidden, inter)
    return None


def max_items(tower: VisionTower, mnbt: int, seqs: int, max_model_len: int) -> int:
    """Images in the profile's dummy batch (``MultiModalBudget._get_max_items``)."""
    budget = max(mnbt, tower.tokens)
    per_prompt = max(1, min(DEFAULT_ITEM_LIMIT, max_model_len // tower.tokens))
    return max(1, min(budget // tower.tokens, seqs * per_prompt))


def vision_peak(model: ModelInfo, text_peak: float, mnbt: int, seqs: int, max_model_len: int,
                tp: int) -> float | None:
    """The profile peak with the encoder's dummy batch, or ``None`` for an unread tower."""
    tower = vision_tower(model)
    if tower is None:
        return None
    items = max_items(tower, mnbt, seqs, max_model_len)
    element = 4 if model.spec.dtype.lower() in ("float32", "float") else 2
    pixels = items * tower.pixel_values * PIXEL_BYTES
    encoder = items * tower.patches * (2 * tower.hidden + 2 * tower.intermediate / tp) * element
    outputs = items * tower.tokens * model.spec.hidden * element
    return max(encoder, text_peak + outputs) + pixels
