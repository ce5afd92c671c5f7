"""The planner against the calibration corpus (tests/data/plan_corpus.jsonl).

For each complete record the planner replays the log's model, GPU and settings and is
scored on the figure the engine logged: KV cache tokens (else the KV pool in GiB, else max
concurrency) within 3 %, and every failed startup predicted as a failure with the engine's
reason. The share within 3 % is printed (``-s``) and must not fall below :data:`THRESHOLD`,
set from the measured share (docs/plan.md keeps the figure and the misses).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from servewise.knowledge.accounting import load_engine_constants
from servewise.knowledge.gpus import resolve_gpu
from servewise.plan.planner import predict
from servewise.plan.resolve import load_model
from servewise.plan.startup import Startup
from support.plan_corpus import CORPUS, Record, load_corpus
from support.plan_lofo import score

TOLERANCE = 0.03
THRESHOLD = 0.90
"""Measured 2026-12-07: 18 of 20 complete records within 3 % in sample (docs/plan.md); the two
misses are kept and explained there. The leave-one-family-out figure is in test_lofo.py."""

HELDOUT = Path(__file__).resolve().parents[3] / "shared" / "data" / "heldout_sources.txt"


def _replay(record: Record) -> Startup:
    assert record.card is not None and record.catalog_gpu is not None
    settings = record.planner_settings()
    pool = settings.kv_cache_memory_bytes  # vLLM's CPU backend (an exported run): its pool
    memory = f"{pool}B" if record.catalog_gpu == "cpu" and pool else None
    return predict(load_model(record.card), resolve_gpu(record.catalog_gpu, memory=memory),
                   settings, load_engine_constants())


def test_corpus_loads_with_sources() -> None:
    records = load_corpus()
    assert len(records) >= 25
    assert len({record.id for record in records}) == len(records)


def test_no_record_comes_from_a_held_out_source() -> None:
    if not HELDOUT.exists():
        pytest.skip("shared/data/heldout_sources.txt is not beside the checkout")
    held = [line.strip() for line in HELDOUT.read_text().splitlines()
            if line.strip() and not line.startswith("#")]
    text = CORPUS.read_text()
    for entry in held:
        repo, _, rest = entry.partition("#")
        if rest:  # owner/repo#N: the issue URL
            owner_repo = repo.strip()
            for kind in ("issues", "pull"):
                assert f"github.com/{owner_repo}/{kind}/{rest.strip()}\"" not in text, entry
        elif " " in entry:  # owner/repo path
            assert entry.split(" ", 1)[1] not in text, entry


def test_share_within_three_percent_and_every_failure_predicted(
        capsys: pytest.CaptureFixture[str]) -> None:
    complete = [record for record in load_corpus() if record.complete]
    within, misses, failures = 0, [], []
    for record in complete:
        startup = _replay(record)
        if record.failed:
            ok = not startup.fits and bool(record.failure_phrase) and \
                record.failure_phrase in (startup.error or "")
            (failures if not ok else []).append(record.id)
            within += ok
            continue
        if not startup.fits:
            misses.append(f"{record.id}: predicted a failure ({startup.error})")
            continue
        figure, error = score(record, startup)
        if error is not None and abs(error) <= TOLERANCE:
            within += 1
        else:
            misses.append(f"{record.id}: {figure} off by {error:+.1%}" if error is not None
                          else f"{record.id}: nothing logged to compare")
    share = within / len(complete)
    with capsys.disabled():
        print(json.dumps({"complete": len(complete), "within_3pct": within,
                          "share": round(share, 3), "misses": misses,
                          "failures_missed": failures}, indent=1))
    assert failures == []
    assert share >= THRESHOLD, misses
