"""Rules a plan applies to the settings before predicting: no silent wrong answers.

Three kinds of rule (issue 19 §4):

* **Which engine.** A flag only one engine has picks that engine when ``--engine`` was left
  out, and the plan says so; with ``--engine`` naming the other engine it is an error that
  names the flag (:func:`choose_engine`).
* **What the model requires.** Where the user left a setting at its default and the model
  requires another value (DeepSeek-V4 needs an fp8 KV cache in vLLM), the plan uses the
  required value and says so; where the user set a value that breaks the rule, it is an
  error naming the flag, not a memory verdict (:func:`apply_model_rules`).
* **What is possible.** A ``--max-model-len`` beyond what the model's config allows is an
  error naming the flag, with the largest allowed value.
"""

from __future__ import annotations

from dataclasses import replace

from servewise.errors import UsageError
from servewise.plan.model import ModelInfo
from servewise.plan.startup import Settings

ENGINES = ("vllm", "sglang")

ENGINE_ONLY_FLAGS: dict[str, str] = {
    "--gpu-memory-utilization": "vllm",
    "--kv-cache-memory": "vllm",
    "--mem-fraction-static": "sglang",
    "--enable-dp-attention": "sglang",
}
"""Planner flags that only one engine has (the other engine's spelling differs in meaning:
vLLM's utilization covers weights, activations and KV; SGLang's fraction weights and KV)."""

#: KV cache dtypes vLLM's DeepSeek-V4 backends accept (fp8 becomes the fp8_ds_mla layout).
_DSV4_KV_DTYPES = ("fp8", "fp8_e4m3", "fp8_ds_mla")


def choose_engine(engine: str | None, given: list[str]) -> tuple[str, list[str]]:
    """The engine to plan for, given ``--engine`` (None: not given) and the flags given.

    Returns the engine and the notes to show. Raises :class:`UsageError` when flags of both
    engines are given, or a flag of the engine ``--engine`` does not name.
    """
    if engine is not None and engine not in ENGINES:
        raise UsageError(f"--engine {engine!r}: expected vllm or sglang", found=engine,
                         hint="give --engine vllm or --engine sglang")
    wanted = {flag: ENGINE_ONLY_FLAGS[flag] for flag in given if flag in ENGINE_ONLY_FLAGS}
    engines = set(wanted.values())
    if len(engines) > 1:
        flags = " and ".join(sorted(wanted))
        raise UsageError(f"{flags} belong to different engines; give the flags of one",
                         hint="--gpu-memory-utilization and --kv-cache-memory are vLLM's, "
                         "--mem-fraction-static and --enable-dp-attention SGLang's",
                         found=flags)
    if engine is not None:
        for flag, owner in wanted.items():
            if owner != engine:
                raise UsageError(
                    f"{flag} is {_name(owner)}'s flag, but --engine is {engine}",
                    hint=f"drop {flag}, or plan for {_name(owner)} with --engine {owner}",
                    flag=flag, engine=engine)
        return engine, []
    if engines:
        owner = engines.pop()
        if owner != "vllm":
            flag = next(iter(wanted))
            return owner, [f"{flag} is {_name(owner)}'s flag: planning for {_name(owner)} "
                           f"(pass --engine {owner} to say so, or --engine vllm with "
                           "--gpu-memory-utilization for vLLM)"]
        return owner, []
    return "vllm", []


def _name(engine: str) -> str:
    return {"vllm": "vLLM", "sglang": "SGLang"}.get(engine, engine)


def apply_model_rules(model: ModelInfo, settings: Settings, given: frozenset[str]
                      ) -> tuple[Settings, list[str]]:
    """``settings`` with the values ``model`` requires filled in, and notes saying which.

    ``given`` names the flags the user set (``--kv-cache-dtype``, ``--max-model-len``);
    a value the user set that breaks a rule raises :class:`UsageError` naming the flag.
    """
    notes: list[str] = []
    spec = model.spec
    if spec.family == "dsv4" and settings.engine == "vllm":
        dtype = settings.kv_cache_dtype or "auto"
        if dtype not in _DSV4_KV_DTYPES:
            if "--kv-cache-dtype" in given:
                raise UsageError(
                    f"--kv-cache-dtype {dtype}: DeepSeek-V4 in vLLM stores its KV cache only "
                    "as fp8 (the fp8_ds_mla layout); the engine refuses other dtypes",
                    hint="drop --kv-cache-dtype or give --kv-cache-dtype fp8",
                    flag="--kv-cache-dtype", found=dtype)
            settings = replace(settings, kv_cache_dtype="fp8")
            notes.append("DeepSeek-V4 requires --kv-cache-dtype fp8 in vLLM (fp8_ds_mla): "
                         "planned with it; pass it when you launch")
    limit = spec.max_position
    mml = settings.max_model_len
    if mml is not None and limit and mml > limit:
        raise UsageError(
            f"--max-model-len {mml} is more than {model.ref} allows ({limit:,} tokens, "
            "max_position_embeddings in its config.json); the engine refuses to start",
            hint=f"give --max-model-len {limit} or less (vLLM accepts more only with "
            "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1, at the risk of wrong output)",
            flag="--max-model-len", found=mml, limit=limit)
    return settings, notes
