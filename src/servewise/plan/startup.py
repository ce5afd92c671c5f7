"""The settings of one engine launch and what the engine will report at startup.

:class:`Settings` mirrors the engine flags the planner understands; ``None`` means "the
engine's default". :class:`Startup` is the prediction: the ``startup`` object of
``servewise plan --json`` (``fits``, ``error``, ``weights_bytes_per_gpu``,
``kv_bytes_per_token``, ``kv_cache_bytes``, ``kv_cache_tokens``, ``max_concurrency``) plus
the breakdown that led to it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from servewise.knowledge.accounting import EngineConstants
from servewise.plan.speculative import Speculative
from servewise.plan.weights import Parallel
from servewise.versions import EngineVersion


@dataclass(frozen=True)
class Settings:
    """Engine flags (``None``: the engine's default)."""

    engine: str = "vllm"
    engine_version: str | None = None
    layout: Parallel = field(default_factory=Parallel)
    kv_cache_dtype: str = "auto"
    block_size: int | None = None
    max_model_len: int | None = None
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    gpu_memory_utilization: float | None = None
    mem_fraction_static: float | None = None
    kv_cache_memory_bytes: int | None = None
    enforce_eager: bool = False
    enable_prefix_caching: bool | None = None
    """``--enable-prefix-caching`` / ``--no-enable-prefix-caching`` (``None``: the engine's
    default, which for hybrid Mamba/linear-attention models depends on the version)."""
    speculative: bool = False
    """Whether the checkpoint's MTP layers are loaded as the draft (``--speculative``)."""
    speculative_config: Speculative | None = None
    """``--speculative-config``: the draft's method, tokens and model."""
    quantization: str | None = None
    """``--quantization``: a method the engine applies while loading an unquantized
    checkpoint (``fp8``), or the checkpoint's own method."""

    @property
    def loads_mtp(self) -> bool:
        """Whether the checkpoint's MTP layers are loaded (their weights and KV count)."""
        return self.speculative or (self.speculative_config is not None
                                    and self.speculative_config.uses_mtp)


@dataclass(frozen=True)
class Startup:
    """What the engine will log at startup, per rank, and how it got there."""

    engine: str
    engine_version: str
    fits: bool
    error: str | None
    weights_bytes_per_gpu: int
    kv_bytes_per_token: float
    kv_cache_bytes: int
    kv_cache_tokens: int
    max_concurrency: float
    max_model_len: int
    breakdown: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def startup_dict(self) -> dict[str, Any]:
        """The ``startup`` object of the JSON contract."""
        return {
            "fits": self.fits,
            "error": self.error,
            "weights_bytes_per_gpu": self.weights_bytes_per_gpu,
            "kv_bytes_per_token": round(self.kv_bytes_per_token, 3),
            "kv_cache_bytes": self.kv_cache_bytes,
            "kv_cache_tokens": self.kv_cache_tokens,
            "max_concurrency": round(self.max_concurrency, 2),
        }

    def to_dict(self) -> dict[str, Any]:
        """The ``startup`` object with the engine, breakdown and notes beside it."""
        return {
            **self.startup_dict(),
            "engine": self.engine,
            "engine_version": self.engine_version,
            "max_model_len": self.max_model_len,
            "breakdown": self.breakdown,
            "notes": list(self.notes),
        }


def engine_version(settings: Settings, constants: EngineConstants) -> EngineVersion:
    """The version of ``settings.engine`` planned for: the user's, else the latest whose
    source was read."""
    if settings.engine_version:
        return EngineVersion.parse(settings.engine_version)
    return constants.version(settings.engine, "latest_read")
