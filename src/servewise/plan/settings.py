"""Engine settings (the flag table's :class:`EngineSettings`) as the planner's settings.

One settings type travels from argv or CLI options to the planner: ``plan`` builds an
:class:`EngineSettings` from its options, ``check`` holds one from start to end (recipe,
model rules, the user's own flags, the planner's choices) and writes the command from it.
Both reach the planner through :func:`plan_settings`, the one validating conversion, so the
same settings give the same answer, and the same error, in both.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from servewise.errors import UsageError
from servewise.knowledge.flags import AUTO, EngineSettings, load_flag_table
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


class SettingsError(UsageError):
    """Settings no engine starts with (sizes that do not divide, two ways to size the KV
    cache): a usage error, the same from ``plan`` and ``check``."""


def _flag(engine: str, setting_id: str, fallback: str) -> str:
    """How ``engine`` spells ``setting_id`` (``fallback`` when it has no such flag)."""
    spelling = load_flag_table().setting(setting_id).spelling(engine)
    return spelling.name if spelling is not None else fallback


def check_settings(engine: str, settings: EngineSettings) -> None:
    """Raise :class:`SettingsError` for settings the engine refuses as a combination."""
    for setting_id in ("tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size",
                       "expert_parallel_size", "max_num_seqs", "max_num_batched_tokens",
                       "block_size"):
        value = getattr(settings, setting_id)
        if value is not None and value < 1:
            flag = _flag(engine, setting_id, "--" + setting_id.replace("_", "-"))
            raise SettingsError(f"{flag} {value}: expected a whole number of at least 1",
                                hint=f"give {flag} 1 or more", flag=flag, found=value)
    if settings.max_model_len is not None and settings.max_model_len != AUTO \
            and settings.max_model_len < 1:
        flag = _flag(engine, "max_model_len", "--max-model-len")
        raise SettingsError(f"{flag} {settings.max_model_len}: expected a length of at least 1",
                            hint=f"give {flag} 4096 (or auto for vLLM)", flag=flag)
    sizing = [setting_id for setting_id in ("gpu_memory_utilization", "mem_fraction_static",
                                            "kv_cache_memory_bytes")
              if getattr(settings, setting_id) is not None]
    names = [_flag(engine, s, "--" + s.replace("_", "-")) for s in sizing]
    if len(sizing) > 1:
        raise SettingsError(f"{' and '.join(names)} both size the KV cache; give one",
                            hint="--gpu-memory-utilization sizes vLLM's share of the GPU, "
                            "--kv-cache-memory-bytes a fixed pool", found=" and ".join(names))
    for setting_id in ("gpu_memory_utilization", "mem_fraction_static"):
        fraction = getattr(settings, setting_id)
        if fraction is not None and not 0 < fraction <= 1:
            flag = _flag(engine, setting_id, "--" + setting_id.replace("_", "-"))
            raise SettingsError(f"{flag} {fraction}: expected a fraction in (0, 1]",
                                hint=f"give {flag} 0.9, for example", found=fraction)
    if settings.kv_cache_memory_bytes is not None and settings.kv_cache_memory_bytes <= 0:
        raise SettingsError(f"--kv-cache-memory-bytes {settings.kv_cache_memory_bytes}: "
                            "expected a size above zero", hint="give 1GiB, for example")
    tp = settings.tensor_parallel_size or 1
    dp = settings.data_parallel_size or 1
    dp_attention = bool(settings.enable_dp_attention)
    dp_flag = _flag(engine, "data_parallel_size", "--dp")
    tp_flag = _flag(engine, "tensor_parallel_size", "--tp")
    if dp_attention and (dp < 2 or tp % dp):
        raise SettingsError(
            f"--enable-dp-attention runs DP inside the TP group: {dp_flag} ({dp}) must be at "
            f"least 2 and divide {tp_flag} ({tp})",
            hint="e.g. --tp 8 --dp 8 --enable-dp-attention (8 GPUs)",
            flag="--enable-dp-attention")
    ep = settings.expert_parallel_size
    ep_flag = _flag(engine, "expert_parallel_size", "--ep")
    if ep is not None and ep > 1 and dp_attention:
        if ep != tp:
            raise SettingsError(f"{ep_flag} {ep} must equal {tp_flag} ({tp}) under DP "
                                "attention: experts are spread over the TP group",
                                hint=f"drop {ep_flag}, or set it to {tp_flag}", ep=ep)
    elif ep is not None and ep > 1 and ep != tp * dp:
        raise SettingsError(
            f"{ep_flag} {ep} must equal TP x DP ({tp * dp}): experts are spread over every "
            "tensor- and data-parallel rank",
            hint=f"drop {ep_flag}, or set it to {tp_flag} times {dp_flag}", ep=ep)


def plan_settings(engine: str, settings: EngineSettings, version: str | None,
                  model: ModelInfo | None = None,
                  load: Callable[[str], ModelInfo] | None = None, *,
                  speculative: bool = False) -> Settings:
    """The planner's view of ``settings`` for ``engine`` at ``version``, validated
    (:func:`check_settings`).

    With ``model`` (and ``load`` for a separate draft checkpoint), a speculative config is
    resolved as ``servewise plan --speculative-config`` does, so the draft's weights and KV
    pages count. ``speculative`` loads the checkpoint's MTP layers as the draft.
    """
    check_settings(engine, settings)
    tp = settings.tensor_parallel_size or 1
    pp = settings.pipeline_parallel_size or 1
    dp = settings.data_parallel_size or 1
    expert = (settings.expert_parallel_size or 1) > 1 or bool(settings.enable_expert_parallel)
    dp_attention = bool(settings.enable_dp_attention)
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
        enable_prefix_caching=settings.enable_prefix_caching,
        speculative=speculative,
        quantization=settings.quantization,
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


#: Settings that change what an engine holds in GPU memory but that the planner does not
#: read (vllm/engine/arg_utils.py, sglang/srt/server_args.py): each is named in the check.
UNMODELLED_SETTINGS = {
    "cuda_graph_max_bs": "the CUDA-graph batch sizes captured (graph memory grows with them)",
    "max_total_tokens": "SGLang's KV pool is capped at this many tokens",
    "chunked_prefill_size": "the prefill chunk, which sizes SGLang's activation peak",
    "compilation_config": "which batch sizes vLLM captures as CUDA graphs",
}
#: Flags outside the flag table that change memory, and how.
UNMODELLED_FLAGS = {
    "--cpu-offload-gb": "weights moved to CPU memory (fewer GiB of weights per GPU)",
    "--kv-offloading-size": "KV cache blocks kept in CPU memory as well",
    "--swap-space": "CPU swap space for KV blocks (host memory)",
    "--max-cudagraph-capture-size": "the largest batch captured as a CUDA graph",
    "--mm-processor-cache-gb": "the multimodal processor cache",
    "--limit-mm-per-prompt": "how many images or videos one prompt may carry "
                             "(the encoder's profiling budget)",
}


def unmodelled_memory(settings: EngineSettings) -> list[str]:
    """A note for each setting or flag of ``settings`` that changes memory in a way the plan
    leaves out, naming what the verdict does not include."""
    from servewise.knowledge import argv as argv_tools

    notes = [f"{setting.replace('_', '-')} is not modelled: {what}; the memory verdict leaves "
             "it out" for setting, what in UNMODELLED_SETTINGS.items()
             if getattr(settings, setting) is not None]
    if (settings.dtype or "").lower() in ("float32", "float"):
        notes.append("--dtype float32 is not modelled: weights and activations take twice "
                     "the bytes of the checkpoint's 16-bit dtype; the verdict is too hopeful")
    for flag, what in UNMODELLED_FLAGS.items():
        if argv_tools.has(settings.extra, flag):
            notes.append(f"{flag} is not modelled: {what}; the memory verdict leaves it out")
    return notes
