"""A checkpoint as read from its files: config, tensor list and where they came from.

Pure data, no I/O: :mod:`servewise.sources.hub` (and the folder and card readers) build a
:class:`Checkpoint`; the planner turns it into its model
(:meth:`servewise.plan.model.ModelInfo.from_checkpoint`). Tensors are grouped: the experts
of one layer become one ``experts.*`` row with a count (:func:`collapse`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from servewise.formats.hfconfig import HfConfig

_EXPERT_INDEX = re.compile(r"(\.experts\.)(\d+)(\.)")


@dataclass(frozen=True)
class WeightTensor:
    """One tensor (or ``count`` identical ones: the experts of a layer)."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    nbytes: int
    """Bytes of one tensor."""
    count: int = 1

    @property
    def total_bytes(self) -> int:
        """Bytes of all ``count`` tensors."""
        return self.nbytes * self.count


def collapse(tensors: Iterable[tuple[str, str, Sequence[int], int]]) -> list[WeightTensor]:
    """Group ``(name, dtype, shape, nbytes)`` tuples: experts become ``experts.*`` x count."""
    groups: dict[tuple[str, str, tuple[int, ...], int], int] = {}
    for name, dtype, shape, nbytes in tensors:
        key = (_EXPERT_INDEX.sub(r"\1*\3", name), dtype, tuple(shape), nbytes)
        groups[key] = groups.get(key, 0) + 1
    return [WeightTensor(name, dtype, shape, nbytes, count)
            for (name, dtype, shape, nbytes), count in sorted(groups.items())]


@dataclass(frozen=True)
class Checkpoint:
    """One checkpoint's facts: its parsed ``config.json``, tensors and provenance."""

    ref: str
    """What the user named (``deepseek-ai/DeepSeek-V4-Flash``, a folder, a card id)."""
    source: str
    """``card``, ``folder`` or ``hub``."""
    config: HfConfig
    tensors: tuple[WeightTensor, ...]
    files: int
    """Safetensors files of the checkpoint."""
    file_bytes: int
    """Their size on disk (headers included), when known; else the tensor bytes."""
    provenance: tuple[str, ...] = ()
    """Where the facts come from (card sources, URLs, paths, revision)."""
    quant_config: dict[str, Any] | None = None
    revision: str | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def tensor_bytes(self) -> int:
        """Bytes of every tensor."""
        return sum(tensor.total_bytes for tensor in self.tensors)
