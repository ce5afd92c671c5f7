"""Signatures added for failures the first rules missed, one line each as engines print them."""

from __future__ import annotations

import pytest

from servewise.diagnose import diagnose_text

CASES = [
    ('docker: Error response from daemon: could not select device driver "" with '
     "capabilities: [[gpu]].", "no_gpu_visible", "driver", "NVIDIA Container Toolkit"),
    ("nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.4, please "
     "update your driver to a newer version, or use an earlier cuda container: unknown.",
     "driver_too_old", "driver", "CUDA 12.4"),
    ("huggingface_hub.errors.HFValidationError: Repo id must use alphanumeric chars or '-', "
     "'_', '.', '--' and '..' are forbidden, '-' and '.' cannot start or end the name, max "
     "length is 96: '/data/models/my model'.", "model_not_found", "huggingface_hub",
     "/data/models/my model"),
    ("h100-15:139:1092 [7] socket.c:485 NCCL WARN socketStartConnect: Connect to "
     "10.0.0.82<38455> failed : Software caused connection abort", "nccl_system_error",
     "nccl", "NCCL_SOCKET_IFNAME"),
    ("ValueError: Unsupported architectures: ChatGLMForConditionalGeneration. Supported list: "
     "['ChatGLMForCausalLM', 'LlamaForCausalLM']", "unknown_model_arch", "sglang-version",
     "ChatGLMForConditionalGeneration"),
    ("NotImplementedError: Sharded Llama requires Flash Attention enabled models.",
     "fa_arch_unsupported", "flash_attn", "--num-shard 1"),
    ("2023-07-20T12:31:14.506674Z  WARN text_generation_launcher: Could not import Flash "
     "Attention enabled models: No module named 'vllm_cache_ops'\n\nNotImplementedError: "
     "Sharded Llama requires Flash Attention enabled models.", "kernel_extension_not_installed",
     "tgi-kernels", "make install-vllm"),
    ("thread 'main' panicked at 'called `Result::unwrap()` on an `Err` value: \"org/model\" on "
     "the Hub doesn't have a tokenizer', router/src/main.rs:101:70", "tokenizer_load_error",
     "tgi-version", "tokenizer.json"),
    ("[TensorRT-LLM][ERROR] maxTokensInPagedKvCache must be large enough to process at least 1 "
     "sequence to completion (i.e. must be larger than beam_width * tokensPerBlock * "
     "maxBlocksPerSeq)", "kv_cache_insufficient", "tensorrt_llm", "kv_cache_free_gpu_mem_fraction"),
    ("main: couldn't bind HTTP server socket, hostname: 127.0.0.1, port: 8080", "port_in_use",
     "host", "8080"),
    ("llama_model_load: error loading model: done_getting_tensors: wrong number of tensors; "
     "expected 255, got 254", "model_file_invalid", "llama.cpp-version", "Upgrade llama.cpp"),
    ("ValueError: Tokenizer class BaichuanTokenizer does not exist or is not currently imported.",
     "tokenizer_load_error", "transformers", "trust_remote_code=True"),
    ("what():  FlashInfer Internal Error: Invalid configuration : num_frags_x=1 num_frags_y=14 "
     "num_frags_z=4 num_warps_x=4 num_warps_z=1 please create an issue", "head_size_unsupported",
     "flashinfer", "multiples of 64"),
    ("CUDA error: the provided PTX was compiled with an unsupported toolchain.", "driver_too_old",
     "driver", "PTX"),
    ("ROCm error: invalid device function", "no_kernel_image", "torch", "gfx target"),
    ("ImportError: libmpi.so.12: cannot open shared object file: No such file or directory",
     "shared_library_missing", "host", "libmpi.so.12"),
    ("ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size 292926534144",
     "oom_workspace_alloc", "ggml", "compute buffer"),
    ("[TensorRT-LLM][INFO] Loaded engine size: 68370 MiB\n[TensorRT-LLM][ERROR] "
     "[deserialize.cpp::load::572] Error Code 2: OutOfMemory (Requested size was 69568823808 "
     "bytes.)", "oom_weight_load", "tensorrt_llm", ""),
    ("ValueError: LoRA rank 64 is greater than max_lora_rank 16.", "lora_rank_exceeds_max",
     "vllm-config", "--max-lora-rank 64"),
    ("RuntimeError: gpt_marlin_gemm only supports bfloat16 and float16", "kernel_unsupported_dtype",
     "vllm-kernels", "bfloat16"),
    ("triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 131072, "
     "Hardware limit: 101376. Reducing block sizes or `num_stages` may help.",
     "kernel_launch_resource_exceeded", "triton", "131072 bytes of shared memory"),
    ("triton.runtime.errors.OutOfResources: out of resource: shared me",
     "kernel_launch_resource_exceeded", "triton", "Upgrade triton"),
    # Issue 18, round 4 (each line as an engine prints it)
    ("NotImplementedError: Error in calling custom op cutlass_scaled_mm: No compiled "
     "cutlass_scaled_mm for a compute capability less than CUDA device capability: 75",
     "kernel_unsupported_arch", "vllm-kernels", "compute capability 75"),
    ("requests.exceptions.ConnectionError: (MaxRetryError(\"HTTPSConnectionPool(host="
     "'huggingface.co', port=443): Max retries exceeded with url: /api/models/org/m/revision/"
     "main (Caused by NewConnectionError('Failed to establish a new connection'))\"))",
     "hf_hub_unreachable", "huggingface_hub", "hf download"),
    ("torch.distributed.DistStoreError: Timed out after 601 seconds waiting for clients. 1/4 "
     "clients joined.", "distributed_init_timeout", "vllm-distributed", "rendezvous"),
    ("ValueError: Not enough resources to allocate 2 placement groups, only created 1 "
     "placement groups.", "ray_multinode_placement", "ray", "ray status"),
    ("NotImplementedError: awq quantization is not supported for AutoModel rank=0",
     "unknown_model_arch", "tgi-version", "AutoModel fallback"),
    ("ValueError: max_num_batched_tokens (2048) is smaller than max_model_len (8192).",
     "engine_args_invalid", "vllm-config", "--max-num-batched-tokens 8192"),
    ("NotImplementedError: Pipeline parallelism is not supported for this model. Supported "
     "models implement the `SupportsPP` interface.", "parallel_mode_unsupported", "vllm-version",
     "tensor parallelism"),
    ("ggml-cuda.cu:3211: ERROR: CUDA kernel vec_dot_q5_K_q8_1_impl_vmmq has no device code "
     "compatible with CUDA arch 520. ggml-cuda.cu was compiled for: 520", "no_kernel_image",
     "ggml", "CMAKE_CUDA_ARCHITECTURES"),
    ("[TensorRT-LLM][ERROR] Assertion failed: Failed to deserialize cuda engine "
     "(/app/tensorrt_llm/cpp/tensorrt_llm/runtime/tllmRuntime.cpp:72)",
     "trt_engine_incompatible", "tensorrt_llm", "Rebuild the engine"),
    ('ValueError: Loading lora ["table_qc failed: No adapter found for /data/out/ckpt-57"]',
     "model_not_found", "vllm-config", "adapter_config.json"),
    ("nvidia-container-cli: requirement error: unsatisfied condition: cu", "driver_too_old",
     "driver", "driver"),
    ("(EngineCore pid=4140) Failed to get device capability: SM 12.x requires CUDA >= 12.9.",
     "toolchain_arch_unknown", "nvcc", "CUDA 12.9 or newer"),
    ("UNAVAILABLE: Not found: unable to load shared library: /opt/tritonserver/backends/"
     "tensorrtllm/libtriton_tensorrtllm.so: undefined symbol: "
     "_ZNK12tensorrt_llm8executor8Response11getErrorMsgB5cxx11Ev", "binary_abi_mismatch",
     "tensorrt_llm", "c++filt"),
    ('"RuntimeError: Chat template configs/chat_templates/zephyr.jinja is not a built-in '
     'template name', "engine_args_invalid", "sglang-config", "mount the file"),
    ("ValueError: The memory capacity is unbalanced. Some GPUs may be occupied by other "
     "processes. min_per_gpu_memory=8.8841552734375, local_gpu_memory=11.901611328125, "
     "local_gpu_memory * 0.9=10.7114501953125", "startup_free_memory_low", "sglang-config",
     "nvidia-smi"),
    ("ValueError: The input size is not aligned with the quantized weight shape. This can be "
     "caused by too large tensor parallel size.", "quant_kernel_shape_unsupported",
     "vllm-quantization", "smaller --tensor-parallel-size"),
    ("AssertionError: fp8e4nv data type is not supported on CUDA arch < 89",
     "quant_unsupported_gpu", "triton", "BF16 checkpoint"),
    ("INFO 09-27 17:43:52 config.py:653] Using fp8 data type to store kv cache.\n"
     "AssertionError: fp8e4nv data type is not supported on CUDA arch < 89",
     "kv_cache_dtype_unsupported", "triton", "fp8_e5m2"),
    ("The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR "
     "Worker exit detail: Worker unexpectedly exits with a connection error code 2. End of file. "
     "There are some potential root causes. (1) The process is killed by SIGKILL by OOM killer "
     "due to high memory usage.", "host_oom_killed", "host", "dmesg"),
    ("ValueError: As of transformers v4.44, default chat template is no longer allowed, so you "
     "must provide a chat template if the tokenizer does not define one.", "request_error",
     "vllm-config", "--chat-template"),
    # A fix even when attribution's API rules out the step for an unknown API
    ("RuntimeError: Error in function 'TllmGenFmhaRunner' at /x/site-packages/flashinfer/data/"
     "include/flashinfer/trtllm/fmha/fmhaRunner.cuh:30: Unsupported architecture",
     "kernel_unsupported_arch", "flashinfer", "no code path for this GPU"),
    ("ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory",
     "binary_abi_mismatch", "vllm-kernels", "CUDA 11"),
    ("ImportError: libnvrtc.so.12: cannot open shared object file: No such file or directory",
     "shared_library_missing", "host", "libnvrtc.so.12"),
    ("RuntimeError: CUDART error: peer access is not supported between these two devices",
     "p2p_access_unsupported", "vllm-distributed", "--disable-custom-all-reduce"),
    ("RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions "
     "before calling NumCudaDevices() that might have already set an error? Error 803: system "
     "has unsupported display driver / cuda driver combination", "driver_library_mismatch",
     "driver", "container runtime"),
    ("ValueError: Unsupported compute capability: 12.0", "kernel_unsupported_arch",
     "vllm-version", "no code path"),
    ("INFO 05-14 04:44:35 [__init__.py:243] No platform detected, vLLM is running on "
     "UnspecifiedPlatform", "no_gpu_visible", "driver", "--gpus all"),
    # Issue 18, round 6
    ("ValueError: base_model.model.lm_head.weight is unsupported LoRA weight", "lora_unsupported",
     "vllm", "modules_to_save"),
    ("Value error, torch.bfloat16 is not supported for quantization method awq. Supported "
     "dtypes: [torch.float16] [type=value_error]", "engine_args_invalid", "vllm-config",
     "--dtype float16"),
    ("ImportError: cannot import name '_set_default_torch_dtype' from 'vllm.model_executor."
     "model_loader'", "python_dependency_conflict", "vllm", "pip check"),
    ("ValueError: Chunked prefill is not supported with multi-step (--num-scheduler-steps > 1)",
     "engine_args_invalid", "vllm-config", "turn one of them off"),
    ("openai.BadRequestError: Error code: 400 - {'message': 'At most 1 image(s) may be provided "
     "in one request.'}", "request_error", "vllm-config", "--limit-mm-per-prompt"),
    ("ImportError: Please install bitsandbytes>=0.42.0 via pip install bitsandbytes>=0.42.0 to "
     "use bitsandbytes quantizer.", "optional_dependency_missing", "bitsandbytes",
     "pip install 'bitsandbytes>=0.42.0'"),
    ("ValueError: GGUF model with architecture minimax-m2 is not supported yet.",
     "unknown_model_arch", "transformers", "minimax-m2"),
    ("AssertionError: res=<Response [503]>, res.text=''", "warmup_request_proxied", "host",
     "no_proxy"),
    ("There was a problem when trying to write in your cache folder (/.cache/huggingface/hub). "
     "You should set the environment variable TRANSFORMERS_CACHE to a writable directory.",
     "cache_dir_not_writable", "huggingface_hub", "HF_HOME"),
    ("[HAMI-core ERROR (pid:565 thread=1 multiprocess_memory_limit.c:831)]: Illegal device id: "
     "850725928", "gpu_sharing_layer_fault", "hami", "NCCL_CUMEM_ENABLE=0"),
    ("AssertionError: Only {'trtllm_mha', 'triton', 'fa4'} backends are supported on Blackwell "
     "GPUs for hybrid GDN models. Got attention_backend=flashinfer.", "kernel_unsupported_arch",
     "sglang-config", "--attention-backend"),
    ("OSError: /root/.cache/torch_extensions/py312_cu124/xgrammar/xgrammar.so: cannot open "
     "shared object file: No such file or directory", "kernel_extension_not_installed",
     "xgrammar", "built just in time"),
    ("OSError: We couldn't connect to 'https://huggingface.co' to load this file, couldn't find "
     "it in the cached files and it looks like Qwen-14B-Chat-AWQ is not the path to a directory "
     "containing a file named config.json.", "model_not_found", "huggingface_hub",
     "Qwen-14B-Chat-AWQ"),
    ("[rank0]: Access to model meta-llama/Llama-3.2-1B is restricted. You must have access to it "
     "and be authenticated to access it. Please log in.", "hf_auth_gated", "huggingface_hub",
     "HF_TOKEN"),
    ("(VllmWorker rank=0 pid=1) ERROR 08-06 00:24:22 [multiproc_executor.py:546] RuntimeError: "
     "Currently, block scaled fp8 gemm is not implemented for Blackwell",
     "kernel_unsupported_arch", "vllm-kernels", "servewise gate"),
    ("[rank0]:[E ProcessGroupNCCL.cpp:1316] [PG 2 Rank 0] Heartbeat monitor timed out! Process "
     "will be terminated after dumping debug info. workMetaList_.size()=9",
     "nccl_watchdog_timeout", "nccl", "Xid"),
    ('time=2024-09-03T16:36:00.853+08:00 level=DEBUG source=gpu.go:537 msg="Unable to load '
     'cudart" library=/usr/lib/ollama/libcudart.so.12 error="your nvidia driver is too old or '
     'missing.  If you have a CUDA GPU please upgrade to run ollama"', "driver_too_old", "driver",
     "Upgrade the host's NVIDIA driver"),
    ("/repo/nvshmem_src/src/host/transport/transport.cpp:nvshmemi_transport_init:275: init "
     "failed for transport: IBGDA", "nvshmem_transport_error", "nvshmem",
     "NVSHMEM_IB_ENABLE_IBGDA=0"),
    ("ImportError: /usr/local/lib/python3.12/dist-packages/lmcache/c_ops.cpython-312-x86_64-"
     "linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEa", "binary_abi_mismatch",
     "lmcache", "c++filt"),
    ("ERROR 03-19 10:55:18 [serving_chat.py:677] vllm.engine.multiprocessing.MQEngineDeadError: "
     "Engine loop is not running. Inspect the stacktrace to find the original error: "
     "OutOfMemoryError('CUDA out of memory. Tried to allocate 128.00 MiB. GPU 0 has a total "
     "capacity of 79.33 GiB of which 16.00 MiB is free.')", "oom_runtime", "torch",
     "--max-num-seqs"),
    ("text_generation.errors.GenerationError: Request failed during generation: Server error: "
     "CUDA out of memory. Tried to allocate 42.00 MiB. GPU 0 has a total capacty of 39.39 GiB "
     "of which 31.94 MiB is free.", "oom_runtime", "torch", "--max-num-seqs"),
    ("ERROR 12-19 09:33:44 engine.py:135] OutOfMemoryError('Error in model execution (input "
     "dumped to /tmp/err_execute_model_input_20241219-093344.pkl): CUDA out of memory. Tried to "
     "allocate 524.00 MiB. GPU 0 has a total capacity of 15.77 GiB of which 137.12 MiB is "
     "free.')", "oom_runtime", "torch", "--max-num-seqs"),
    ("ollama  | ggml_backend_cuda_buffer_type_alloc_buffer: allocating 35533.34 MiB on device 0: "
     "cudaMalloc failed: out of memory\nollama  | llama_model_load: error loading model: unable "
     "to allocate CUDA0 buffer", "oom_weight_load", "ggml", "-ngl"),
    ("TypeError: EngineArgs.__init__() got an unexpected keyword argument 'num_scheduler_steps'",
     "engine_args_invalid", "vllm-version", "num_scheduler_steps"),
    ('Traceback (most recent call last):\n  File ".../ray/llm/_internal/serve/core/configs/'
     'openai_api_models.py", line 28, in <module>\n    from vllm.entrypoints.openai.'
     "speech_to_text.protocol import (\nModuleNotFoundError: No module named 'vllm.entrypoints."
     "openai.speech_to_text'", "python_dependency_conflict", "ray", "pins"),
    ("ERROR 07-18 09:55:55 [core.py:586] ValueError: placement group bundle index 8 is invalid. "
     "Valid placement group indexes: 0-2", "ray_multinode_placement", "ray", "ray status"),
    ('Traceback (most recent call last):\n  File "/x/vllm/model_executor/models/chatglm.py", line '
     "53, in __init__\n    assert self.total_num_kv_heads % tp_size == 0\nAssertionError",
     "tp_heads_indivisible", "vllm-config", "servewise plan"),
    # Building the model allocates its weights: an OOM in a model's __init__ is a load OOM.
    ('Traceback (most recent call last):\n  File "/v/vllm/model_executor/models/llama.py", line '
     '146, in __init__\n    self.self_attn = LlamaAttention(\n  File "/v/vllm/model_executor/'
     'parallel_utils/tensor_parallel/layers.py", line 272, in __init__\n    self.weight = '
     "Parameter(torch.empty(\ntorch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate "
     "160.00 MiB (GPU 0; 79.35 GiB total capacity; 78.58 GiB already allocated; 145.19 MiB free)",
     "oom_weight_load", "torch", "tensor"),
    ("(RayWorker pid=4711) *** SIGBUS received at time=1692322557 on cpu 5 ***\n(RayWorker "
     "pid=4711) Fatal Python error: Bus error", "nccl_shm_too_small", "nccl", "--shm-size"),
    ("subprocess.CalledProcessError: Command '/opt/conda/lib/python3.11/site-packages/triton/"
     "backends/nvidia/bin/ptxas -lineinfo -v --gpu-name=sm_120 /tmp/t.ptx -o /tmp/t.ptx.o 2> "
     "/tmp/t.log' returned non-zero exit status 255.", "toolchain_arch_unknown", "triton",
     "TRITON_PTXAS_PATH"),
    # A V0 server that was taking requests: its OOM is a serving OOM.
    ("INFO 02-10 18:06:30 engine.py:275] Added request cmpl-30aaf4-0.\nCRITICAL 02-10 18:06:30 "
     "launcher.py:101] MQLLMEngine is already dead, terminating server process\nERROR 02-10 "
     "18:06:30 engine.py:139] OutOfMemoryError('CUDA out of memory. Tried to allocate 1.27 GiB. "
     "GPU 0 has a total capacity of 79.33 GiB of which 109.81 MiB is free.')", "oom_runtime",
     "torch", "--max-num-seqs"),
    ("ValueError: Quantization is not supported for <class 'vllm.model_executor.models.bloom."
     "BloomForCausalLM'>.", "quant_unsupported_model", "vllm-version", "BloomForCausalLM"),
    ("ggml_cuda_init: failed to initialize CUDA: system not yet initialized",
     "fabric_manager_not_running", "driver", "nvidia-fabricmanager"),
    ("RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions "
     "before calling NumCudaDevices() that might have already set an error? Error 802: system not "
     "yet initialized", "fabric_manager_not_running", "driver", "nvidia-fabricmanager"),
    ("E1212 03:05:00.535254 11684 backend_model.cc:553] ERROR: Failed to create instance: "
     "unexpected error when creating modelInstanceState: [json.exception.parse_error.101] parse "
     "error at line 1, column 1: syntax error while parsing value - unexpected end of input; "
     "expected '[', '{', or a literal", "model_not_found", "tensorrt_llm", "config.pbtxt"),
    # Issue 18, round 11
    (" [rank3]:[E227 16:30:43.526301625 ProcessGroupNCCL.cpp:1834] [PG ID 2 PG GUID 3 Rank 3] "
     "Timeout at NCCL work: 32, last enqueued NCCL work: 32, last completed NCCL work: 31.",
     "nccl_watchdog_timeout", "nccl", "Find the rank that stopped first"),
    ("[TensorRT-LLM][ERROR] Assertion failed: With communicationMode kLEADER, MPI worldSize is "
     "expected to be equal to tp*pp when participantIds are not specified",
     "mpi_world_size_mismatch", "tensorrt_llm", "mpirun -n <tp*pp>"),
    ("mpirun noticed that process rank 6 with PID 0 on node gpu-07 exited on signal 9 (Killed).",
     "host_oom_killed", "host", "rank 6 killed with SIGKILL on gpu-07"),
    ("ValueError: NvFp4 MoE backend 'FLASHINFER_CUTLASS' does not support the deployment "
     "configuration since kernel does not support MoEActivation.SWIGLUSTEP activation.",
     "quant_unsupported_model", "flashinfer", "does not support MoEActivation.SWIGLUSTEP"),
    ("ValueError: Fp8 MoE backend 'VLLM_CUTLASS' does not support the deployment configuration "
     "since kernel does not support block-scaled weights.", "quant_unsupported_model",
     "vllm-quantization", "VLLM_CUTLASS does not support block-scaled weights"),
    ("ValueError: NvFp4 MoE backend 'FLASHINFER_CUTLASS' does not support the deployment "
     "configuration since kernel does not support current device.", "kernel_unsupported_arch",
     "flashinfer", "no code path for this GPU"),
    # Issue 18, round 12
    ("AssertionError: Sinks are only supported in FlashAttention 3",
     "attn_backend_feature_unsupported", "flash_attn", "need FlashAttention 3"),
    ("AttributeError: Model PixtralForConditionalGeneration does not support BitsAndBytes "
     "quantization yet. No 'packed_modules_mapping' found.", "quant_unsupported_model",
     "vllm-quantization", "PixtralForConditionalGeneration"),
    ("llama-router-gpu  | /app/llama-server: error while loading shared libraries: "
     "libllama-common.so.0: cannot open shared object file: No such file or directory",
     "shared_library_missing", "llama.cpp-version", "libllama-common.so.0 is llama.cpp's own"),
    ("gguf_init_from_file: failed to open GGUF file '/models/gemma-3-12b-it-qat-q4_0.gguf'",
     "model_not_found", "host", "ls -l /models/gemma-3-12b-it-qat-q4_0.gguf"),
    ("/ml/backend/ggml/ggml/src/ggml-cuda/template-instances/../fattn-tile.cuh:1247: fatal error",
     "head_size_unsupported", "ggml", "OLLAMA_FLASH_ATTENTION=0"),
]

NOT_A_CAUSE = [
    # cudaErrorOperatingSystem: the OS refused (pinned memory), not a GPU architecture.
    "torch.AcceleratorError: CUDA error: OS call failed or operation not supported on this OS",
    # The router lost its shard's socket: the shard's own error is elsewhere.
    '{"timestamp":"2025-08-29T14:40:17.288163Z","level":"ERROR","message":"Request failed during '
    'generation: Server error: error trying to connect: No such file or directory (os error 2)",'
    '"target":"text_generation_router_v3::backend"}',
    # c10's backtrace without the message above it.
    "Exception raised from ncclCommWatchdog at ../torch/csrc/distributed/c10d/ProcessGroupNCCL."
    "cpp:1601 (most recent call first):\nframe #0: c10::Error::Error(c10::SourceLocation, "
    "std::string) + 0x96 (0x7a6875072446 in /usr/local/lib/python3.12/dist-packages/torch/lib/"
    "libc10.so)",
    # vLLM V0's executor noticing a dead worker, and the client noticing a dead engine.
    "ERROR 10-30 11:56:48 multiproc_worker_utils.py:120] Worker VllmWorkerProcess pid 198 died, "
    "exit code: -6",
    "ERROR 01-22 00:13:32 client.py:282] RuntimeError('Engine process (pid 77) died.')",
    # NCCL's optional net plugin, reported missing on every start.
    "ae05277d311f:55933:55933 [1] NCCL INFO NET/Plugin: Plugin load returned 2 : libnccl-net.so: "
    "cannot open shared object file: No such file or directory : when loading libnccl-net.so",
    # SGLang's rank that loaded, waiting on one that did not.
    "[2025-03-17 17:15:55 TP1] ValueError: TP rank 1 could finish the model loading, but there "
    "are other ranks that didn't finish loading. It is likely due to unexpected failures (e.g., "
    "OOM) or a slow node.",
    # A Ray task's error cut inside the name of the exception it wraps.
    "ERROR 12-31 01:06:23 [core.py:603] ray.exceptions.RayTaskError(Runtim",
    # SGLang's capture failure quoting torch.compile's wrapper, the worker's error cut off.
    "Exception: Capture cuda graph failed: SubprocException: An exception occurred in a "
    "subprocess:",
    # A MoE backend refusing the parallel layout: not a model or GPU limit.
    "ValueError: NvFp4 MoE backend 'VLLM_CUTLASS' does not support the deployment configuration "
    "since kernel does not support parallel config FusedMoEParallelConfig(tp_size=1, ep_size=2).",
]


@pytest.mark.parametrize(("log", "category", "library", "in_fix"), CASES,
                         ids=[case[1] + f"-{n}" for n, case in enumerate(CASES)])
def test_a_line_names_its_cause(log: str, category: str, library: str, in_fix: str) -> None:
    root = diagnose_text(log + "\n").root_cause
    assert root is not None and (root.category, root.library) == (category, library), root
    assert in_fix in " ".join(root.fix.steps)


@pytest.mark.parametrize("log", NOT_A_CAUSE, ids=range(len(NOT_A_CAUSE)))
def test_near_misses_name_no_specific_cause(log: str) -> None:
    """Lines that look like a known cause, or only point at one elsewhere, name none."""
    root = diagnose_text(log + "\n").root_cause
    assert root is not None and root.category in ("unclassified", "root_cause_missing"), root


def test_a_long_quoted_message_is_classified_inside_its_wrapper() -> None:
    """vLLM V0 quotes the worker's whole error; a PyTorch OOM is longer than 256 characters."""
    oom = ("CUDA out of memory. Tried to allocate 1.95 GiB. GPU 1 has a total capacity of 22.09 "
           "GiB of which 758.44 MiB is free. Process 2751070 has 21.35 GiB memory in use. Of the "
           "allocated memory 20.90 GiB is allocated by PyTorch, and 85.19 MiB is reserved by "
           "PyTorch but unallocated. If reserved but unallocated memory is large try setting "
           "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.")
    log = ("(VllmWorkerProcess pid=67) ERROR 11-05 03:21:52 multiproc_worker_utils.py:233] "
           "Exception in worker VllmWorkerProcess while processing method "
           f"determine_num_available_blocks: {oom}, Traceback (most recent call last):\n")
    root = diagnose_text(log).root_cause
    assert root is not None and root.category == "oom_profile_run"


def test_a_ggml_assertion_is_an_error_in_the_excerpt() -> None:
    """``GGML_ASSERT(cond) failed`` says what failed: an error of the excerpt (``unclassified`` with
    its library), not a consequence whose cause is missing; ggml's abort after a CUDA error
    (the error is on the lines above it) still is."""
    root = diagnose_text("/src/ggml/src/ggml-backend-meta.cpp:1299: GGML_ASSERT(size == "
                         "ggml_nbytes(tensor)) failed\n").root_cause
    assert root is not None and root.category == "unclassified"
    root = diagnose_text("/src/ggml/src/ggml-cuda/ggml-cuda.cu:75: CUDA error\n").root_cause
    assert root is not None and root.category == "root_cause_missing"


def test_llama_cpp_refusing_an_unknown_flag_names_the_flag() -> None:
    log = "llama-server -hf org/model-GGUF --port 8012 -fa\nerror: invalid argument: -hf\n"
    root = diagnose_text(log).root_cause
    assert root is not None and (root.rule, root.category) == ("CFG037", "engine_args_invalid")
    assert root.library == "llama.cpp-version" and "-hf" in root.fix.steps[0]


def test_llama_cpp_refusing_a_flag_value_says_which_value() -> None:
    log = ('error while handling argument "--flash-attn": error: unkown value for '
           "--flash-attn: '--ctx-size'\n")
    root = diagnose_text(log).root_cause
    assert root is not None and root.rule == "CFG037"
    assert "refuses the value" in root.fix.steps[0]


def test_errno_einval_is_not_a_llama_cpp_flag() -> None:
    log = "OSError: [Errno 22] Invalid argument: '/dev/shm/x'\n"
    root = diagnose_text(log).root_cause
    assert root is None or root.rule != "CFG037"


def test_a_host_buffer_that_llama_cpp_cannot_allocate_is_not_a_gpu_oom() -> None:
    log = ("load_tensors: loading model tensors, this can take a while... (mmap = false)\n"
           "ggml_backend_cpu_buffer_type_alloc_buffer: failed to allocate buffer of size "
           "437944320\n"
           "alloc_tensor_range: failed to allocate CPU buffer of size 437944320\n"
           "llama_model_load: error loading model: unable to allocate CPU buffer\n")
    root = diagnose_text(log).root_cause
    assert root is not None and root.rule != "MEM011"
    assert not root.category.startswith("oom_")


def test_a_none_value_without_an_attribute_is_not_a_version_mismatch() -> None:
    log = ('Traceback (most recent call last):\n'
           '  File "/w/sglang/srt/managers/router/infer_batch.py", line 203, in prepare\n'
           '    req_pool_indices_cpu = req_pool_indices.cpu().numpy()\n'
           "AttributeError: 'NoneType' object has no attribute 'cpu'\n")
    root = diagnose_text(log).root_cause
    assert root is not None and root.rule != "CFG024"
    assert root.category == "unclassified" and [e.line for e in root.evidence][:1] == [4]
