"""Reading and writing engine command lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from servewise.errors import UsageError
from servewise.launch.command import (
    docker_argv,
    engine_args,
    engine_of,
    fill,
    parse_check_document,
    read_check_file,
    with_port,
)
from servewise.launch.hints import read_numbers

VLLM = ["vllm", "serve", "/models/m", "--max-model-len", "{value}"]
SGLANG = ["python", "-m", "sglang.launch_server", "--model-path", "/m", "--tp", "8"]


def test_engine_detection() -> None:
    assert engine_of(VLLM) == "vllm"
    assert engine_of(["python", "-m", "vllm.entrypoints.openai.api_server"]) == "vllm"
    assert engine_of(SGLANG) == "sglang"
    assert engine_of(["python", "server.py"]) is None
    assert engine_args(VLLM, "vllm") == ["/models/m", "--max-model-len", "{value}"]
    assert engine_args(SGLANG, "sglang") == ["--model-path", "/m", "--tp", "8"]


def test_fill_and_port() -> None:
    assert fill(VLLM, value="4096")[-1] == "4096"
    assert fill(["--port", "{port}"], port=9) == ["--port", "9"]
    argv, port = with_port(VLLM, "vllm", 8123)
    assert argv[-2:] == ["--port", "8123"] and port == 8123
    assert with_port(VLLM, "vllm", None)[1] == 8000
    assert with_port(SGLANG, "sglang", None)[1] == 30000
    assert with_port([*VLLM, "--port=9000"], "vllm", None)[1] == 9000
    with pytest.raises(UsageError, match="differs"):
        with_port([*VLLM, "--port", "9000"], "vllm", 9001)
    with pytest.raises(UsageError, match="which port"):
        with_port(["./server"], None, None)


def test_docker_argv(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HOME", "/srv/hf")
    argv = docker_argv("vllm/vllm-openai:v0.32.0", ["vllm", "serve", "/models/m", "--port",
                                                    "8000", "--tensor-parallel-size", "2"],
                       "vllm", 8000, name="servewise-x", env={"HF_HUB_OFFLINE": "1"})
    assert argv == ["docker", "run", "--rm", "--name", "servewise-x", "--gpus", "all",
                    "--ipc=host", "-p", "8000:8000", "-v", "/srv/hf:/root/.cache/huggingface",
                    "-v", "/models/m:/models/m:ro", "-e", "HF_TOKEN", "-e", "HF_HUB_OFFLINE=1",
                    "vllm/vllm-openai:v0.32.0", "/models/m", "--tensor-parallel-size", "2",
                    "--port", "8000"]
    sglang = docker_argv("lmsysorg/sglang:latest", SGLANG, "sglang", 30000, name="n")
    # the same renderer as `check --format docker`: SGLang listens on every interface
    assert sglang[sglang.index("--host") + 1] == "0.0.0.0" and "--shm-size" in sglang
    assert "lmsysorg/sglang:latest" in sglang and "-v" in sglang
    other = docker_argv("img", ["./server", "--x"], None, 9000, name="n",
                        env={"API_TOKEN": "s3cret", "A": "1"})
    assert other[-3:] == ["img", "./server", "--x"] and "s3cret" not in " ".join(other)
    assert "API_TOKEN" in other and "A=1" in other


def test_check_document(tmp_path: Path) -> None:
    path = tmp_path / "check.json"
    path.write_text(json.dumps({"command": {"argv": VLLM, "env": {"A": "1"}}}))
    assert read_check_file(path) == (VLLM, {"A": "1"})
    with pytest.raises(UsageError, match="env"):
        parse_check_document('{"command": {"argv": ["x"], "env": [1]}}', "x.json")
    with pytest.raises(UsageError, match="no command"):
        parse_check_document('{"command": {}}', "x.json")
    with pytest.raises(UsageError, match="not JSON"):
        parse_check_document("{", "x.json")
    with pytest.raises(UsageError, match="cannot read"):
        read_check_file(tmp_path / "missing.json")


def test_numbers_from_real_lines() -> None:
    lines = [
        "(EngineCore_DP0 pid=6880) INFO 10-31 15:07:49 [gpu_worker.py:298] Available KV cache "
        "memory: 1.71 GiB",
        "INFO [v1/core/kv_cache_utils.py:1319] GPU KV cache size: 1,890,896 tokens",
        "INFO [v1/core/kv_cache_utils.py:1324] Maximum concurrency for 8,192 tokens per "
        "request: 230.82x",
        "(Worker pid=12086) INFO 12-04 07:25:14 [cpu_worker.py:260] Explicitly set "
        "(1.0/23.54) GiB for KV cache on node 0.",
        "[2025-07-02 07:41:58 DP0 TP0] Load weight end. type=DeepseekV3ForCausalLM, "
        "dtype=torch.bfloat16, avail mem=21.73 GB, mem usage=166.59 GB.",
    ]
    numbers = read_numbers(lines)
    assert numbers.to_dict() == {
        "kv_available_gib": 1.71, "kv_cache_tokens": 1890896, "max_concurrency": 230.82,
        "kv_cache_gib": 1.0, "avail_mem_gb": 21.73, "weights_mem_gb": 166.59}
    fraction = numbers.weights_fraction()
    assert fraction is not None and round(fraction, 3) == 0.885
