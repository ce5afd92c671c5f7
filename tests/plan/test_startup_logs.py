"""The 16 real startup logs of shared/data/startup_logs_dev.jsonl, one test each.

For every log the planner gets the model (a bundled card made from the log's config), the
GPU and the settings the log states, with the engine version it names, and must agree with
what the engine logged: KV cache tokens within 3%, weights within 2%, and a failed startup
predicted as a failure with the engine's reason. A log the planner cannot reproduce from
what it states is skipped, and the reason says which fact is missing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from servewise.knowledge.accounting import load_engine_constants
from servewise.knowledge.gpus import resolve_gpu
from servewise.plan.planner import predict
from servewise.plan.resolve import load_model
from servewise.plan.startup import Settings
from servewise.plan.weights import Parallel
from support.configs import shared_dir

GIB = 2**30


@dataclass(frozen=True)
class Case:
    """How to replay one log, or why it cannot be."""

    card: str | None = None
    gpu: str = ""
    settings: dict[str, Any] = field(default_factory=dict)
    reason: str | None = None
    """The engine's failure reason as a phrase of its error (failed startups)."""
    skip: str | None = None


CASES: dict[str, Case] = {
    "vllm-project/vllm#10517": Case(
        "llama-3.1-8b-instruct", "rtx-3090",
        {"engine_version": "V0", "max_model_len": 29000, "gpu_memory_utilization": 0.9},
        reason="larger than the maximum number of tokens that can be stored in KV cache"),
    "vllm-project/vllm#21348": Case(
        "qwen3-235b-a22b-fp8", "h100-sxm",
        {"engine": "sglang", "layout": Parallel(tp=4), "mem_fraction_static": 0.93}),
    "vllm-project/vllm#23278": Case(
        "gpt-oss-120b", "h100-sxm", {"engine_version": "0.10.1"},
        reason="No available memory for the cache blocks"),
    "vllm-project/vllm#27508": Case(
        "gpt-oss-120b", "h100-sxm",
        {"engine_version": "0.11.0", "gpu_memory_utilization": 0.95,
         "max_num_batched_tokens": 1024},
        reason="To serve at least one request with the model's max seq len"),
    "vllm-project/vllm#33155": Case(
        "gpt-oss-120b", "h100-sxm", {"engine_version": "0.14.1"},
        reason="To serve at least one request with the model's max seq len"),
    "sgl-project/sglang#7691": Case(skip=(
        "DeepSeek-R1 dequantized to BF16 on an unnamed ROCm GPU (~188 GB): the log's negative "
        "token budget (-561981) does not follow from its own figures (21.73 GB free after "
        "weights at fraction 0.95); the GPU and the DP-attention buffers are not stated")),
    "noonghunna/club-3090#1087": Case(skip=(
        "no config.json of Qwen3.8-27B-FP8 was found (shared/data/configs/README.md): its "
        "hybrid layer layout and FP8 layout cannot be read")),
    "vllm-project/vllm#6746": Case(skip=(
        "no config.json of Llama-3.1-405B-Instruct-FP8 (its fbgemm_fp8 quantization_config "
        "says which modules stay BF16); only the BF16 base config exists")),
    "vllm-project/vllm#49476": Case(skip=(
        "the log does not give the RTX 5070 Ti's total memory, and the result hangs on it: "
        "with the vendor's 16 GB (14.9 GiB) 0.88 GiB is left for a 1.75 GiB request, with a "
        "driver total near 15.9 GiB it fits at ~1.0x as logged")),
    "vllm-project/vllm#51041": Case(skip=(
        "figures are rounded in the issue title (~150K tokens, 7.7 GiB) and "
        "--max-num-batched-tokens is not stated; DeepSeek-V4's per-request blocks grow with "
        "it (8,192 gives 339K tokens, 16,384 gives 140K)")),
    # 156.9x is the author's sum over 8 DP pools; the B200's driver total is in no log, so
    # the catalog's vendor 180 GB is used.
    "vllm-project/recipes#762": Case(
        "deepseek-v4-flash", "b200",
        {"engine_version": "0.25.0", "max_model_len": 1048576, "kv_cache_dtype": "fp8",
         "layout": Parallel(dp=8, expert_parallel=True), "gpu_memory_utilization": 0.95,
         "max_num_batched_tokens": 8192, "max_num_seqs": 256}),
    "MiaAI-Lab/DeepSeek-v4-Flash-One-DGX-Spark#4": Case(skip=(
        "DeepSeek-V4-Flash's 148.5 GiB of weights exceed the GB10's 121.6 GiB: the log's run "
        "must offload weights (unified-memory oversubscription), which is not modelled")),
    "sgl-project/sglang#28620": Case(skip=(
        "SGLang's DeepSeek-V4 pool (DSv4PoolConfigurator: SWA, C4, C128, indexer and state "
        "pools) is not modelled exactly, and the log states no context length")),
}

_GEMMA = ("llm-d-incubation/llm-d-planner accuracy/results/v0.19.0/logs/"
          "google-gemma-3-27b-it--h100-80gb--tp1pp1dp1--8192.log")
_LLAMA = ("llm-d-incubation/llm-d-planner accuracy/results/v0.19.0/logs/"
          "meta-llama---h100-80gb--tp1pp1dp1--8192-dtbf16-kvfp8.log")
_KIMI = ("llm-d-incubation/llm-d-planner accuracy/results/v0.19.0/logs/"
         "moonshotai-kimi-vl-a3b-i--h100-80gb--tp2pp1dp1--8192.log")
_V019 = {"engine_version": "0.19.0", "max_model_len": 8192, "gpu_memory_utilization": 0.95}
CASES[_GEMMA] = Case("gemma-3-27b-it", "h100-sxm", _V019)
CASES[_LLAMA] = Case("llama-3.1-8b-instruct", "h100-sxm", {**_V019, "kv_cache_dtype": "fp8"})
CASES[_KIMI] = Case(skip=(
    "Kimi-VL ships custom code for its MoonViT vision tower, so no tensor list could be "
    "derived (no card): weights per GPU cannot be computed from the config alone"))


def _logs() -> list[dict[str, Any]]:
    path = shared_dir() / "data" / "startup_logs_dev.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _entries() -> list[Any]:
    try:
        logs = _logs()
    except pytest.skip.Exception:
        return []
    return [pytest.param(entry, id=entry["source"].split(" ")[0].split("/logs/")[-1])
            for entry in logs]


def test_every_log_has_a_case() -> None:
    logs = _logs()
    assert len(logs) == 16
    assert {entry["source"] for entry in logs} == set(CASES)


@pytest.mark.parametrize("entry", _entries())
def test_log(entry: dict[str, Any]) -> None:
    case = CASES[entry["source"]]
    if case.skip:
        pytest.skip(case.skip)
    assert case.card is not None
    model = load_model(case.card)
    settings = Settings(**case.settings)
    startup = predict(model, resolve_gpu(case.gpu), settings, load_engine_constants())
    logged = entry["logged"]
    failed = bool(logged.get("startup_failed"))
    assert startup.fits is not failed, startup.error
    if failed:
        assert case.reason is not None and startup.error is not None
        assert case.reason in startup.error
    weights = logged.get("weights_gib") or logged.get("weights_gb_decimal_label")
    if weights:  # V0 prints GiB as "GB"
        assert startup.weights_bytes_per_gpu / GIB == pytest.approx(weights, rel=0.02)
    if logged.get("kv_cache_tokens"):
        assert startup.kv_cache_tokens == pytest.approx(logged["kv_cache_tokens"], rel=0.03)
    if logged.get("k_size_gb"):  # SGLang "GB" is GiB
        assert startup.kv_cache_bytes / 2 / GIB == pytest.approx(logged["k_size_gb"], rel=0.03)
    if logged.get("max_concurrency") and not failed:
        # under DP each rank has its own pool; the recipe log sums them
        total = startup.max_concurrency * settings.layout.dp
        assert total == pytest.approx(logged["max_concurrency"], rel=0.03)
