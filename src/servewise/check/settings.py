"""Engine settings (the flag table's :class:`EngineSettings`) as the planner's settings.

``check`` holds one set of engine settings from start to end (recipe, model rules, the
user's own flags, the planner's choices) and writes the command from it; the planner reads
the same settings through :func:`plan_settings`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from servewise.knowledge.flags import AUTO, EngineSettings
from servewise.plan.model import ModelInfo
from servewise.plan.speculative import parse_speculative, resolve_speculative
from servewise.plan.startup import Settings
from servewise.plan.weights import Parallel

# SGLang's --speculative-algorithm as vLLM's --speculative-config methods: NEXTN and EAGLE
# without a draft model use the checkpoint's own MTP layers (DeepSeek, GLM, Qwen3-Next).
_SGLANG_METHODS = {"NEXTN": "mtp", "EAGLE": "eagle", "EAGLE3": "eagle3",
                   "STANDALONE": "draft_model", "NGRAM": "ngram"}


def _speculative_json(engine: str, settings: EngineSettings) -> str | None:
    if engine == "vllm" or settings.speculative_config:
        return settings.speculative_config
    algorithm = (settings.speculative_algorithm or "").upper()
    if not algorithm:
        return None
    method = _SGLANG_METHODS.get(algorithm, algorithm.lower())
    data: dict[str, Any] = {"num_speculative_tokens": settings.speculative_num_steps or 1}
    if settings.speculative_draft_model_path:
        data.update(method=method, model=settings.speculative_draft_model_path)
    else:
        data["method"] = "ngram" if method == "ngram" else "mtp"
    return json.dumps(data)


def unmodelled_speculative(engine: str, settings: EngineSettings) -> str | None:
    """The speculative method of ``settings`` when the planner does not know it (the recipe
    databases use methods newer than the planner, ``dspark``), else None."""
    from servewise.errors import UsageError

    text = _speculative_json(engine, settings)
    if text is None:
        return None
    try:
        parse_speculative(text)
    except UsageError as error:
        if "unknown method" in error.message:
            return str(error.fields.get("found"))
        raise
    return None


def without_speculative(settings: EngineSettings) -> EngineSettings:
    """``settings`` with no speculative decoding (what the planner models of an unknown one)."""
    return settings.replace(speculative_config=None, speculative_algorithm=None,
                            speculative_num_steps=None, speculative_eagle_topk=None,
                            speculative_num_draft_tokens=None,
                            speculative_draft_model_path=None)


def plan_settings(engine: str, settings: EngineSettings, version: str | None,
                  model: ModelInfo | None = None,
                  load: Callable[[str], ModelInfo] | None = None) -> Settings:
    """The planner's view of ``settings`` for ``engine`` at ``version``.

    With ``model`` (and ``load`` for a separate draft checkpoint), a speculative config is
    resolved as ``servewise plan --speculative-config`` does, so the draft's weights and KV
    pages count.
    """
    tp = settings.tensor_parallel_size or 1
    pp = settings.pipeline_parallel_size or 1
    dp = settings.data_parallel_size or 1
    if engine == "sglang":
        expert = (settings.expert_parallel_size or 1) > 1
    else:
        expert = bool(settings.enable_expert_parallel)
    dp_attention = engine == "sglang" and bool(settings.enable_dp_attention)
    planned = Settings(
        engine=engine,
        engine_version=version,
        layout=Parallel(tp, pp, dp, expert, dp_attention=dp_attention),
        kv_cache_dtype=settings.kv_cache_dtype or "auto",
        block_size=settings.block_size,
        max_model_len=None if settings.max_model_len == AUTO else settings.max_model_len,
        max_num_seqs=settings.max_num_seqs,
        max_num_batched_tokens=settings.max_num_batched_tokens,
        gpu_memory_utilization=settings.gpu_memory_utilization,
        mem_fraction_static=settings.mem_fraction_static,
        kv_cache_memory_bytes=settings.kv_cache_memory_bytes,
        enforce_eager=bool(settings.enforce_eager),
    )
    text = _speculative_json(engine, settings)
    if text is None or model is None:
        return planned
    wanted = parse_speculative(text)
    if load is None:
        from servewise.plan.resolve import load_model

        load = load_model
    return replace(planned, speculative_config=resolve_speculative(wanted, model, load))


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
        changes["enable_dp_attention"] = True if layout.dp_attention else None
    else:
        changes["enable_expert_parallel"] = True if layout.expert_parallel else None
    return settings.replace(**changes)
