"""A model as the planner sees it: its config, its architecture spec and its tensors.

:class:`ModelInfo` is built the same way from every source (a local folder, the Hugging
Face Hub, a bundled model card): the parsed ``config.json``, the checkpoint's tensors (name,
dtype, shape, exact bytes; experts grouped) and where each came from.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

from servewise.formats.checkpoint import Checkpoint
from servewise.formats.safetensors import DTYPE_BITS
from servewise.plan.kv import round_up
from servewise.plan.model_spec import ModelSpec, model_spec
from servewise.plan.weights import (
    ClassifiedTensor,
    Parallel,
    RankWeights,
    WeightSummary,
    classify,
    per_rank,
    summarize,
)


@dataclass(frozen=True)
class ModelInfo(Checkpoint):
    """Everything the planner needs to know about one checkpoint: the checkpoint's facts
    (:class:`~servewise.formats.checkpoint.Checkpoint`) and what the planner derives from
    them once (architecture spec, classified tensors, weights)."""

    @classmethod
    def from_checkpoint(cls, checkpoint: Checkpoint) -> ModelInfo:
        """The planner's model of a checkpoint read by a source."""
        return cls(**{f.name: getattr(checkpoint, f.name) for f in fields(checkpoint)})

    @functools.cached_property
    def spec(self) -> ModelSpec:
        """The architecture spec of the config (computed once)."""
        return model_spec(self.config)

    @functools.cached_property
    def classified(self) -> Sequence[ClassifiedTensor]:
        """Every tensor with its role and sharding rule (computed once)."""
        spec = self.spec
        return tuple(classify(tensor, spec) for tensor in self.tensors)

    @functools.cached_property
    def _per_rank_memo(self) -> dict[tuple[Parallel, bool], list[RankWeights]]:
        return {}

    def per_rank(self, layout: Parallel, *, load_mtp: bool = False) -> list[RankWeights]:
        """:func:`~servewise.plan.weights.per_rank` for this model, computed once per layout
        (a plan predicts many layouts and settings); the caller gets its own copies."""
        key = (layout, load_mtp)
        memo = self._per_rank_memo
        if key not in memo:
            memo[key] = per_rank(self.classified, self.spec, layout, load_mtp=load_mtp)
        return [RankWeights(stage.stage, dict(stage.by_role)) for stage in memo[key]]

    @functools.cached_property
    def weights(self) -> WeightSummary:
        """Totals by role and dtype (computed once)."""
        return summarize(self.classified, DTYPE_BITS)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data (``servewise model --json``)."""
        return {
            "ref": self.ref,
            "source": self.source,
            "revision": self.revision,
            "architecture": self.spec.to_dict(),
            "weights": self.weights.to_dict(),
            "files": self.files,
            "file_bytes": self.file_bytes,
            "provenance": list(self.provenance),
            "notes": list(self.notes) + list(self.spec.notes),
        }


def expert_padding_factor(hidden: int, intermediate: int, hidden_align: int,
                          intermediate_align: int) -> float:
    """How much an MoE backend's padding grows expert weights."""
    if not hidden or not intermediate:
        return 1.0
    padded = round_up(hidden, hidden_align) * round_up(intermediate, intermediate_align)
    return padded / (hidden * intermediate)
