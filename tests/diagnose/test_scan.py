"""The pre-filter changes speed, not results; chunk boundaries change nothing; memory is bounded."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from servewise.diagnose import diagnose_lines, diagnose_text, new_scanner
from servewise.knowledge.gpus import load_gpu_catalog
from support.diagnose import LOG_FIXTURES, RULE_FIXTURES, SGLANG_SAMPLE, run_text

LOGS = sorted(RULE_FIXTURES.glob("*/*.log")) + sorted(LOG_FIXTURES.glob("*.log")) + [
    SGLANG_SAMPLE]


def _key(text: str, **kwargs: object) -> object:
    diagnosis = run_text(text, **kwargs).diagnosis  # type: ignore[arg-type]
    return [f.to_dict() for f in diagnosis.findings]


@pytest.mark.parametrize("path", LOGS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_prefilter_and_chunking_do_not_change_the_result(path: Path) -> None:
    text = path.read_text()
    full = _key(text, prefilter=False)
    assert _key(text) == full
    assert _key(text, chunk=97) == full
    assert _key(text, matcher="aho-corasick", chunk=4096) == full


def test_both_prefilter_matchers_are_available() -> None:
    from servewise.diagnose.scan import Prefilter

    data = b"INFO ok\nRuntimeError: boom\nok\nNCCL WARN x\n"
    matchers = ["aho-corasick"]
    if importlib.util.find_spec("hyperscan") is not None:
        matchers.append("hyperscan")
    for matcher in matchers:
        offsets = Prefilter(["Error", "NCCL WARN"], matcher=matcher).offsets(data, 0, len(data))
        assert [data.rfind(b"\n", 0, o) + 1 for o in offsets] == [8, 30]


def test_lines_api_equals_text_api() -> None:
    text = SGLANG_SAMPLE.read_text()
    assert diagnose_lines(text.splitlines()).to_dict() == diagnose_text(text).to_dict()


def test_a_long_healthy_log_keeps_only_the_cause_at_the_end() -> None:
    serving = "".join(
        f'INFO:     10.0.0.{i % 250}:4{i:04d} - "POST /v1/chat/completions HTTP/1.1" 200 OK\n'
        f"(APIServer pid=1) INFO 07-31 10:{i % 60:02d}:00 [loggers.py:123] Engine 000: Avg "
        f"prompt throughput: {i}.1 tokens/s, Avg generation throughput: 88.2 tokens/s, Running: "
        "3 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.2%, Prefix cache hit rate: 0.0%\n"
        for i in range(100))
    healthy = (RULE_FIXTURES / "NOI001" / "negative.log").read_text().replace(
        "INFO:     Application startup complete.\n",
        "INFO:     Application startup complete.\n" + serving)
    failure = (LOG_FIXTURES / "dsv4_deepgemm_hyperconnection.log").read_text()
    scanner = new_scanner()
    for _ in range(400):
        scanner.feed(healthy.encode())
    scanner.feed(failure.encode())
    diagnosis = scanner.finish()
    assert diagnosis.root_cause is not None
    assert diagnosis.root_cause.library == "deep_gemm"
    assert diagnosis.runs == 401
    assert scanner.parsed_lines < scanner.lines / 2  # the pre-filter skipped most lines
    assert len(diagnosis.findings) == 1


def test_a_restart_loop_reports_the_last_failing_run() -> None:
    first = (LOG_FIXTURES / "dsv4_deepgemm_layout.log").read_text()
    second = (LOG_FIXTURES / "dsv4_cutlass_dispatch.log").read_text()
    diagnosis = diagnose_text(first + second)
    assert diagnosis.root_cause is not None and diagnosis.root_cause.library == "cutlass"


def test_wrappers_after_a_deliberate_stop_are_not_a_failure() -> None:
    text = (RULE_FIXTURES / "NOI001" / "negative.log").read_text()
    assert "EngineDeadError" in text and "signal=SIGTERM" in text
    assert diagnose_text(text).root_cause is None


def test_the_gpu_given_counts_with_the_memory_the_engine_sees() -> None:
    """--gpu h200: fractions are of what the driver reports (the catalog's engine memory,
    about 140 GiB), not the vendor's 131.3 GiB; the shared GpuSpec gives the same figure."""
    from servewise.knowledge.gpus import parse_gpu_spec

    log = ("(EngineCore_DP0 pid=6880) ValueError: To serve at least one request with the "
           "models's max seq len (131072), (4.54 GiB KV cache is needed, which is larger than "
           "the available KV cache memory (1.71 GiB).\n")
    gpu = load_gpu_catalog().find("h200")
    expected = round(gpu.engine_memory[0] / 2**30, 2)
    assert 139 < expected < 141
    for given in (gpu, parse_gpu_spec("h200:8")):
        root = diagnose_text(log, gpu=given).root_cause
        assert root is not None
        assert root.extracted["gpu_total_gib"] == expected
        assert f"on this {expected} GiB GPU" in " ".join(root.fix.steps)


def test_an_indented_line_mid_chunk_counts_as_traceback_above_a_hit() -> None:
    """The look-back above a hit climbs over a line that starts with whitespace anywhere."""
    head = b"worker heartbeat ok\n" * 50
    frames = (b'  File "/opt/venv/lib/python3.12/site-packages/flashinfer/fused_moe/core.py", '
              b"line 9, in run\n  launch(kernel)\n")
    data = head + frames + b"RuntimeError: CUDA error: no kernel image is available\n"
    scanner = new_scanner()
    assert scanner._lookback(data, len(head) + len(frames), 0) == len(head)


def test_the_look_back_stops_at_uvicorn_records_but_not_at_prefixed_source_lines() -> None:
    """uvicorn pads its level (``INFO:     127.0.0.1 …``): not a traceback's indent, so the
    look-back stops there; a torchrun-prefixed source line (``[rank0]:     return …``) is one."""
    access = b'INFO:     127.0.0.1:35602 - "GET /health HTTP/1.1" 200 OK\n' * 30
    hit = b"(APIServer pid=1) INFO 07-31 10:00:00 [launcher.py:254] shutdown triggered\n"
    scanner = new_scanner()
    assert scanner._lookback(access + hit, len(access), 0) == len(access)
    frames = (b'[rank0]:   File "/opt/venv/lib/python3.12/site-packages/vllm/worker.py", '
              b"line 9, in run\n[rank0]:     return self.model(x)\n")
    data = access + frames + b"[rank0]: RuntimeError: boom\n"
    assert scanner._lookback(data, len(access) + len(frames), 0) == len(access)
    text = "filler line\n" * 300 + data.decode()
    assert _key(text) == _key(text, prefilter=False)


def test_the_first_lines_tell_the_engine_without_a_keyword() -> None:
    """A paste whose only engine-format lines carry no keyword still names its engine."""
    head = "".join(f"[2025-03-0{1 + i % 9} 10:00:0{i % 10} TP{i % 2}] Decode batch. "
                   f"#running-req: {i}, #token: {100 * i}\n" for i in range(8))
    text = head + "RuntimeError: something no rule knows about\n"
    diagnosis = diagnose_text(text)
    assert diagnosis.engine == "sglang"
    assert _key(text) == _key(text, prefilter=False)
