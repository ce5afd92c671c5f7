"""Engine settings (the flag table's :class:`EngineSettings`) as the planner's settings.

``check`` holds one set of engine settings from start to end (recipe, model rules, the
user's own flags, the planner's choices) and writes the command from it; the planner reads
the same settings through :func:`plan_settings`.
"""

from __future__ import annotations

from servewise.knowledge.flags import EngineSettings
from servewise.plan.startup import Settings
from servewise.plan.weights import Parallel


def plan_settings(engine: str, settings: EngineSettings, version: str | None) -> Settings:
    """The planner's view of ``settings`` for ``engine`` at ``version``."""
    tp = settings.tensor_parallel_size or 1
    pp = settings.pipeline_parallel_size or 1
    dp = settings.data_parallel_size or 1
    if engine == "sglang":
        expert = (settings.expert_parallel_size or 1) > 1
    else:
        expert = bool(settings.enable_expert_parallel)
    speculative = bool(settings.speculative_config or settings.speculative_algorithm)
    return Settings(
        engine=engine,
        engine_version=version,
        layout=Parallel(tp, pp, dp, expert),
        kv_cache_dtype=settings.kv_cache_dtype or "auto",
        block_size=settings.block_size,
        max_model_len=settings.max_model_len,
        max_num_seqs=settings.max_num_seqs,
        max_num_batched_tokens=settings.max_num_batched_tokens,
        gpu_memory_utilization=settings.gpu_memory_utilization,
        mem_fraction_static=settings.mem_fraction_static,
        kv_cache_memory_bytes=settings.kv_cache_memory_bytes,
        enforce_eager=bool(settings.enforce_eager),
        speculative=speculative,
    )


def with_layout(engine: str, settings: EngineSettings, layout: Parallel) -> EngineSettings:
    """``settings`` with the parallel sizes of ``layout`` (sizes of 1 left unset)."""

    def size(value: int) -> int | None:
        return value if value > 1 else None

    changes: dict[str, object] = {
        "tensor_parallel_size": size(layout.tp),
        "pipeline_parallel_size": size(layout.pp),
        "data_parallel_size": size(layout.dp),
    }
    if engine == "sglang":
        changes["expert_parallel_size"] = size(layout.ep)
    else:
        changes["enable_expert_parallel"] = True if layout.expert_parallel else None
    return settings.replace(**changes)
