"""Scoring the planner on the corpus, in sample and leave-one-family-out.

A record's *family* is its model's architecture (``model_type`` without ``_text``/``_moe``
suffixes: Llama, Qwen3, gpt-oss, Gemma 3, DeepSeek-V4, Qwen3.5 …). Constants fitted to
startup logs name those logs in ``accounting.toml`` (``fitted_on``). To predict a family's
records *leave-one-family-out*, every constant fitted on one of that family's logs is fitted
again on the other families' logs alone — the value that makes each such log's own figure
come out exactly, found by bisection, then their median — or, when only that family's logs
(or logs outside the corpus from that family) set it, replaced by its ``prior`` (zero when
none). So a family's logs set no constant used to predict it.
"""

from __future__ import annotations

import functools
import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from servewise.knowledge.accounting import EngineConstant, EngineConstants, load_engine_constants
from servewise.knowledge.gpus import resolve_gpu
from servewise.plan.model import ModelInfo
from servewise.plan.planner import predict
from servewise.plan.resolve import load_model
from servewise.plan.startup import Startup
from support.plan_corpus import Record, load_corpus

GIB = 2**30
TOLERANCE = 0.03
SUFFIXES = ("_text", "_moe", "_vl")
BISECTIONS = 24


@functools.cache
def _model(card: str) -> ModelInfo:
    return load_model(card)


def family(record: Record) -> str:
    """The record's model family: its ``model_type`` without size or variant suffixes."""
    assert record.card is not None
    name = _model(record.card).spec.model_type
    changed = True
    while changed:
        changed = False
        for suffix in SUFFIXES:
            if name.endswith(suffix):
                name, changed = name[: -len(suffix)], True
    return name


def replay(record: Record, constants: EngineConstants) -> Startup:
    """The planner's prediction for a complete record."""
    assert record.card is not None and record.catalog_gpu is not None
    return predict(_model(record.card), resolve_gpu(record.catalog_gpu),
                   record.planner_settings(), constants)


def score(record: Record, startup: Startup) -> tuple[str, float | None]:
    """The figure compared and the relative error (None: nothing logged to compare)."""
    logged = record.logged
    dp = record.planner_settings().layout.dp
    if logged.get("kv_cache_tokens"):
        return "kv_cache_tokens", startup.kv_cache_tokens / logged["kv_cache_tokens"] - 1
    if logged.get("k_size_gb"):  # SGLang's "GB" is GiB; K and V pools of equal size
        return "kv_cache_gib", startup.kv_cache_bytes / 2 / GIB / logged["k_size_gb"] - 1
    if logged.get("available_kv_gib"):
        return "kv_cache_gib", startup.kv_cache_bytes / GIB / logged["available_kv_gib"] - 1
    if logged.get("max_concurrency"):  # under DP the log sums the replicas' pools
        return "max_concurrency", startup.max_concurrency * dp / logged["max_concurrency"] - 1
    return "none", None


def concurrency_error(record: Record, startup: Startup) -> float | None:
    """Relative error of the maximum concurrency, where the log states it."""
    logged = record.logged.get("max_concurrency")
    if not logged or record.failed or not startup.fits:
        return None
    dp = record.planner_settings().layout.dp
    return float(startup.max_concurrency * dp / float(logged) - 1)


#: The part of vLLM's memory report each fitted constant sizes: the log's own figure for it
#: (any of the keys, GiB) and the plan's (breakdown key, bytes).
COMPONENTS = {
    "non_torch_bytes_single_gpu": (("non_torch_gib",), "non_torch_bytes"),
    "non_torch_bytes_multi_gpu": (("non_torch_gib",), "non_torch_bytes"),
    "cudagraph_bytes": (("cuda_graph_estimated_gib",), "cudagraph_bytes"),
    "activation_elements_per_token": (ACTIVATION := ("peak_activation_gib", "activation_gib",
                                                     "torch_peak_increase_gib"),
                                      "activation_peak_bytes"),
    "sampler_logit_copies": (ACTIVATION, "activation_peak_bytes"),
    "multimodal_profile_bytes": (ACTIVATION, "activation_peak_bytes"),
}


def _fit_residual(constant: EngineConstant, record: Record, startup: Startup) -> float | None:
    """What a fitted constant must zero for this log: the log's own figure for the part the
    constant sizes (non-torch memory, activation peak, CUDA graphs) where it states one, else
    the pool before rounding, else the compared figure's relative error."""
    keys, planned = COMPONENTS.get(constant.name, ((), ""))
    for key in keys:
        if key in record.logged and planned in startup.breakdown:
            return float(startup.breakdown[planned]) / GIB - float(record.logged[key])
    logged = record.logged.get("available_kv_gib")
    available = startup.breakdown.get("available_kv_bytes")
    if logged is not None and available is not None:
        return float(available) / GIB - float(logged)
    if record.failed:
        return None
    return score(record, startup)[1]


def implied_value(constant: EngineConstant, record: Record,
                  constants: EngineConstants) -> float | None:
    """The value of ``constant`` that reproduces ``record``'s own figure (None: no root)."""
    def residual(value: float) -> float | None:
        table = constants.with_values({constant.id: value})
        return _fit_residual(constant, record, replay(record, table))

    assert not isinstance(constant.value, str)
    low, high = 0.0, max(16.0 * float(constant.value), 16.0)
    r_low, r_high = residual(low), residual(high)
    if r_low is None or r_high is None or r_low * r_high > 0:
        return None
    for _ in range(BISECTIONS):
        middle = (low + high) / 2
        r_mid = residual(middle)
        if r_mid is None:
            return None
        if (r_mid > 0) == (r_low > 0):
            low, r_low = middle, r_mid
        else:
            high = middle
    return (low + high) / 2


@dataclass(frozen=True)
class Scores:
    """The figures the issue asks for, over the complete records."""

    complete: int
    within: int
    failures: int
    failures_predicted: int
    concurrency_errors: tuple[float, ...]
    misses: tuple[str, ...]

    @property
    def share(self) -> float:
        """Share of complete records within 3 % (failures: predicted with the reason)."""
        return self.within / self.complete

    @property
    def concurrency_mae(self) -> float:
        """Mean absolute error of the maximum concurrency where it is logged."""
        errors = self.concurrency_errors
        return sum(abs(e) for e in errors) / len(errors) if errors else 0.0

    def to_dict(self) -> dict[str, object]:
        """JSON-ready figures."""
        return {"complete": self.complete, "within_3pct": self.within,
                "share": round(self.share, 3), "failures": self.failures,
                "failures_predicted": self.failures_predicted,
                "concurrency_logged": len(self.concurrency_errors),
                "concurrency_mae": round(self.concurrency_mae, 4),
                "misses": list(self.misses)}


def evaluate(records: Iterable[Record],
             table_for: Callable[[Record], EngineConstants]) -> Scores:
    """Score every complete record with the table ``table_for`` gives it."""
    complete = within = failures = predicted = 0
    errors: list[float] = []
    misses: list[str] = []
    for record in records:
        if not record.complete:
            continue
        complete += 1
        startup = replay(record, table_for(record))
        if record.failed:
            failures += 1
            phrase = record.failure_phrase
            ok = not startup.fits and bool(phrase) and (phrase or "") in (startup.error or "")
            predicted += ok
            within += ok
            if not ok:
                misses.append(f"{record.id}: failure not predicted")
            continue
        if not startup.fits:
            misses.append(f"{record.id}: predicted a failure ({(startup.error or '')[:80]})")
            continue
        figure, error = score(record, startup)
        if error is not None and abs(error) <= TOLERANCE:
            within += 1
        else:
            misses.append(f"{record.id}: {figure} off by {error:+.1%}" if error is not None
                          else f"{record.id}: nothing logged to compare")
        concurrency = concurrency_error(record, startup)
        if concurrency is not None:
            errors.append(concurrency)
    return Scores(complete, within, failures, predicted, tuple(errors), tuple(misses))


class LeaveOneFamilyOut:
    """Constant tables with one family's logs set aside."""

    def __init__(self, constants: EngineConstants | None = None,
                 records: list[Record] | None = None) -> None:
        self.constants = constants or load_engine_constants()
        self.records = [r for r in (records or load_corpus()) if r.complete]
        self.by_id = {r.id: r for r in self.records}
        self._tables: dict[str, EngineConstants] = {}
        self.replaced: dict[str, dict[str, float | str]] = {}

    def source_family(self, fitted_on: str) -> str | None:
        """The family of a ``fitted_on`` item (None: a record not in the complete corpus)."""
        if fitted_on.startswith("family:"):
            return fitted_on.removeprefix("family:")
        record = self.by_id.get(fitted_on)
        return family(record) if record is not None else None

    def fit(self, constant: EngineConstant, records: list[Record]) -> float | None:
        """Median of the values the ``records`` imply (None: none implies one)."""
        values = [v for r in records
                  if (v := implied_value(constant, r, self.constants)) is not None]
        if not values:
            return None
        median = statistics.median(values)
        return round(median) if isinstance(constant.value, int) and constant.value > 100 \
            else median

    def table(self, left_out: str) -> EngineConstants:
        """The constants with every value that ``left_out``'s logs set fitted without them.

        A numeric constant whose ``prior`` is a string takes the value of the constant of
        that id instead (the same memory measured another way: vLLM's non-torch memory and
        SGLang's memory in use before load), as it stands without ``left_out``'s logs.
        """
        if left_out in self._tables:
            return self._tables[left_out]
        values: dict[str, float | str] = {}
        references: dict[str, str] = {}
        for constant in self.constants.all():
            if not any(self.source_family(item) == left_out for item in constant.fitted_on):
                continue
            others = [self.by_id[item] for item in constant.fitted_on
                      if item in self.by_id and family(self.by_id[item]) != left_out]
            numeric = not isinstance(constant.value, str)
            refit = self.fit(constant, others) if others and numeric else None
            if refit is not None:
                values[constant.id] = refit
            elif numeric and isinstance(constant.prior, str):
                references[constant.id] = constant.prior
            else:
                values[constant.id] = constant.prior if constant.prior is not None else 0
        shipped = {c.id: c.value for c in self.constants.all()}
        for constant_id, target in references.items():
            # a reference to another value set aside, or a cycle, knows nothing: zero
            value = values.get(target, 0 if target in references else shipped.get(target, 0))
            values[constant_id] = value
        self.replaced[left_out] = values
        self._tables[left_out] = table = self.constants.with_values(values)
        return table

    def table_for(self, record: Record) -> EngineConstants:
        """The table that predicts ``record`` without its family's logs."""
        return self.table(family(record))
