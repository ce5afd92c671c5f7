"""Logs as people paste them (issue 18): the same failure under every common wrapper."""

from __future__ import annotations

from pathlib import Path

import pytest

from servewise.diagnose import diagnose_text

LOGS = Path(__file__).parents[1] / "data" / "diagnose" / "logs"
CAPTURE = (LOGS / "vllm_capture_end_oom.log").read_text()
PORT = ("(APIServer pid=1) INFO 07-31 10:00:01 [api_utils.py:286] non-default args: "
        "{'port': 8000}\n"
        "(APIServer pid=1) ERROR 07-31 10:00:02 [api_server.py:1971] OSError: [Errno 98] "
        "Address already in use\n")

WRAPPERS = {
    "plain": lambda line: line,
    "markdown quote": lambda line: f"> {line}",
    "nested quote": lambda line: f"> > {line}",
    "buildkite": lambda line: f"| [2024-09-05T00:38:34Z] {line}",
    "ci pipe indented": lambda line: f"  | [2025-03-10T15:07:20Z] {line}",
    "docker timestamps": lambda line: f"2024-09-05T00:38:34.123456789Z {line}",
    "compose": lambda line: f"vllm-1  | {line}",
    "kubectl prefix": lambda line: f"[pod/vllm-0/vllm] {line}",
    "srun": lambda line: f"0: {line}",
    "pasted colour codes": lambda line: f"^[[0;36m{line}",
}


@pytest.mark.parametrize("wrap", WRAPPERS, ids=list(WRAPPERS))
def test_a_graph_capture_oom_is_found_under_every_wrapper(wrap: str) -> None:
    """CUDA error: out of memory raised in torch.cuda.graph(...).capture_end() is a
    graph-capture OOM, not 'other OOM', however the log was pasted."""
    text = "\n".join(WRAPPERS[wrap](line) for line in CAPTURE.splitlines()) + "\n"
    root = diagnose_text(text).root_cause
    assert root is not None
    assert (root.category, root.library) == ("oom_cudagraph_capture", "torch"), wrap
    assert root.extracted.get("phase") == "cuda_graph_capture"


@pytest.mark.parametrize("wrap", WRAPPERS, ids=list(WRAPPERS))
def test_port_in_use_is_found_under_every_wrapper(wrap: str) -> None:
    text = "\n".join(WRAPPERS[wrap](line) for line in PORT.splitlines()) + "\n"
    root = diagnose_text(text).root_cause
    assert root is not None and root.category == "port_in_use", wrap


def test_worker_rank_tags_and_pytest_lines() -> None:
    text = ("(VllmWorker rank=3 pid=1090) ERROR 06-05 06:18:13 [multiproc_executor.py:470] "
            "RuntimeError: CUDA error: out of memory\n")
    root = diagnose_text(text).root_cause
    assert root is not None and root.category.startswith("oom")
    assert "VllmWorker" in root.processes[0]
    text = "E       RuntimeError: Assertion error (csrc/apis/layout.hpp:60): Unknown recipe\n"
    root = diagnose_text(text).root_cause
    assert root is not None and root.library == "deep_gemm"


def test_a_tgi_shard_that_fails_on_oom_while_loading_weights() -> None:
    """The shard's traceback runs into the launcher's "Error: ShardCannotStart": the OOM, in
    TGI's weight reader, is the cause (not a wrapper, not root_cause_missing)."""
    root = diagnose_text((LOGS / "tgi_shard_oom_weight_load.log").read_text()).root_cause
    assert root is not None
    assert (root.category, root.library) == ("oom_weight_load", "torch")
    assert root.extracted.get("phase") == "weight_load"


@pytest.mark.parametrize("cut", ["are not sup", "are", ""])
def test_an_unknown_architecture_cut_short(cut: str) -> None:
    text = f"ValueError: Model architectures ['Qwen3NextForCausalLM'] {cut}\n"
    root = diagnose_text(text).root_cause
    assert root is not None and root.category == "unknown_model_arch", cut


@pytest.mark.parametrize("prefix", ["", "Jun 18 22:16:41 ollama[116408]: "])
def test_ggml_names_its_file_on_the_line_after_a_cuda_error(prefix: str) -> None:
    """llama.cpp prints where a CUDA error happened on the next line (indented in newer
    releases, not in older ones); that line names ggml as the library."""
    for indent in ("", "  "):
        text = (f"{prefix}CUDA error: an illegal memory access was encountered\n"
                f"{prefix}{indent}current device: 0, in function ggml_backend_cuda_buffer_get_"
                "tensor at C:\\llama.cpp\\ggml-cuda.cu:10939\n"
                f"{prefix}cudaDeviceSynchronize()\n")
        root = diagnose_text(text).root_cause
        assert root is not None
        assert (root.category, root.library) == ("cuda_illegal_memory_access", "ggml"), indent


def test_ncclsystemerror_defers_to_the_shared_memory_error_it_names() -> None:
    text = ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
            "NCCLUtils.hpp:317, unhandled system error (run with NCCL_DEBUG=INFO for details), "
            "NCCL version 2.21.5\n"
            "ncclSystemError: System call (e.g. socket, malloc) or external library call failed "
            "or device error.\nLast error:\n"
            "Error while creating shared memory segment /dev/shm/nccl-F9ffgB (size 9637888)\n")
    root = diagnose_text(text).root_cause
    assert root is not None and root.category == "nccl_shm_too_small"
    # Alone, the generic error is the root cause.
    alone = diagnose_text(text.split("\n")[0] + "\n").root_cause
    assert alone is not None and alone.category == "nccl_system_error"

