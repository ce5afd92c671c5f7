"""Numbers into advice: the memory fraction that leaves room, the context that fits.

``memory_fraction`` (an out-of-memory error with the amount requested): the
engine's static memory fraction (SGLang ``--mem-fraction-static``, vLLM
``--gpu-memory-utilization``) reserves that share of the GPU for weights and KV
cache; everything else (workspaces, CUDA graphs, activations) must fit in the
rest. To make room for the failed allocation plus a safety margin::

    margin      = max(1 GiB, requested / 2)           # growth with batch size
    deficit     = requested + margin - free           # more that must be free
    fraction    = floor2(current - deficit / total)   # the largest that leaves it
    cautious    = fraction - 0.05                     # 5 % of the GPU more

SGLang on a ~140 GiB H200 at 0.944 with 1.34 GiB requested and 1.06 GiB free:
deficit 1.28 GiB, fraction 0.93, cautious 0.88 (the value SGLang's recipe chose).
When ``free < requested <= free + reserved-but-unallocated`` the memory is there
but fragmented, and ``PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`` comes
first. Without the GPU's total memory (not in the log, no ``--gpu``) the advice
asks for it.

``max_model_len`` (a KV cache smaller than one request of the maximum length):
vLLM's own estimate when it prints one, else the KV capacity in tokens when it
prints that (V0), else a linear estimate from the GiB figures, rounded down to a
multiple of 256; and the ``--gpu-memory-utilization`` that would keep the
requested length, when the GPU's memory is known (flagged impractical above the largest
fraction servewise recommends).

vLLM's default utilization and that cap are read from ``knowledge/data/accounting.toml``
(:func:`servewise.diagnose.advice_figures.utilization_figures`), the table the planner
reads, at the engine version the log names.

``tp_divisors`` (heads that do not divide by the tensor-parallel size): the sizes
up to 16 that do.

``flag_spelling`` (a command line the engine refused): see :mod:`.flag_advice`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from servewise.diagnose.advice_figures import ADVICE_FIELDS, utilization_figures
from servewise.diagnose.fields import ceil2, floor2, known
from servewise.diagnose.flag_advice import flag_spelling
from servewise.diagnose.result import FieldValue

__all__ = ["ADVICE_FIELDS", "compute_advice"]

MARGIN_MIN_GIB = 1.0
CAUTIOUS_STEP = 0.05
LENGTH_STEP = 256


def _version(values: Mapping[str, FieldValue]) -> str | None:
    version = values.get("engine_version")
    return version if isinstance(version, str) else None


def _number(values: Mapping[str, FieldValue], name: str) -> float | None:
    value = values.get(name)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _total(values: Mapping[str, FieldValue], gpu_total_gib: float | None) -> float | None:
    total = _number(values, "total_gib") or _number(values, "gpu_total_gib")
    return total if total else gpu_total_gib


def memory_fraction(values: Mapping[str, FieldValue], engine: str | None,
                    gpu_total_gib: float | None) -> dict[str, FieldValue]:
    """The largest static memory fraction that leaves room for the failed allocation."""
    out: dict[str, FieldValue] = {}
    requested = _number(values, "requested_gib")
    if requested is None:
        return out
    free = _number(values, "free_gib")
    reserved = _number(values, "reserved_unallocated_gib")
    if free is not None and reserved is not None and free < requested <= free + reserved:
        out["fragmentation"] = True
    sglang = engine == "sglang" or known(values, "mem_fraction_static")
    out["fraction_flag"] = "--mem-fraction-static" if sglang else "--gpu-memory-utilization"
    current = _number(values, "mem_fraction_static" if sglang else "gpu_memory_utilization")
    figures = utilization_figures("sglang" if sglang else "vllm", _version(values))
    out["fraction_cap"] = figures.cap
    if current is None and not sglang and figures.default is not None:
        current = figures.default
        out["fraction_assumed"] = True
    margin = max(MARGIN_MIN_GIB, requested / 2)
    out["margin_gib"] = round(margin, 2)
    out["headroom_gib"] = round(requested + margin, 2)
    deficit = requested + margin - (free or 0.0)
    out["deficit_gib"] = round(max(deficit, 0.0), 2)
    total = _total(values, gpu_total_gib)
    if total is None:
        out["need_gpu_memory"] = True
        return out
    out["gpu_total_gib"] = round(total, 2)
    out["fraction_drop"] = ceil2(max(deficit, 0.0) / total)
    if current is None:
        return out
    out["fraction_current"] = current
    fraction = floor2(current - max(deficit, 0.0) / total)
    if fraction >= current:
        fraction = floor2(current - 0.01)
    out["fraction_max"] = fraction
    out["fraction_cautious"] = round(fraction - CAUTIOUS_STEP, 2)
    return out


def max_model_len(values: Mapping[str, FieldValue], gpu_total_gib: float | None,
                  engine: str | None) -> dict[str, FieldValue]:
    """The largest ``--max-model-len`` the KV cache holds, and the utilization for more."""
    out: dict[str, FieldValue] = {}
    estimate = _number(values, "estimated_max_len")
    capacity = _number(values, "kv_capacity_tokens")
    wanted = _number(values, "max_model_len")
    needed = _number(values, "kv_needed_gib")
    available = _number(values, "kv_available_gib")
    if estimate:
        out["max_model_len_fit"] = int(estimate)
        out["max_model_len_basis"] = "the engine's own estimate"
    elif capacity:
        out["max_model_len_fit"] = int(capacity)
        out["max_model_len_basis"] = "the KV cache's capacity in tokens, as the engine logged it"
    elif wanted and needed and available is not None and needed > 0:
        fit = math.floor(wanted * max(available, 0.0) / needed / LENGTH_STEP) * LENGTH_STEP
        if fit > 0:
            out["max_model_len_fit"] = fit
            out["max_model_len_basis"] = ("a linear estimate from the KV GiB figures (exact for "
                                          "full attention; sliding-window layers fit more)")
    if needed is not None and available is not None and needed > available:
        shortfall = needed - available
        out["kv_shortfall_gib"] = round(shortfall, 2)
        total = _total(values, gpu_total_gib)
        current = _number(values, "gpu_memory_utilization")
        figures = utilization_figures(engine, _version(values))
        if current is None and engine in (None, "vllm"):
            current = figures.default
        if total is not None and current is not None:
            needed_fraction = ceil2(current + shortfall / total)
            out["gpu_total_gib"] = round(total, 2)
            out["utilization_current"] = current
            out["utilization_needed"] = needed_fraction
            out["fraction_cap"] = figures.cap
            if needed_fraction > figures.cap:
                out["utilization_impractical"] = True
    return out


def tp_divisors(values: Mapping[str, FieldValue]) -> dict[str, FieldValue]:
    """Tensor-parallel sizes up to 16 that divide the number of attention heads."""
    heads = _number(values, "num_heads")
    if not heads:
        return {}
    choices = [size for size in (1, 2, 4, 8, 16) if int(heads) % size == 0]
    return {"tp_choices": [str(size) for size in choices]}


def compute_advice(advice: str | None, values: Mapping[str, FieldValue], engine: str | None,
                   gpu_total_gib: float | None) -> dict[str, FieldValue]:
    """The fields ``advice`` adds for these extracted ``values`` (none for no advice)."""
    if advice == "tp_divisors":
        return tp_divisors(values)
    if advice == "memory_fraction":
        return memory_fraction(values, engine, gpu_total_gib)
    if advice == "max_model_len":
        return max_model_len(values, gpu_total_gib, engine)
    if advice == "flag_spelling":
        return flag_spelling(values, engine)
    return {}
