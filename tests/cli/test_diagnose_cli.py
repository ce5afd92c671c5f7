"""``servewise diagnose``: exit codes, --json, stdin and docker logs, --follow, explain, rules."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

from typer.testing import CliRunner

from servewise.cli import app
from support.diagnose import RULE_FIXTURES, SGLANG_SAMPLE

SGLANG = SGLANG_SAMPLE
HEALTHY = RULE_FIXTURES / "NOI001" / "positive.log"


def run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), input=stdin)
    return result.exit_code, result.stdout, result.stderr


def test_failure_exits_1_with_the_stable_json_document() -> None:
    code, out, _ = run("diagnose", str(SGLANG), "--json")
    assert code == 1
    data = json.loads(out)
    assert set(data) == {"root_cause", "findings"}
    root = data["root_cause"]
    assert root["category"] == "oom_workspace_alloc" and root["library"] == "flashinfer"
    for key in ("category", "library", "layer", "rule", "evidence", "extracted", "fix",
                "confidence"):
        assert key in root
    assert 0 < root["confidence"] < 1
    assert root["evidence"][0]["line"] > 0 and root["evidence"][0]["text"]
    assert root["fix"]["flags"] == {"--mem-fraction-static": "0.93"}


def test_options_before_the_file_and_human_output() -> None:
    code, out, _ = run("diagnose", "--gpu", "h200", str(SGLANG))
    assert code == 1
    assert "oom_workspace_alloc" in out and "0.93" in out and "0.88" in out


def test_no_failure_exits_0() -> None:
    code, out, _ = run("diagnose", str(HEALTHY), "--json")
    assert code == 0
    assert json.loads(out) == {"root_cause": None, "findings": []}
    code, out, _ = run("diagnose", str(HEALTHY))
    assert code == 0 and "No failure found" in out


def test_bad_input_exits_2(tmp_path: Path) -> None:
    code, _, err = run("diagnose", str(tmp_path / "missing.log"))
    assert code == 2 and "no such log file" in err
    code, _, err = run("diagnose", str(tmp_path))
    assert code == 2 and "folder" in err
    (tmp_path / "empty.log").write_bytes(b"")
    code, out, _ = run("diagnose", str(tmp_path / "empty.log"), "--json")
    assert code == 2 and json.loads(out)["error"] == "log_input_error"
    (tmp_path / "core").write_bytes(b"\x7fELF\x00\x00\x01" * 100)
    code, _, err = run("diagnose", str(tmp_path / "core"))
    assert code == 2 and "not a text log" in err
    # a NUL past the first read (the file's first read is 8 bytes) but in the first 8 KiB
    (tmp_path / "late").write_bytes(b"abcdefgh\nhello\x00world" + bytes(3000))
    code, _, err = run("diagnose", str(tmp_path / "late"))
    assert code == 2 and "not a text log" in err
    code, _, err = run("diagnose", str(SGLANG), "--gpu", "no-such-gpu")
    assert code == 2 and "unknown GPU" in err


def test_stdin_and_docker_logs_formats() -> None:
    text = SGLANG.read_text()
    code, out, _ = run("diagnose", "-", "--json", stdin=text)
    assert code == 1 and json.loads(out)["root_cause"]["category"] == "oom_workspace_alloc"
    # `docker logs --timestamps` and the json-file driver's records
    stamped = "".join(f"2026-08-03T11:02:{i % 60:02d}.{i:09d}Z {line}\n"
                      for i, line in enumerate(text.splitlines()))
    code, out, _ = run("diagnose", "-", "--json", stdin=stamped)
    assert code == 1 and json.loads(out)["root_cause"]["category"] == "oom_workspace_alloc"
    records = "".join(json.dumps({"log": line + "\n", "stream": "stderr",
                                  "time": "2026-08-03T11:02:01.5Z"}) + "\n"
                      for line in text.splitlines())
    code, out, _ = run("diagnose", "-", "--json", stdin=records)
    assert code == 1 and json.loads(out)["root_cause"]["library"] == "flashinfer"
    composed = "".join(f"sglang-1  | {line}\n" for line in text.splitlines())
    code, out, _ = run("diagnose", "-", "--json", stdin=composed)
    assert code == 1 and json.loads(out)["root_cause"]["rule"] == "MEM004"


def test_follow_reports_once_the_failure_settles(tmp_path: Path) -> None:
    log = tmp_path / "engine.log"
    log.write_text("")
    lines = SGLANG.read_text().splitlines(keepends=True)

    def write() -> None:
        for line in lines:
            with log.open("a") as handle:
                handle.write(line)
            time.sleep(0.01)

    writer = threading.Thread(target=write)
    writer.start()
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "servewise", "diagnose", str(log), "--follow", "--settle", "0.5",
         "--idle-timeout", "20", "--json"], capture_output=True, text=True, timeout=60)
    writer.join()
    assert proc.returncode == 1, proc.stderr
    assert json.loads(proc.stdout)["root_cause"]["category"] == "oom_workspace_alloc"
    assert time.monotonic() - started < 20


def test_follow_stops_at_the_idle_timeout_without_a_failure(tmp_path: Path) -> None:
    log = tmp_path / "engine.log"
    log.write_text(HEALTHY.read_text())
    proc = subprocess.run(
        [sys.executable, "-m", "servewise", "diagnose", "--follow", str(log),
         "--idle-timeout", "0.5"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "No failure found" in proc.stdout


def test_explain_and_rules() -> None:
    code, out, _ = run("diagnose", "explain", "MEM004")
    assert code == 0 and out.startswith("# MEM004 workspace-allocation-out-of-memory")
    code, out, _ = run("diagnose", "explain", "oom_workspace_alloc", "--json")
    assert code == 0 and json.loads(out)["id"] == "MEM004"
    code, out, _ = run("diagnose", "explain", "workspace-allocation-out-of-memory", "--json")
    assert json.loads(out)["category"] == "oom_workspace_alloc"
    code, _, err = run("diagnose", "explain", "MEM999")
    assert code == 2 and "unknown diagnose rule" in err
    code, out, _ = run("diagnose", "rules", "--json")
    rules = json.loads(out)
    assert code == 0 and len(rules) > 40 and {"id", "name", "kind", "category"} <= set(rules[0])
    code, out, _ = run("diagnose", "rules")
    assert code == 0 and "MEM004" in out


def test_a_log_named_like_a_subcommand(tmp_path: Path, monkeypatch: object) -> None:
    import os

    (tmp_path / "rules").write_text(SGLANG.read_text())
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        code, out, _ = run("diagnose", "./rules", "--json")
    finally:
        os.chdir(old)
    assert code == 1 and json.loads(out)["root_cause"]["rule"] == "MEM004"


REQUEST_400 = (Path(__file__).parents[1] / "data" / "diagnose" / "logs"
               / "vllm_healthy_request_400.log")


def test_a_healthy_server_with_a_failed_request_exits_0() -> None:
    """Issue 19 item 6: a 400 after "Application startup complete" is a finding, not a failure."""
    code, out, _ = run("diagnose", str(REQUEST_400), "--json")
    assert code == 0
    data = json.loads(out)
    assert data["root_cause"] is None
    assert [f["category"] for f in data["findings"]] == ["request_error"]
    assert "maximum context length" in data["findings"][0]["evidence"][0]["text"]
    code, out, _ = run("diagnose", "-", stdin=REQUEST_400.read_text())
    assert code == 0 and "kept serving" in out


def test_a_request_a_rule_knows_is_a_finding_with_the_rules_fix_on_a_running_server() -> None:
    """A refused request on a server that is up (no chat template, a prompt over the context)
    is a finding with the rule's fix; the same error pasted alone is the root cause."""
    pasted = (RULE_FIXTURES / "CFG019" / "positive.log").read_text()
    first, rest = pasted.split("\n", 1)
    served = f"{first}\nINFO:     Application startup complete.\n{rest}"
    code, out, _ = run("diagnose", "-", "--json", stdin=served)
    data = json.loads(out)
    assert code == 0 and data["root_cause"] is None
    assert [(f["rule"], f["kind"]) for f in data["findings"]] == [("CFG019", "finding")]
    assert "--chat-template" in data["findings"][0]["fix"]["steps"][0]
    code, out, _ = run("diagnose", "-", "--json", stdin=pasted)
    assert code == 1 and json.loads(out)["root_cause"]["rule"] == "CFG019"


def test_a_server_that_dies_after_startup_still_fails() -> None:
    """The same server, then the engine dies: a failure (exit 1), not a request finding."""
    log = REQUEST_400.read_text() + (
        "(EngineCore_DP0 pid=2391) ERROR 12-03 07:31:02 [core.py:710] EngineCore encountered a "
        "fatal error.\n"
        "(EngineCore_DP0 pid=2391) ERROR 12-03 07:31:02 [core.py:710] RuntimeError: CUDA error: "
        "an illegal memory access was encountered\n")
    code, out, _ = run("diagnose", "-", "--json", stdin=log)
    assert code == 1
    assert json.loads(out)["root_cause"]["category"] == "cuda_illegal_memory_access"


def test_gpu_takes_name_and_count() -> None:
    code, out, _ = run("diagnose", str(SGLANG), "--gpu", "h200:8", "--json")
    assert code == 1 and json.loads(out)["root_cause"]["extracted"]["fraction_max"] == 0.93
    code, _, err = run("diagnose", str(SGLANG), "--gpu", "h200:0")
    assert code == 2 and "count" in err.lower()


def test_follow_does_not_stop_on_a_failed_request() -> None:
    from servewise.diagnose import new_scanner

    scanner = new_scanner()
    scanner.feed(REQUEST_400.read_bytes())
    assert scanner.failure_seen is False
    assert scanner.finish().exit_code == 0
