"""Diagnose's utilization advice reads its default and cap from accounting.toml (issue 14 §1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from servewise.diagnose.advice import compute_advice
from servewise.diagnose.advice_figures import utilization_figures
from servewise.knowledge.accounting import load_engine_constants
from servewise.versions import EngineVersion

OOM = {"requested_gib": 2.0, "free_gib": 0.5, "total_gib": 80.0}


def test_the_figures_are_the_tables() -> None:
    table = load_engine_constants()
    version = EngineVersion.parse("0.19.0")
    figures = utilization_figures("vllm", "0.19.0")
    assert figures.default == table.number("vllm", "default_gpu_memory_utilization", version)
    assert figures.cap == table.number("vllm", "max_recommended_fraction", version)
    assert utilization_figures("sglang").default is None  # SGLang computes its own


def test_vllm_default_is_assumed_from_the_table() -> None:
    out = compute_advice("memory_fraction", OOM, "vllm", None)
    assert out["fraction_assumed"] is True and out["fraction_current"] == 0.9
    assert out["fraction_cap"] == utilization_figures("vllm").cap


def test_a_user_table_changes_the_advice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "accounting.toml").write_text(
        'version = 1\n[[constant]]\nid = "vllm.defaults.gpu_memory_utilization"\n'
        'name = "default_gpu_memory_utilization"\nengine = "vllm"\nvalue = 0.8\n'
        'unit = "fraction"\nsource = "https://docs.vllm.ai/en/latest/"\n'
        '[[constant]]\nid = "vllm.cap.max_recommended_fraction"\n'
        'name = "max_recommended_fraction"\nengine = "vllm"\nvalue = 0.9\nunit = "fraction"\n'
        'source = "https://docs.vllm.ai/en/latest/"\n')
    monkeypatch.setenv("SERVEWISE_DATA_DIR", str(tmp_path))
    out = compute_advice("memory_fraction", OOM, "vllm", None)
    assert out["fraction_current"] == 0.8 and out["fraction_cap"] == 0.9
    kv = {"max_model_len": 32768, "kv_needed_gib": 10.0, "kv_available_gib": 6.0,
          "total_gib": 80.0}
    advice = compute_advice("max_model_len", kv, "vllm", None)
    assert advice["utilization_needed"] == 0.85 and "utilization_impractical" not in advice
    kv["kv_needed_gib"] = 16.0
    advice = compute_advice("max_model_len", kv, "vllm", None)
    assert advice["utilization_needed"] == 0.93 and advice["utilization_impractical"] is True
