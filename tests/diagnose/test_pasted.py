"""Logs as people paste them (issue 18): the same failure under every common wrapper."""

from __future__ import annotations

from pathlib import Path

import pytest

from servewise.diagnose import diagnose_text
from support.diagnose import run_text

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


def test_a_paste_that_begins_inside_a_traceback_keeps_its_frames() -> None:
    """The first line is a frame's source line (no header): the frames after it still belong
    to the exception, so its library is read from them."""
    text = ("    topk_weights, topk_ids = biased_grouped_topk(\n"
            '  File "/opt/conda/lib/python3.10/site-packages/sglang/srt/layers/moe/topk.py", '
            "line 322, in biased_grouped_topk_gpu\n"
            "    topk_weights, topk_ids = moe_fused_gate(\n"
            '  File "/opt/conda/lib/python3.10/site-packages/sgl_kernel/moe.py", line 58, in '
            "moe_fused_gate\n"
            "    return torch.ops.sgl_kernel.moe_fused_gate.default(\n"
            "RuntimeError: CUDA error: operation not permitted when stream is capturing\n")
    root = diagnose_text(text).root_cause
    assert root is not None and root.library == "sgl_kernel"


def test_a_logged_source_line_alone_is_not_an_error() -> None:
    """vLLM logs every traceback line at ERROR: the source line a paste begins with is part of
    the traceback below it, whose exception (a wrapper here) decides."""
    prefix = "(APIServer pid=1) ERROR 05-12 01:48:42 [api_router.py:72] "
    text = "".join(prefix + line + "\n" for line in (
        "    result = await self.render_chat_request(request)",
        '  File "/usr/local/lib/python3.12/site-packages/vllm/entrypoints/openai/'
        'chat_completion/serving.py", line 225, in render_chat_request',
        "    raise self.engine_client.dead_error",
        "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack "
        "trace (above) for the root cause."))
    root = diagnose_text(text).root_cause
    assert root is not None and root.category == "root_cause_missing"


def test_a_traceback_pasted_without_its_indentation() -> None:
    text = ("Traceback (most recent call last):\n"
            'File "/usr/lib/python3/dist-packages/transformers/models/auto/configuration_auto.py'
            '", line 1360, in from_pretrained\n'
            'config_class = CONFIG_MAPPING[config_dict["model_type"]]\n'
            'File "/usr/lib/python3/dist-packages/transformers/models/auto/configuration_auto.py'
            '", line 1048, in __getitem__\n'
            "raise KeyError(key)\n"
            "KeyError: 'glm_moe_dsa'\n")
    root = diagnose_text(text).root_cause
    assert root is not None and (root.category, root.library) == ("unknown_model_arch",
                                                                  "transformers")
    assert root.extracted["model_type"] == "glm_moe_dsa"


def test_an_error_a_wrapper_quotes_is_in_the_excerpt() -> None:
    """vLLM V0's 'Exception in worker … while processing method …: MESSAGE' quotes the error;
    one no rule knows is ``unclassified`` with its library, not a cause missing from the paste."""
    text = ("(VllmWorkerProcess pid=761) ERROR 07-24 08:26:01 multiproc_worker_utils.py:226] "
            "Exception in worker VllmWorkerProcess while processing method init_device: NCCL "
            "error: unhandled cuda error (run with NCCL_DEBUG=INFO for details), Traceback "
            "(most recent call last):\n")
    root = diagnose_text(text).root_cause
    assert root is not None and (root.category, root.library) == ("unclassified", "nccl")
    assert root.evidence[0].role == "quoted"


def test_the_engine_is_read_from_the_paths_of_other_events() -> None:
    """No line format names the engine, but a traceback's paths do: a library named after the
    engine (its kernels here) is that engine's."""
    text = ("CUDA error: an illegal memory access was encountered\n"
            "Traceback (most recent call last):\n"
            '  File "/usr/lib/python3/dist-packages/sglang/srt/managers/scheduler.py", line 10, '
            "in run_batch\n"
            "    self.model_runner.forward(batch)\n"
            "SystemExit: 1\n")
    root = diagnose_text(text).root_cause
    assert root is not None and root.category == "cuda_illegal_memory_access"
    assert root.library == "sglang-kernels"


def test_a_paste_from_a_log_console_is_read_in_log_order() -> None:
    """Newest first, as Cloud Logging lists it: the KeyError on top, its frames below."""
    lines = [
        "[2025-04-07 19:13:52] Received sigquit from a child process. It usually means the "
        "child failed.",
        "KeyError: 'model.layers.55.mlp.gate_up_proj.input_scale'",
        "param = params_dict[name]",
        'File "/sgl-workspace/sglang/python/sglang/srt/models/llama.py", line 508, in '
        "load_weights",
        "Traceback (most recent call last):",
    ]
    stamps = [f"2025-04-07T19:13:52.3178{9 - n}0000Z" for n in range(len(lines))]
    text = "".join(f"ERROR {stamp} {line}\n" for stamp, line in zip(stamps, lines, strict=True))
    root = diagnose_text(text).root_cause
    assert root is not None and root.category == "unclassified"
    assert root.library == "sglang" and "KeyError" in root.evidence[0].text


def test_a_model_that_triton_could_not_load_is_found_in_its_model_table() -> None:
    """Triton Inference Server prints why a backend failed in its model table's status cell
    (tensorrtllm_backend#363): the error is in the excerpt, with TensorRT-LLM's library."""
    rule = "+" + "-" * 16 + "+" + "-" * 9 + "+" + "-" * 40 + "+"
    text = "\n".join([
        rule, "| Model          | Version | Status                                 |", rule,
        "| postprocessing | 1       | READY                                  |",
        "| tensorrt_llm   | 1       | UNAVAILABLE: Internal: unexpected error when creating "
        "modelInstanceState: [TensorRT-LLM][ERROR] CUDA runtime error in "
        "cudaDeviceGetDefaultMemPool(&memPool, device): operation no |",
        "|                |         | t supported (/app/tensorrt_llm/cpp/tensorrt_llm/runtime/"
        "bufferManager.cpp:170) |", rule, ""])
    text = "I0506 10:00:00.000000 1 server.cc:674] \n" * 250 + text  # past the first lines
    root = diagnose_text(text).root_cause
    assert root is not None and (root.category, root.library) == ("unclassified", "tensorrt_llm")
    assert diagnose_text(text).to_dict() == run_text(text, prefilter=False).diagnosis.to_dict()


def test_a_traceback_copied_with_html_entities_is_read() -> None:
    """A log copied from a page's HTML (``File &quot;…&quot;``, ``&#39;``) reads as the log."""
    escaped = CAPTURE.replace('"', "&quot;").replace("'", "&#39;")
    root = diagnose_text(escaped).root_cause
    assert root is not None
    assert (root.category, root.library) == ("oom_cudagraph_capture", "torch")
    full = run_text(escaped, prefilter=False).diagnosis
    assert diagnose_text(escaped).to_dict() == full.to_dict()


TOOL_PARSER = (
    'ERROR 07-24 10:16:06 [hermes_tool_parser.py:370] Traceback (most recent call last):\n'
    'ERROR 07-24 10:16:06 [hermes_tool_parser.py:370]   File "/usr/local/lib/python3.12/'
    'dist-packages/vllm/entrypoints/openai/tool_parsers/hermes_tool_parser.py", line 241, in '
    'extract_tool_calls_streaming\n'
    'ERROR 07-24 10:16:06 [hermes_tool_parser.py:370]     current_tool_call = partial_js\n')


def test_an_excerpt_of_a_failed_request_is_answered_as_one() -> None:
    """A paste from a running server that shows only a request's failure (a tool parser's
    traceback, even cut before its exception) is that request's failure, not a missing cause;
    the same traceback on a server seen coming up is a finding and no failure."""
    root = diagnose_text(TOOL_PARSER).root_cause
    assert root is not None and root.category == "request_error"
    served = diagnose_text("INFO:     Application startup complete.\n" + TOOL_PARSER)
    assert served.root_cause is None
    assert [f.category for f in served.findings] == ["request_error"]
    # a traceback cut in the engine's own start-up code is still a cause missing from the paste
    startup = TOOL_PARSER.replace("entrypoints/openai/tool_parsers/hermes_tool_parser.py",
                                  "v1/engine/core.py")
    root = diagnose_text(startup).root_cause
    assert root is not None and root.category == "root_cause_missing"


STREAM = (
    "ERROR 07-30 20:29:47 [serving_chat.py:932] Error in chat completion stream generator.\n"
    "ERROR 07-30 20:29:47 [serving_chat.py:932] Traceback (most recent call last):\n"
    'ERROR 07-30 20:29:47 [serving_chat.py:932]   File "/usr/local/lib/python3.12/dist-packages/'
    'vllm/entrypoints/openai/serving_chat.py", line 497, in chat_completion_stream_generator\n'
    "ERROR 07-30 20:29:47 [serving_chat.py:932]     async for res in result_generator:\n"
    'ERROR 07-30 20:29:47 [serving_chat.py:932]   File "/usr/lib/python3.12/json/decoder.py", '
    "line 338, in decode\n"
    "ERROR 07-30 20:29:47 [serving_chat.py:932]     obj, end = self.raw_decode(s)\n")


def test_a_cut_request_traceback_is_the_request_s_unless_it_awaits_the_engine() -> None:
    """A request handler's traceback cut before its exception failed that request, and names
    the library of the message logged just above it; cut where the handler awaits the engine's
    output (the engine's own failure, re-raised), the cause is missing from the paste."""
    root = diagnose_text(STREAM).root_cause
    assert root is not None and (root.category, root.library) == ("request_error",
                                                                   "vllm-frontend")
    engine = STREAM.replace(
        '"/usr/lib/python3.12/json/decoder.py", line 338, in decode',
        '"/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/async_llm.py", line 375, in '
        "output_handler")
    root = diagnose_text(engine.replace(
        "ERROR 07-30 20:29:47 [serving_chat.py:932] Error in chat completion stream generator.\n",
        "")).root_cause
    assert root is not None and root.category == "root_cause_missing"


@pytest.mark.parametrize("shape", ["indented block", "list item", "cat -n", "buildkite view"])
def test_a_paste_indented_or_numbered_as_a_whole_is_read(shape: str) -> None:
    """A log pasted as a markdown block indented by four spaces (or inside a list item), or
    copied with its line numbers (``cat -n``, Buildkite's log view), reads as the log."""
    lines = CAPTURE.splitlines()
    wrapped = {
        "indented block": [f"    {line}" for line in lines],
        "list item": [f"   {line}" for line in lines],
        "cat -n": [f"{n:6d}\t{line}" for n, line in enumerate(lines, 1)],
        "buildkite view": [f"{n + 3596}\t{line}" for n, line in enumerate(lines, 1)],
    }[shape]
    text = "\n".join(wrapped) + "\n"
    root = diagnose_text(text).root_cause
    assert root is not None
    assert (root.category, root.library) == ("oom_cudagraph_capture", "torch"), shape
    assert diagnose_text(text).to_dict() == run_text(text, prefilter=False).diagnosis.to_dict()


def test_a_paste_whose_exception_line_shares_the_frames_indent_is_dedented() -> None:
    """A traceback pasted with every line indented, its exception line too, is read as the
    traceback (a traceback prints its exception at the margin)."""
    text = ('  File "/usr/local/lib/python3.12/dist-packages/transformers/modeling_utils.py", '
            "line 1498, in _from_config\n"
            "      model = cls(config, **kwargs)\n"
            '  File "/usr/local/lib/python3.12/dist-packages/transformers/models/gemma3/'
            'modeling_gemma3.py", line 40, in __init__\n'
            "      super().__init__(config, **kwargs)\n"
            "  TypeError: Gemma3ForConditionalGeneration.__init__() got an unexpected keyword "
            "argument 'use_cache'\n")
    root = diagnose_text(text).root_cause
    assert root is not None and root.category == "python_dependency_conflict"


def test_a_log_in_an_issue_s_details_block_is_read_as_the_log() -> None:
    """GitHub issues fold long logs in ``<details><summary>…</summary>``: the markup lines are
    not log lines (``</details>`` is not a traceback's exception), the summary's text is."""
    folded = f"<details><summary>log</summary>\n\n```\n{CAPTURE}```\n</details>\n"
    root, plain = diagnose_text(folded).root_cause, diagnose_text(CAPTURE).root_cause
    assert root is not None and plain is not None
    assert (root.category, root.library, root.rule, root.fix) == (
        plain.category, plain.library, plain.rule, plain.fix)
    root = diagnose_text("<summary>RuntimeError: No CUDA GPUs are available</summary>\n"
                         ).root_cause
    assert root is not None and root.category == "no_gpu_visible"
    assert root.evidence[0].text == "RuntimeError: No CUDA GPUs are available"


def test_a_traceback_pasted_alone_keeps_its_own_indentation() -> None:
    """Frames only (each line indented by the traceback itself) are not a dedented paste."""
    from servewise.diagnose.scan import _paste_indent

    frames = (b'  File "/x/vllm/worker.py", line 9, in run\n    self.model()\n'
              b'  File "/x/torch/module.py", line 1, in __call__\n    return f()\n')
    assert _paste_indent(frames) == b""
    assert _paste_indent(b"".join(b"    " + line + b"\n" for line in frames.splitlines())
                         ) == b"    "
    assert _paste_indent(b"INFO a\n    b\n    c\n    d\n") == b""


def test_a_paste_a_terminal_wrapped_at_its_width_reads_as_the_log() -> None:
    """A log copied from a terminal window: every long line broken at the same column."""
    lines = CAPTURE.splitlines()
    width = 100
    wrapped = "\n".join(line[i:i + width] for line in lines
                        for i in range(0, max(len(line), 1), width)) + "\n"
    assert wrapped != CAPTURE
    root = diagnose_text(wrapped).root_cause
    assert root is not None
    assert (root.category, root.library) == ("oom_cudagraph_capture", "torch")
    full = run_text(wrapped, prefilter=False).diagnosis
    assert diagnose_text(wrapped).to_dict() == full.to_dict()
