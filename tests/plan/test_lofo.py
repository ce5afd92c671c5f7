"""Leave-one-family-out accuracy on the corpus, and the provenance of fitted constants.

In sample, every record is predicted with the shipped ``accounting.toml``. Leave-one-family-
out (:mod:`support.plan_lofo`), a family's records are predicted with every constant its
own logs set fitted again without them, or replaced by its prior. The measured figures are
pinned below: a change that worsens the leave-one-out figures fails, and so does one that
widens the gap between the in-sample and the leave-one-out share — a change that improves
the corpus by fitting it, without predicting the families it did not see better.
"""

from __future__ import annotations

import json

import pytest

from servewise.knowledge.accounting import load_engine_constants
from support.plan_corpus import load_corpus
from support.plan_lofo import LeaveOneFamilyOut, Scores, evaluate, family, implied_value

LOFO_SHARE_FLOOR = 0.95
"""Measured 2026-12-07 (second pass): 19 of 20 complete records within 3 % leave-one-family-
out (docs/plan.md names the miss). Read in vLLM's source instead of fitted: the Triton
MXFP4 scale copies (gpt-oss), the three hidden-size tensors of llama.py's loop, the rope
cache, the vision encoder's dummy batch (plan/vision.py)."""
LOFO_FAILURES_FLOOR = 4
"""Measured 2026-12-07 (second pass): all 4 logged failures predicted leave-one-family-out."""
LOFO_CONCURRENCY_MAE_CEILING = 0.008
"""Measured 2026-12-07 (second pass): 0.77 % mean absolute error on max concurrency (6
records)."""
GAP_CEILING = 0.0
"""Measured 2026-12-07 (second pass): in sample 0.95, leave-one-family-out 0.95."""
FIT_TOLERANCE = 0.10
"""How far a shipped fitted value may sit from the median its corpus logs imply."""


@pytest.fixture(scope="module")
def figures() -> tuple[Scores, Scores, LeaveOneFamilyOut]:
    constants = load_engine_constants()
    records = load_corpus()
    lofo = LeaveOneFamilyOut(constants, records)
    in_sample = evaluate(records, lambda _record: constants)
    left_out = evaluate(records, lofo.table_for)
    return in_sample, left_out, lofo


def test_leave_one_family_out_figures(figures: tuple[Scores, Scores, LeaveOneFamilyOut],
                                      capsys: pytest.CaptureFixture[str]) -> None:
    in_sample, left_out, lofo = figures
    with capsys.disabled():
        print(json.dumps({"in_sample": in_sample.to_dict(),
                          "leave_one_family_out": left_out.to_dict(),
                          "replaced": lofo.replaced}, indent=1, default=str))
    assert left_out.complete == in_sample.complete
    assert left_out.share >= LOFO_SHARE_FLOOR, left_out.misses
    assert left_out.failures_predicted >= LOFO_FAILURES_FLOOR, left_out.misses
    assert left_out.concurrency_mae <= LOFO_CONCURRENCY_MAE_CEILING
    assert in_sample.share - left_out.share <= GAP_CEILING + 1e-9, (
        "the corpus improved by more than the families it did not see: "
        f"{in_sample.share:.2f} in sample, {left_out.share:.2f} leave-one-family-out")


def test_a_family_sets_no_constant_that_predicts_it(
        figures: tuple[Scores, Scores, LeaveOneFamilyOut]) -> None:
    _in, _out, lofo = figures
    shipped = {c.id: c for c in lofo.constants.all()}
    for record in lofo.records:
        name = family(record)
        table = {c.id: c for c in lofo.table_for(record).all()}
        for constant in shipped.values():
            if any(lofo.source_family(item) == name for item in constant.fitted_on):
                assert constant.id in lofo.replaced[name], (record.id, constant.id)
                # refitted or prior: either way not the value the family's logs set
                assert table[constant.id].value == lofo.replaced[name][constant.id]


def test_llama_is_predicted_without_llama_fitted_values(
        figures: tuple[Scores, Scores, LeaveOneFamilyOut]) -> None:
    _in, _out, lofo = figures
    replaced = lofo.replaced["llama"]
    # derived from vLLM's llama.py (three hidden-size tensors at the MLP peak), not fitted:
    # kept for Llama's own records
    assert "vllm.activation.elements" not in replaced
    # fitted only on Llama logs: another engine's measurement of the same memory
    assert replaced["vllm.non_torch.multi"] == next(
        c.value for c in lofo.constants.all() if c.id == "sglang.pre_load.multi")
    # fitted on Llama and gpt-oss logs: the gpt-oss log alone sets it
    assert replaced["vllm.activation.sampler_copies"] != 3.3


def test_every_fitted_constant_names_logs_that_exist() -> None:
    records = {record.id for record in load_corpus()}
    for constant in load_engine_constants().all():
        if constant.notes.lower().startswith(("measured:", "measured.", "measured,")):
            assert constant.fitted_on, f"{constant.id} says measured but names no log"
        for item in constant.fitted_on:
            assert item.startswith("family:") or item in records, (constant.id, item)


def test_shipped_fitted_values_are_what_their_logs_imply() -> None:
    constants = load_engine_constants()
    lofo = LeaveOneFamilyOut(constants)
    for constant in constants.all():
        if isinstance(constant.value, str):
            continue
        logs = [lofo.by_id[i] for i in constant.fitted_on if i in lofo.by_id]
        values = [v for r in logs if (v := implied_value(constant, r, constants)) is not None]
        if not values:
            continue
        median = sorted(values)[len(values) // 2] if len(values) % 2 else \
            sum(sorted(values)[len(values) // 2 - 1:len(values) // 2 + 1]) / 2
        assert abs(float(constant.value) - median) <= FIT_TOLERANCE * abs(median), (
            constant.id, constant.value, values)
