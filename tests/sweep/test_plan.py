"""Sweep plans, the state file's resume rules, and the result tables (no engine)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from servewise.cli import run
from servewise.errors import UsageError
from servewise.sweep import SweepState, default_state_path, load_plan, plan_from_flags
from servewise.sweep.plan import gpus_of, parse_plan
from servewise.sweep.ray_exec import resources_for
from servewise.sweep.results import markdown, pareto, sweep_document, write_pareto_plot
from servewise.sweep.runner import cell_key, pending

PLAN: dict[str, Any] = {
    "name": "two", "timeout": 60, "gpus": 8,
    "configurations": [
        {"name": "tp8", "command": "vllm serve /m --tensor-parallel-size 8 --port {port}"},
        {"name": "dp8ep8", "command": ["vllm", "serve", "/m", "-dp", "8",
                                       "--enable-expert-parallel"], "gpus": None},
    ],
    "workloads": [{"isl": 1024, "osl": 128, "concurrency": [1, 16]},
                  {"isl": 8192, "osl": 1024, "concurrency": "64", "num_prompts": 128},
                  {"isl": 512, "osl": 64, "sla": "ttft_p99<=500ms", "concurrency": 2}],
}


def test_plan_from_yaml(tmp_path: Path) -> None:
    path = tmp_path / "plan.yaml"
    path.write_text(yaml.safe_dump(PLAN))
    plan = load_plan(path)
    assert [c.name for c in plan.configurations] == ["tp8", "dp8ep8"]
    assert plan.configurations[0].argv[-1] == "{port}" and plan.configurations[0].gpus == 8
    assert [w.levels for w in plan.workloads] == [(1.0, 16.0), (64.0,), (2.0,)]
    assert plan.workloads[1].num_prompts == 128 and plan.workloads[2].sla == "ttft_p99<=500ms"
    assert plan.timeout_s == 60 and plan.source == path
    assert default_state_path(path, plan.key, tmp_path / "s") == tmp_path / "plan.sweep.json"
    # a key changes with what runs, not with anything else
    changed = dict(PLAN, configurations=[dict(PLAN["configurations"][0], command="vllm serve "
                                                                             "/m --port {port}"),
                                         PLAN["configurations"][1]])
    other = parse_plan(changed)
    assert other.configurations[0].key != plan.configurations[0].key
    assert other.configurations[1].key == plan.configurations[1].key


def test_gpus_of_a_command() -> None:
    assert gpus_of(["--tensor-parallel-size", "8"]) == 8
    assert gpus_of(["--tp", "4", "--dp-size=2"]) == 8
    assert gpus_of(["-tp", "2", "-pp", "2", "-dp", "2"]) == 8
    assert gpus_of(["--max-model-len", "4096"]) == 1


@pytest.mark.parametrize(("change", "found"), [
    ({"configurations": []}, "no configurations"),
    ({"workloads": None}, "no workloads"),
    ({"colour": 1}, "unknown fields: colour"),
    ({"configurations": [{"name": "a"}]}, "needs one of command and recipe"),
    ({"configurations": [{"name": "a", "command": "x"}, {"name": "a", "command": "y"}]},
     "same name"),
    ({"configurations": [{"name": "a/b", "command": "x"}]}, "without '/'"),
    ({"configurations": [{"name": "a", "command": "x 'y"}]}, "cannot split"),
    ({"workloads": [{"isl": 1}]}, "needs isl and osl"),
    ({"workloads": [{"isl": 1, "osl": 1, "concurrency": [1, 0]}]}, "positive numbers"),
    ({"workloads": [{"isl": 1, "osl": 1, "concurrency": 1.5}]}, "whole numbers"),
    ({"workloads": [{"isl": 1, "osl": 1, "rate": 1, "concurrency": 1}]}, "both"),
    ({"workloads": [{"isl": 1, "osl": 1, "sla": "ttft<=1"}]}, "METRIC_STAT<=VALUE"),
    ({"workloads": [{"isl": 1, "osl": 1, "sla": "ttft_p99<=1", "concurrency": [1, 2]}]},
     "one number"),
    ({"timeout": -1}, "timeout"),
])
def test_bad_plans_say_where(change: dict[str, Any], found: str) -> None:
    with pytest.raises(UsageError) as info:
        parse_plan({**PLAN, **change})
    assert found in info.value.message and info.value.hint


def test_plan_from_flags() -> None:
    plan = plan_from_flags(["a=vllm serve /m --port {port}", "b=vllm/some-model/h200/tp8"],
                           128, 16, "1,8", None, num_prompts=10, model="m")
    assert plan.configurations[0].argv[:2] == ("vllm", "serve")
    assert plan.configurations[1].recipe == "vllm/some-model/h200/tp8"
    assert plan.workloads[0].levels == (1.0, 8.0) and plan.workloads[0].num_prompts == 10
    for bad in (["a"], ["=x"], []):
        with pytest.raises(UsageError):
            plan_from_flags(bad, 1, 1, None, None)
    with pytest.raises(UsageError):
        plan_from_flags(["a=x {port}"], None, 1, None, None)


def test_state_resume_rules(tmp_path: Path) -> None:
    plan = parse_plan(PLAN)
    path = tmp_path / "state.json"
    state = SweepState.open(path, plan.to_dict())
    first, second = plan.configurations
    assert [c.name for c, _ in pending(plan, state, False)] == ["tp8", "dp8ep8"]
    state.put_cell(cell_key(first, plan.workloads[0]), {"status": "done"})
    state.put_cell(cell_key(first, plan.workloads[1]), {"status": "failed"})
    state.put_configuration(second.key, {"status": "timeout"})
    again = SweepState.open(path, plan.to_dict())  # as a resumed sweep reads it
    assert again.data["resumed"] == 1 and again.sweep_id == state.sweep_id
    todo = pending(plan, again, False)
    assert [(c.name, [w.key for w in ws]) for c, ws in todo] == [
        ("tp8", [plan.workloads[2].key])]
    retried = pending(plan, again, True)
    assert [(c.name, len(ws)) for c, ws in retried] == [("tp8", 2), ("dp8ep8", 3)]
    assert SweepState.open(path, plan.to_dict(), fresh=True).data["cells"] == {}
    path.write_text("{not json")
    with pytest.raises(UsageError):
        SweepState.open(path, plan.to_dict())
    assert not list(tmp_path.glob(".*.tmp"))  # the writes left no temporary file


def entry(concurrency: int, ttft: float, tpot: float, per_gpu: float) -> dict[str, Any]:
    return {"workload": {"dataset": "random", "isl": 1024, "osl": 128,
                         "max_concurrency": concurrency}, "completed": 10, "failed": 0,
            "ttft_ms": {"mean": ttft, "p50": ttft, "p90": ttft, "p99": ttft},
            "tpot_ms": {"mean": tpot, "p50": tpot, "p90": tpot, "p99": tpot},
            "output_tokens_per_s": per_gpu / 9, "tokens_per_sec_per_gpu": per_gpu}


def test_tables_markdown_pareto_and_plot(tmp_path: Path) -> None:
    plan = parse_plan({**PLAN, "workloads": PLAN["workloads"][:1]})
    state = SweepState.open(tmp_path / "s.json", plan.to_dict())
    first, second = plan.configurations
    state.put_configuration(first.key, {"name": "tp8", "status": "done", "gpus": 8,
                                        "launch": {"outcome": "ready", "time_to_ready_s": 80,
                                                   "run_id": "launch-1", "engine": "vllm"}})
    state.put_cell(cell_key(first, plan.workloads[0]), {
        "status": "done", "run_ids": ["bench-1"],
        "results": [entry(1, 100.0, 10.0, 500.0), entry(16, 300.0, 20.0, 4000.0)]})
    state.put_configuration(second.key, {"name": "dp8ep8", "status": "failed",
                                         "message": "the engine exited with code 1",
                                         "launch": {"outcome": "failed", "root_cause": {
                                             "summary": "out of memory",
                                             "category": "oom"}}})
    document = sweep_document(plan, state, "done")
    tp8, dp8 = document["configurations"]
    assert tp8["latencyPercentile"] == "P50" and tp8["gpus"] == 8
    assert tp8["speed"][1] == {
        "workload": entry(16, 0, 0, 0)["workload"], "ttft_ms": 300.0, "tpot_ms": 20.0,
        "tokens_per_sec_per_gpu": 4000.0, "output_tokens_per_sec": round(4000 / 9, 2),
        "tokens_per_sec_per_user": 50.0, "completed": 10, "failed": 0, "run_id": "bench-1"}
    assert dp8["status"] == "failed" and dp8["speed"] == [] and dp8["recipe_save"] is None
    assert tp8["recipe_save"] == "servewise recipe save launch-1 --bench bench-1 --gpu GPU"
    assert [p["tokens_per_sec_per_user"] for p in document["pareto"]] == [50.0, 100.0]
    text = markdown(document)
    assert "| 1024 | 128 | 16 | 300.0 | 20.0 | 4,000.0 | 50.0 | 0 | `bench-1` |" in text
    assert "root cause: out of memory [oom]" in text
    picture = tmp_path / "pareto.svg"
    write_pareto_plot(document, picture)
    assert picture.read_text().startswith("<?xml")
    # a point beaten on both axes is not on the frontier
    beaten = {"match": {"configuration": "x"}, "speed": [
        {"tokens_per_sec_per_user": 40.0, "tokens_per_sec_per_gpu": 3000.0, "workload": {},
         "run_id": "r"}]}
    assert len(pareto([*document["configurations"], beaten])) == 2


def test_ray_resources() -> None:
    assert resources_for("GPU", 8) == {"num_gpus": 8}
    assert resources_for("CPU", 2) == {"num_cpus": 2}
    assert resources_for("TPU", 4) == {"resources": {"TPU": 4}, "num_cpus": 0}


@pytest.mark.parametrize("argv", [
    [],
    ["--config", "a=x {port}"],
    ["--config", "a=x {port}", "--isl", "4", "--osl", "4", "--concurrency", "0"],
    ["missing.yaml"],
    ["plan.yaml", "--config", "a=x"],
    ["plan.yaml", "--gpus", "2"],
    ["--config", "a=x {port}", "--isl", "4", "--osl", "4", "--plot", "p.txt"],
])
def test_cli_bad_input(argv: list[str], tmp_path: Path, store_dir: Path,
                       capsys: pytest.CaptureFixture[str],
                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "plan.yaml").write_text(yaml.safe_dump(PLAN))
    code = run(["sweep", *argv, "--json"])
    document = json.loads(capsys.readouterr().out)
    assert code == 2 and document["error"] == "usage_error" and document["hint"]


def test_the_doc_names_every_option() -> None:
    from typer.main import get_command

    from servewise.cli import app
    from support.paths import ROOT

    text = (ROOT / "docs" / "sweep.md").read_text()
    group = get_command(app)
    for param in group.commands["sweep"].params:  # type: ignore[attr-defined]
        for option in param.opts:
            if option.startswith("--") and option != "--help":
                assert f"`{option}" in text, option


def test_what_check_is_given_from_a_command() -> None:
    from servewise.sweep.runner import _check_flags, _command_model

    args = ["/m", "--port", "{port}", "--max-model-len", "9", "--host=0.0.0.0", "--tp", "2"]
    assert _command_model(args, "vllm") == "/m"
    assert _check_flags(args, "vllm") == ("--max-model-len", "9", "--tp", "2")
    sglang = ["--model-path=/s", "--port", "30000", "--tp", "4"]
    assert _command_model(sglang, "sglang") == "/s"
    assert _check_flags(sglang, "sglang") == ("--tp", "4")
    assert _command_model(["--tp", "2"], "sglang") is None
