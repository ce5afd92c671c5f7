"""What a plan requires of the settings before predicting: no silent wrong answers.

Three kinds of requirement:

* **Which engine.** A flag only one engine has picks that engine when ``--engine`` was left
  out, and the plan says so; with ``--engine`` naming the other engine it is an error that
  names the flag (:func:`choose_engine`). Which engine has which setting is the flag table's
  (``engine_flags.toml``).
* **What the model requires.** The model rules (``model_rules.toml``, the table ``check``
  and the recipe importer read) that set a value the planner models (``--kv-cache-dtype``,
  ``--block-size``): where the user left the setting at its default, the plan uses the
  required value and says so; where the user set a value the rule does not allow, it is an
  error naming the flag, not a memory verdict (:func:`apply_model_rules`).
* **What is possible.** A ``--max-model-len`` beyond what the model's config allows is an
  error naming the flag, with the largest allowed value.
"""

from __future__ import annotations

from dataclasses import fields, replace

from servewise.errors import UsageError
from servewise.knowledge.engines import display_name, serving_engines
from servewise.knowledge.flags import FlagTable, from_argv, load_flag_table
from servewise.knowledge.model_rules import ModelRule, RuleViolation, model_rules_for
from servewise.plan.model import ModelInfo
from servewise.plan.startup import Settings

#: Settings a user can give ``plan`` that only some engines have, by the plan option's flag.
_PLAN_FLAGS = {"--gpu-memory-utilization": "gpu_memory_utilization",
               "--kv-cache-memory": "kv_cache_memory_bytes",
               "--mem-fraction-static": "mem_fraction_static",
               "--enable-dp-attention": "enable_dp_attention"}


def engine_only_flags(table: FlagTable | None = None) -> dict[str, str]:
    """Each plan flag that only one engine has, with that engine (from the flag table)."""
    flags = table or load_flag_table()
    owners: dict[str, str] = {}
    for flag, setting_id in _PLAN_FLAGS.items():
        engines = flags.setting(setting_id).engines()
        if len(engines) == 1:
            owners[flag] = engines[0]
    return owners


def choose_engine(engine: str | None, given: list[str]) -> tuple[str, list[str]]:
    """The engine to plan for, given ``--engine`` (None: not given) and the flags given.

    Returns the engine and the notes to show. Raises :class:`UsageError` when flags of both
    engines are given, or a flag of the engine ``--engine`` does not name.
    """
    engines_known = serving_engines()
    if engine is not None and engine not in engines_known:
        raise UsageError(f"--engine {engine!r}: expected {' or '.join(engines_known)}",
                         found=engine, hint="give --engine vllm or --engine sglang")
    only = engine_only_flags()
    wanted = {flag: only[flag] for flag in given if flag in only}
    engines = set(wanted.values())
    if len(engines) > 1:
        flags = " and ".join(sorted(wanted))
        by_engine = "; ".join(
            f"{' and '.join(sorted(f for f, e in only.items() if e == owner))} "
            f"{'are' if sum(e == owner for e in only.values()) > 1 else 'is'} "
            f"{display_name(owner)}'s" for owner in engines_known)
        raise UsageError(f"{flags} belong to different engines; give the flags of one",
                         hint=by_engine, found=flags)
    if engine is not None:
        for flag, owner in wanted.items():
            if owner != engine:
                raise UsageError(
                    f"{flag} is {display_name(owner)}'s flag, but --engine is {engine}",
                    hint=f"drop {flag}, or plan for {display_name(owner)} with --engine "
                    f"{owner}", flag=flag, engine=engine)
        return engine, []
    default = engines_known[0]
    if engines:
        owner = engines.pop()
        if owner != default:
            flag = next(iter(wanted))
            return owner, [f"{flag} is {display_name(owner)}'s flag: planning for "
                           f"{display_name(owner)} (pass --engine {owner} to say so, or "
                           "--engine vllm with --gpu-memory-utilization for vLLM)"]
        return owner, []
    return default, []


_PLANNED = frozenset(f.name for f in fields(Settings))


def _planned_setting(rule: ModelRule, table: FlagTable) -> str | None:
    """The planner's setting a rule's flag sets, or None."""
    found = table.lookup(rule.engine, rule.flag)
    return found[0].id if found is not None and found[0].id in _PLANNED else None


def apply_model_rules(model: ModelInfo, settings: Settings, given: frozenset[str]
                      ) -> tuple[Settings, list[str]]:
    """``settings`` with the values ``model`` requires filled in, and notes saying which.

    ``given`` names the flags the user set (``--kv-cache-dtype``, ``--max-model-len``);
    a value the user set that a rule does not allow raises :class:`UsageError` naming the
    flag.
    """
    notes: list[str] = []
    table = load_flag_table()
    rules = model_rules_for(model.ref, settings.engine, settings.engine_version,
                            architectures=model.config.architectures)
    for rule in rules:
        planned = _planned_setting(rule, table)
        if rule.kind != "require" or planned is None or not rule.values:
            continue
        current = getattr(settings, planned)
        allowed = current is not None and str(current) in rule.values
        if rule.flag in given and current is not None and not allowed:
            raise UsageError(
                RuleViolation(rule, str(current), "wrong value").message,
                hint=f"use {' '.join(rule.fix)}",
                flag=rule.flag, found=str(current), rule=rule.id)
        if rule.flag in given or allowed:
            continue
        # the fix read as the engine reads it (the one argv reader types the value)
        fixed = getattr(from_argv(rule.engine, rule.fix, table=table), planned, None)
        if fixed is not None:
            settings = replace(settings, **{planned: fixed})
            notes.append(f"{model.ref} requires {rule.flag} {fixed} in "
                         f"{display_name(rule.engine)} ({rule.id}): planned with it; pass it "
                         "when you launch")
    limit = model.spec.max_position
    mml = settings.max_model_len
    if mml is not None and limit and mml > limit:
        raise UsageError(
            f"--max-model-len {mml} is more than {model.ref} allows ({limit:,} tokens, "
            "max_position_embeddings in its config.json); the engine refuses to start",
            hint=f"give --max-model-len {limit} or less (vLLM accepts more only with "
            "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1, at the risk of wrong output)",
            flag="--max-model-len", found=mml, limit=limit)
    return settings, notes
