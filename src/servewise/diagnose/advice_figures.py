"""What diagnose's advice adds to a finding, and the engine figures it rests on.

``ADVICE_FIELDS`` names the fields each advice (a rule's ``advice = "…"``) adds, so that
rule files can be checked without the diagnose package. The utilization figures come from
``knowledge/data/accounting.toml`` (the table the planner reads), never from constants in
code: the default ``--gpu-memory-utilization`` vLLM starts with, and the largest fraction
servewise recommends for either engine. One question, one answer.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from servewise.errors import ServewiseError
from servewise.knowledge.accounting import EngineConstants, load_engine_constants
from servewise.knowledge.engines import serving_engines
from servewise.knowledge.flags import load_flag_table
from servewise.versions import EngineVersion

__all__ = ["ADVICE_FIELDS", "UtilizationFigures", "flag_fields", "flag_values",
           "utilization_figures"]

ADVICE_FIELDS: dict[str, tuple[str, ...]] = {
    "memory_fraction": ("fraction_flag", "fraction_current", "fraction_max",
                        "fraction_cautious", "headroom_gib", "margin_gib", "deficit_gib",
                        "fragmentation", "fraction_assumed", "need_gpu_memory",
                        "gpu_total_gib", "fraction_drop", "fraction_cap"),
    "tp_divisors": ("tp_choices",),
    "flag_spelling": ("spelling_advice",),
    "max_model_len": ("max_model_len_fit", "max_model_len_basis", "kv_shortfall_gib",
                      "utilization_needed", "utilization_impractical", "gpu_total_gib",
                      "utilization_current", "fraction_cap"),
}
"""The fields each advice adds, for the rules' fix templates."""

DEFAULT_UTILIZATION = "default_gpu_memory_utilization"
"""The accounting.toml name of vLLM's default ``--gpu-memory-utilization``."""
MAX_RECOMMENDED = "max_recommended_fraction"
"""The accounting.toml name of the largest static fraction servewise recommends."""


@dataclass(frozen=True)
class UtilizationFigures:
    """The figures of one engine (at one version, when known) that the advice uses."""

    default: float | None
    """The engine's default static fraction when it has a fixed one (vLLM's 0.9), else None
    (SGLang computes its default from the GPU's memory)."""
    cap: float
    """The largest fraction servewise recommends: above it, the advice says impractical."""


def _lookup(table: EngineConstants, engine: str, name: str,
            version: EngineVersion | None) -> float | None:
    if version is not None:
        try:
            return table.number(engine, name, version)
        except ServewiseError:
            pass
    current = [c for c in table.all() if c.engine == engine and c.name == name
               and c.until is None and not isinstance(c.value, str)]
    return float(current[-1].value) if current else None


def utilization_figures(engine: str | None, version: str | None = None) -> UtilizationFigures:
    """The default and the cap for ``engine`` (vLLM when unknown), at ``version`` when the
    log names one, else the entries that hold today."""
    name = engine if engine in serving_engines() else "vllm"
    parsed: EngineVersion | None = None
    if version:
        try:
            parsed = EngineVersion.parse(version)
        except ServewiseError:
            parsed = None
    table = load_engine_constants()
    default = _lookup(table, name, DEFAULT_UTILIZATION, parsed)
    cap = _lookup(table, name, MAX_RECOMMENDED, parsed)
    if cap is None:
        raise ServewiseError(f"accounting.toml has no {name} constant {MAX_RECOMMENDED!r}",
                             hint="add it to accounting.toml in $SERVEWISE_DATA_DIR")
    return UtilizationFigures(default=default, cap=cap)


def flag_fields() -> frozenset[str]:
    """``flag_<setting>`` for every setting of the engine-flag table: fix templates spell
    flags through them (``{flag_max_model_len}``), so one table names them for each engine."""
    return frozenset(f"flag_{setting.id}" for setting in load_flag_table())


def flag_values(engine: str | None, version: str | None = None) -> dict[str, str]:
    """See :func:`_flag_values` (a copy of the cached answer)."""
    return dict(_flag_values(engine, version))


@functools.cache
def _flag_values(engine: str | None, version: str | None = None) -> dict[str, str]:
    """``flag_<setting>`` → the flag ``engine`` (vLLM when unknown or another engine) spells
    it with at ``version``. A setting the engine lacks takes the engine's counterpart
    (SGLang's ``--mem-fraction-static`` for ``gpu_memory_utilization``), else vLLM's spelling."""
    name = engine if engine in serving_engines() else "vllm"
    try:
        at = None if version is None else EngineVersion.coerce(version)
    except ServewiseError:
        return {}
    table = load_flag_table()
    out: dict[str, str] = {}
    for setting in table:
        found = table.nearest_spelling(setting.id, name, at)
        spelling = found[0] if found else (setting.spelling("vllm", at)
                                           or setting.spelling("sglang", at))
        if spelling is not None:
            out[f"flag_{setting.id}"] = spelling.name
    return out

