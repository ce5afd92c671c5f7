"""Classes of failure round 16 showed (docs/diagnose.md, "Fresh rounds"), each held by a log
written for this test, not taken from the corpus."""

from __future__ import annotations

from servewise.diagnose import diagnose_text
from servewise.diagnose.result import Finding


def _root(log: str) -> Finding:
    root = diagnose_text(log).root_cause
    assert root is not None
    return root


def test_an_unspecified_launch_failure_is_explained_not_named() -> None:
    root = _root("terminate called after throwing an instance of 'c10::Error'\n"
                 "  what():  CUDA error: unspecified launch failure\n")
    assert root.category == "unclassified"
    assert any("cuda-719" in why for why in root.why)


def test_an_errno_the_table_explains_is_the_hosts() -> None:
    root = _root("ERROR:    [Errno 99] error while attempting to bind on address "
                 "('10.0.0.9', 8000): cannot assign requested address\n")
    assert (root.category, root.library) == ("unclassified", "host")


def test_a_cublas_status_is_pytorchs_when_nothing_else_is_named() -> None:
    root = _root("RuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling "
                 "`cublasGemmStridedBatchedEx(handle, opa, opb)`\n")
    assert (root.category, root.library) == ("unclassified", "torch")


def test_a_name_error_is_the_code_that_raised_it() -> None:
    root = _root("Traceback (most recent call last):\n"
                 '  File "/sgl-workspace/sglang/python/sglang/srt/layers/x.py", line 3, in f\n'
                 "    deep_gemm.fp8_gemm(a, b)\n"
                 "NameError: name 'deep_gemm' is not defined\n")
    assert root.library is not None and root.library.startswith("sglang")


def test_more_tgi_shards_than_gpus() -> None:
    root = _root("AssertionError: Each process is one gpu\n rank=1\nError: ShardCannotStart\n")
    assert (root.category, root.library) == ("world_size_exceeds_gpus", "tgi-distributed")
    assert any("--num-shard" in step for step in root.fix.steps)


def test_turbomind_weights_that_do_not_fit() -> None:
    root = _root("RuntimeError: [TM][ERROR] CUDA runtime error: out of memory "
                 "/lmdeploy/src/turbomind/utils/memory_utils.cu:32\n")
    assert (root.category, root.library) == ("oom_weight_load", "lmdeploy")


def test_turbomind_other_errors_from_that_file_are_not_memory() -> None:
    root = _root("RuntimeError: [TM][ERROR] CUDA runtime error: invalid argument "
                 "/lmdeploy/src/turbomind/utils/memory_utils.cu:136\n")
    assert root.category == "unclassified"


def test_llama_cpp_model_file_not_there() -> None:
    root = _root("error loading model: failed to open models/7B/model.gguf: "
                 "No such file or directory\nllama_load_model_from_file: failed to load model\n")
    assert (root.category, root.library) == ("model_not_found", "host")
    assert root.triage is not None and root.triage.root_line == 1


def test_llama_cpp_model_file_cut_short() -> None:
    root = _root("llama.cpp: loading model from ./m.bin\n"
                 "error loading model: unexpectedly reached end of file\n")
    assert root.category == "model_file_invalid"


def test_a_bind_failure_that_does_not_say_why_is_located() -> None:
    root = _root("Available slots:\n -> Slot 0 - max context: 512\n\n"
                 "couldn't bind to server socket: hostname=203.0.113.7 port=8080\n")
    assert (root.category, root.library) == ("unclassified", "host")
    assert [item.line for item in root.evidence][:1] == [4]


def test_lmdeploys_engine_loop_failing_is_serving() -> None:
    root = _root("2024-05-08 16:16:10,360 - lmdeploy - ERROR - Engine loop failed with error: "
                 "CUDA out of memory. Tried to allocate 488.00 MiB. GPU 0 has a total capacity "
                 "of 79.21 GiB of which 425.56 MiB is free.\n")
    assert root.category == "oom_runtime"


def test_a_quantization_method_this_vllm_does_not_know() -> None:
    root = _root("ValueError: Unknown quantization method: fp8. Must be one of ['awq', 'gptq', "
                 "'squeezellm'].\n")
    assert (root.category, root.library) == ("engine_args_invalid", "vllm-version")
    assert any("fp8" in step and "upgrade" in step for step in root.fix.steps)


def test_tensorrt_llm_runtime_without_its_engine_file() -> None:
    root = _root("[TensorRT-LLM][ERROR] Assertion failed: Error opening engine file: "
                 "/engines/llama/rank0.engine (/src/cpp/tensorrt_llm/runtime/utils/"
                 "sessionUtils.cpp:42)\n")
    assert (root.category, root.library) == ("model_not_found", "tensorrt_llm")
    assert any("/engines/llama/rank0.engine" in step for step in root.fix.steps)


def test_a_tokenizer_json_newer_than_tokenizers() -> None:
    root = _root("Exception: data did not match any variant of untagged enum ModelWrapper "
                 "at line 757443 column 3\n")
    assert (root.category, root.library) == ("tokenizer_load_error", "tokenizers")
