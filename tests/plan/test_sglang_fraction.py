"""SGLang's ``--mem-fraction-static``: one rule decides the verdict and the advice (issue 28 §4).

For ``llama-3.1-70b --gpu a100:2 --engine sglang`` the plan advised 0.827 where its own
minimum for one KV page was 0.851, said "does not fit with any layout" when 0.9 starts,
printed ``default0.834`` and "verdict risk low" beside "fits NO", and ``check`` answered
WILL START when one full-length request did not fit. The rule now: at a fraction ``f``,
SGLang starts when its pool holds one page (``f >= lowest_viable``) and the deployment
fits when the pool holds one ``context_len`` request (``f >= lowest_for_one_request``); the
advice is a fraction in ``[lowest, highest_with_headroom]`` or none, and the verdict at the
advised fraction is the one the plan prints.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from servewise.cli import run
from servewise.knowledge.accounting import load_engine_constants
from servewise.knowledge.gpus import resolve_gpu
from servewise.plan.planner import make_plan
from servewise.plan.resolve import load_model
from servewise.plan.sglang import fraction_window, sglang_startup
from servewise.plan.startup import Settings
from servewise.plan.weights import Parallel

CONSTANTS = load_engine_constants()


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERVEWISE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("SERVEWISE_DATA_DIR", str(tmp_path / "data"))


def _plan(model: str, gpu: str, count: int, **settings: object) -> dict[str, object]:
    info = load_model(model)
    device = resolve_gpu(gpu)
    result = make_plan(info, device, Settings(engine="sglang", **settings),  # type: ignore[arg-type]
                       CONSTANTS, gpus_per_node=count)
    return result.to_dict()


def test_the_advice_is_never_below_the_minimum_for_one_page() -> None:
    plan = _plan("llama-3.1-70b", "a100-80gb", 2)
    rec = plan["recommendation"]
    assert isinstance(rec, dict)
    detail = plan["startup_detail"]
    assert isinstance(detail, dict)
    lowest = detail["lowest_viable_mem_fraction_static"]
    highest = rec["highest_fraction_with_headroom"]
    # 0.9 starts on two A100s: the window of fractions that start is not empty
    assert lowest <= 0.9 <= highest
    advised = rec["mem_fraction_static"]
    assert advised is not None and lowest <= advised <= highest
    # the lowest for one full request is the same figure in the plan and the advice
    assert rec["lowest_fraction_for_one_request"] == \
        detail["lowest_mem_fraction_static_for_one_request"]


def test_no_layout_that_starts_is_called_unfit_with_any_layout() -> None:
    plan = _plan("llama-3.1-70b", "a100-80gb", 2)
    notes = plan["notes"]
    assert isinstance(notes, list)
    assert not any("with any layout" in note for note in notes), notes


@pytest.mark.parametrize("fraction", [0.80, 0.851, 0.86, 0.9, 0.95])
def test_one_rule_for_starting_and_fitting(fraction: float) -> None:
    info = load_model("llama-3.1-70b")
    device = resolve_gpu("a100-80gb")
    settings = Settings(engine="sglang", layout=Parallel(2), mem_fraction_static=fraction)
    startup = sglang_startup(info, device, settings, CONSTANTS)
    window = fraction_window(info, device, settings, CONSTANTS)
    starts = fraction >= window.lowest_viable
    assert (startup.kv_cache_tokens > 0) == starts
    assert startup.fits == (fraction >= window.lowest_for_one_request)
    # one 131,072-token request needs more than the GPU: never fits, whatever starts
    assert not startup.fits
    assert (startup.error is None) == startup.fits


def test_a_shorter_context_that_fits_is_advised_and_fits() -> None:
    plan = _plan("llama-3.1-70b", "a100-80gb", 2, max_model_len=16384)
    rec = plan["recommendation"]
    assert isinstance(rec, dict)
    advised = rec["mem_fraction_static"]
    assert advised is not None
    startup = rec["startup"]
    assert isinstance(startup, dict) and startup["fits"] is True
    assert startup["kv_cache_tokens"] >= 16384
    notes = plan["notes"]
    assert isinstance(notes, list)
    assert not any("with any layout" in n for n in notes)
    # the fraction window's rule and the re-predicted startup agree
    assert rec["lowest_fraction_for_one_request"] <= advised <= \
        rec["highest_fraction_with_headroom"]


def test_text_has_no_glued_labels_and_no_low_risk_beside_a_failure(
        capsys: pytest.CaptureFixture[str]) -> None:
    code = run(["plan", "llama-3.1-70b", "--gpu", "a100:2", "--engine", "sglang"])
    out = capsys.readouterr().out
    assert code == 1
    assert "default0." not in out
    assert "verdict risk            low" not in out
    assert "does not fit on these GPUs with any layout" not in out
    assert "0.827" not in out


def test_check_does_not_say_will_start_when_a_full_request_does_not_fit(
        capsys: pytest.CaptureFixture[str]) -> None:
    code = run(["check", "--json", "llama-3.1-70b", "--gpu", "a100:2", "--engine", "sglang",
                "--", "--mem-fraction-static", "0.9"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1, report.get("verdict")
    problems = report["problems"]
    assert any(p["part"] == "memory" and "131,072" in p["message"] for p in problems)
    # and the fix names a context that fits at the fraction given
    memory = next(p for p in problems if p["part"] == "memory")
    assert "--context-length" in (memory.get("fix") or "") or \
        "--max-model-len" in (memory.get("fix") or "")


def test_dsv4_h200_recipe_fraction_still_fits() -> None:
    info = load_model("deepseek-v4-flash")
    device = resolve_gpu("h200")
    settings = Settings(engine="sglang", layout=Parallel(8), mem_fraction_static=0.88,
                        max_model_len=65536)
    startup = sglang_startup(info, device, settings, CONSTANTS)
    window = fraction_window(info, device, settings, CONSTANTS)
    assert startup.fits == (window.lowest_for_one_request <= 0.88)


def test_dp_attention_reserve_follows_sglang_and_plain_dp_adds_none() -> None:
    from servewise.plan.sglang import default_fraction
    from servewise.versions import EngineVersion

    device = resolve_gpu("h200")
    version = EngineVersion.parse("0.5.16")
    attention = Settings(engine="sglang", layout=Parallel(8, 1, 8, dp_attention=True))
    _, reserve = default_fraction(device, attention, CONSTANTS, version)
    # 512 + 8192 * 1.5 + 512 * 2 + 8 / 8 * 1024, then 3 * 512 * 8 and, above a graph batch
    # of 300, 1.5 * 512 * 8 more (server_args._handle_gpu_memory_settings)
    assert reserve["reserved_mib"] == 512 + 8192 * 1.5 + 512 * 2 + 1024 + 512 * 8 * 4.5
    replicas = Settings(engine="sglang", layout=Parallel(1, 1, 8))
    _, plain = default_fraction(device, replicas, CONSTANTS, version)
    assert plain["reserved_mib"] == max(512 + 8192 * 1.5 + 256 * 2 + 1024 / 8, 10240)
