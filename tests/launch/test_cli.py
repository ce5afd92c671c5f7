"""``servewise launch``, ``stop``, ``search`` and ``runs`` on stand-in engines."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from servewise.cli import run
from servewise.launch.process import group_members

Standin = Callable[..., tuple[list[str], int]]


def call(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = run(list(argv))
    return code, capsys.readouterr().out


def test_detach_stop_and_runs(standin: Standin, store_dir: Path,
                              capsys: pytest.CaptureFixture[str]) -> None:
    argv, port = standin("--child")
    code, out = call(capsys, "launch", "--detach", "--json", "--port", str(port),
                     "--timeout", "30", "--", *argv)
    document = json.loads(out)
    assert code == 0 and document["ready"] and document["stopped"] is None
    pid = document["pid"]
    try:
        assert len(group_members(pid)) == 2  # still running after launch returned
        code, out = call(capsys, "runs", "--json")
        rows = json.loads(out)
        assert any(row.get("run_id") == document["run_id"] and row["kind"] == "launch"
                   for row in rows)
        code, out = call(capsys, "stop", document["run_id"], "--grace", "2", "--json")
        assert code == 0 and json.loads(out)["stopped"] == "terminated"
    finally:
        from servewise.launch.process import stop_group

        stop_group(pid, grace=0.5)
    assert group_members(pid) == []
    code, out = call(capsys, "runs", document["run_id"], "--json")
    assert json.loads(out)["stopped"] == "terminated"
    code, out = call(capsys, "stop", document["run_id"], "--json")
    assert code == 0 and "already ended" in json.loads(out)["stop_message"]


def test_launch_failure_json(standin: Standin, store_dir: Path,
                             capsys: pytest.CaptureFixture[str]) -> None:
    argv, port = standin("--max-model-len", "9000", "--limit", "4096")
    code, out = call(capsys, "launch", "--json", "--port", str(port), "--", *argv)
    document = json.loads(out)
    assert code == 1 and document["outcome"] == "failed"
    assert document["root_cause"]["category"] == "kv_cache_insufficient"
    assert Path(document["log_path"]).is_relative_to(store_dir)


def test_search_json(standin: Standin, store_dir: Path,
                     capsys: pytest.CaptureFixture[str]) -> None:
    argv, _ = standin("--max-model-len", "{value}", "--limit", "5000")
    argv[argv.index("--port") + 1] = "{port}"
    code, out = call(capsys, "search", "--param", "max-model-len", "--json", "--start",
                     "1024", "--timeout", "30", "--", *argv)
    document = json.loads(out)
    assert code == 0 and document["best"] == 5000 and document["status"] == "done"
    values = [attempt["value"] for attempt in document["attempts"]]
    assert values == [1024, 2048, 4096, 8192, 5000]  # the engine's figure ends it
    assert document["attempts"][3]["engine_hint"] == 5000
    code, out = call(capsys, "runs", document["search_id"], "--json")
    stored = json.loads(out)
    assert [a["value"] for a in stored["attempts"]] == values


def test_search_stops_on_an_unrelated_failure(standin: Standin, store_dir: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    argv, _ = standin("--exit", "3", "--max-model-len", "{value}")
    argv[argv.index("--port") + 1] = "{port}"
    code, out = call(capsys, "search", "--json", "--start", "1024", "--", *argv)
    document = json.loads(out)
    assert code == 1 and document["status"] == "stopped" and document["best"] is None


def test_bad_usage(tmp_path: Path, store_dir: Path, capsys: pytest.CaptureFixture[str]
                   ) -> None:
    code, out = call(capsys, "launch", "--json", "--recipe", "no/such/recipe")
    assert code == 2 and "no recipe" in json.loads(out)["message"]
    code, out = call(capsys, "launch", "--json")
    assert code == 2 and "give the command once" in json.loads(out)["message"]
    code, out = call(capsys, "search", "--param", "tp", "--json", "--", "x", "{value}")
    assert code == 2 and "cannot be searched" in json.loads(out)["message"]
    code, out = call(capsys, "search", "--json", "--", "vllm", "serve", "m")
    assert code == 2 and "{value}" in json.loads(out)["message"]
    code, out = call(capsys, "launch", "--json", "--", "/nonexistent/engine", "--port", "1")
    assert code == 1 and json.loads(out)["outcome"] == "start_error"


def test_docker_dry_run_and_from_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                       ) -> None:
    check = tmp_path / "check.json"
    check.write_text(json.dumps({"command": {"argv": ["vllm", "serve", "/models/m"]}}))
    code, out = call(capsys, "launch", "--from-check", str(check), "--docker",
                     "vllm/vllm-openai:v0.32.0", "--dry-run", "--json")
    argv = json.loads(out)["argv"]
    assert code == 0 and argv[:2] == ["docker", "run"]
    assert argv[-2:] == ["vllm/vllm-openai:v0.32.0", "/models/m"]  # vLLM's default port
    assert "8000:8000" in argv and "/models/m:/models/m:ro" in argv


def test_recipe_dry_run(capsys: pytest.CaptureFixture[str]) -> None:
    recipe = "vllm/deepseek-v4-flash-0731-nvfp4/rtx-pro-6000-max-q/tp2"
    code, out = call(capsys, "launch", "--recipe", recipe, "--dry-run", "--json")
    document = json.loads(out)
    assert code == 0 and document["engine"] == "vllm" and document["port"] == 8000
    argv = document["argv"]
    assert argv[:2] == ["vllm", "serve"] and "--kv-cache-dtype" in argv
    assert argv[argv.index("--max-model-len") + 1] == "250000"  # the seed's final command


def test_check_result_with_its_env(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                   ) -> None:
    check = tmp_path / "check.json"
    check.write_text(json.dumps({"command": {"argv": ["vllm", "serve", "/m"],
                                             "env": {"VLLM_USE_DEEP_GEMM": "0"}}}))
    code, out = call(capsys, "launch", "--from-check", str(check), "--docker", "img",
                     "--dry-run", "--json")
    assert code == 0 and "VLLM_USE_DEEP_GEMM=0" in json.loads(out)["argv"]
