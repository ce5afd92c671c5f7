"""Log-line prefixes of every engine and wrapper, stripped and kept as metadata."""

from __future__ import annotations

import pytest

from servewise.formats.logline import parse_line, strip_ansi


def one(raw: str):  # type: ignore[no-untyped-def]
    (line,) = parse_line(raw, 7)
    return line


@pytest.mark.parametrize(("raw", "text", "process", "level", "source"), [
    ("(EngineCore_DP0 pid=411) ERROR 06-29 03:35:32 [core.py:1231] EngineCore failed to start.",
     "EngineCore failed to start.", "EngineCore_DP0 pid=411", "error", "vllm"),
    ("(Worker_PP0_TP1_EP1 pid=34510) INFO 06-29 03:35:32 [v1/worker/gpu_worker.py:436] x",
     "x", "Worker_PP0_TP1_EP1 pid=34510", "info", "vllm"),
    ("(VllmWorker rank=0 pid=10672) ERROR 03-16 06:12:38 [multiproc_executor.py:375] boom",
     "boom", "VllmWorker_RANK0 pid=10672", "error", "vllm"),
    ("(VllmWorkerProcess pid=2144911) ERROR 01-12 08:36:38 multiproc_worker_utils.py:233] boom",
     "boom", "VllmWorkerProcess pid=2144911", "error", "vllm"),
    ("(AsyncVLLMInferenceEngine pid=891624) (EngineCore_0 pid=892764) ERROR 01-12 08:36:38 "
     "[core.py:1] boom [repeated 6x across cluster]", "boom", "EngineCore_DP0 pid=892764",
     "error", "vllm"),
    ("[2025-02-07 01:19:40 DP0 TP0 EP0] Load weight end.", "Load weight end.", "DP0 TP0 EP0",
     None, "sglang"),
    ("2023-12-16T09:36:24.632149Z ERROR text_generation_launcher: Shard 0 failed to start",
     "Shard 0 failed to start", "", "error", "tgi"),
    ("[07/23/2025-06:37:06] [TRT-LLM] [RANK 1] [E] Error executing load_single_module",
     "Error executing load_single_module", "rank 1", "error", "tensorrt_llm"),
    ("[TensorRT-LLM][ERROR] Assertion failed: Unsupported architecture (x.cpp:87)",
     "Assertion failed: Unsupported architecture (x.cpp:87)", "", "error", "tensorrt_llm"),
    ("[rank0]:[E1203 07:25:44.417115665 ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught",
     "Watchdog caught", "rank 0", "error", "torch"),
    ("node-3:1201:1388 [2] NCCL WARN NET/IB : Got completion", "NCCL WARN NET/IB : Got completion",
     "nccl_DEVICE2 pid=1201", None, "nccl"),
    ("INFO:     127.0.0.1:35602 - \"GET /health HTTP/1.1\" 200 OK",
     "127.0.0.1:35602 - \"GET /health HTTP/1.1\" 200 OK", "", "info", "uvicorn"),
])
def test_engine_prefixes(raw: str, text: str, process: str, level: str | None,
                         source: str) -> None:
    line = one(raw)
    assert (line.text, line.process, line.level, line.source) == (text, process, level, source)
    assert line.number == 7


def test_ray_repeat_count_and_ranks() -> None:
    line = one("(RayWorkerWrapper pid=77, ip=10.0.0.2) ERROR 01-12 08:36:38 [x.py:1] y "
               "[repeated 6x across cluster]")
    assert (line.repeated, line.role, line.pid) == (6, "RayWorkerWrapper", 77)
    assert one("(Worker_TP1 pid=5) INFO 01-12 08:36:38 [x.py:1] y").ranks == (("tp", 1),)


@pytest.mark.parametrize("wrapper", [
    "2026-09-22T06:50:07.810074780Z ",  # docker logs --timestamps
    "qwen3.5-4b  | ",  # docker compose
    "Oct 02 22:13:46 gpu-node vllm[1234]: ",  # journald
    "Jun 18 22:16:41 ollama[116408]: ",  # journald, pasted without the host name
    ">   | [2024-09-05T00:38:34Z] ",  # Buildkite
    "2026-01-01T00:00:00.000000000Z stderr F ",  # Kubernetes CRI
    "#033[2m#033[33m",  # colour codes as syslog escapes them
    "\x1b[1;36m",  # colour
])
def test_outer_wrappers_are_stripped(wrapper: str) -> None:
    line = one(wrapper + "(Worker_TP0 pid=9) ERROR 06-29 03:35:32 [core.py:1] boom\x1b[0m")
    assert (line.text, line.process, line.level) == ("boom", "Worker_TP0 pid=9", "error")


def test_tgi_json_with_escaped_newlines_even_when_cut() -> None:
    raw = ('{"timestamp":"2024-02-13T22:19:07.248791Z","level":"ERROR","fields":{"message":'
           '"Shard complete standard error output:\\n\\n[E ProcessGroupNCCL.cpp:475] [Rank 0] '
           'Watchdog caught collective operation timeout\\n[E ProcessGroupNCCL.cpp')
    lines = parse_line(raw, 3)
    assert [line.text for line in lines] == [
        "Shard complete standard error output:", "", "Watchdog caught collective operation "
        "timeout", "[E ProcessGroupNCCL.cpp"]
    assert all(line.number == 3 for line in lines)
    whole = parse_line('{"log":"(Worker_TP0 pid=9) ERROR 06-29 03:35:32 [c.py:1] boom\\n",'
                       '"stream":"stderr","time":"2026-01-01T00:00:00Z"}', 4)
    assert [(line.text, line.process) for line in whole] == [("boom", "Worker_TP0 pid=9")]


def test_progress_bars() -> None:
    assert one("Loading: 10%|█ | 1/10\rLoading: 100%|██████████| 10/10").text.startswith(
        "Loading: 100%")
    glued = parse_line("Loading weights concurrently:  47%|████▋     | 667/1417 [00:03<00:05, "
                       "139.82it/s][07/23/2025-06:37:06] [TRT-LLM] [RANK 1] [E] boom", 1)
    assert [line.text for line in glued][-1] == "boom"
    assert glued[-1].process == "rank 1"


def test_strip_ansi() -> None:
    assert strip_ansi("\x1b[31mred\x1b[0m \x1b]8;;http://x\x07link") == "red link"


def test_a_flattened_paste_is_split_again_at_its_process_tags() -> None:
    """Newlines lost in a comment box: one line holding a tagged traceback's lines."""
    tag = "(SGLangWorker pid=38138) "
    raw = (f"> Capturing batches (bs=64): 0%| | 0/11 [00:00<?, ?it/s] {tag}Scheduler hit an "
           f"exception: Traceback (most recent call last): {tag}File \"/x/triton/compiler.py\", "
           f"line 292, in make_cubin {tag}subprocess.run(cmd) {tag}subprocess.CalledProcessError"
           ": Command 'ptxas' returned non-zero exit status 255.")
    lines = parse_line(raw, 1)
    assert [line.text for line in lines[1:]] == [
        "Scheduler hit an exception: Traceback (most recent call last):",
        'File "/x/triton/compiler.py", line 292, in make_cubin', "subprocess.run(cmd)",
        "subprocess.CalledProcessError: Command 'ptxas' returned non-zero exit status 255."]
    assert {line.process for line in lines[1:]} == {"SGLangWorker pid=38138"}
    # Two tags, or tags of several processes, are ordinary lines.
    assert len(parse_line(f"{tag}a {tag}File \"/x.py\", line 1, in f", 1)) == 1


def test_a_log_console_prefix_is_removed() -> None:
    """Google Cloud Logging's severity and timestamp; its severity is the stream's."""
    (line,) = parse_line("INFO 2025-03-30T23:51:21.299840450Z \x1b[1;36m(VllmWorkerProcess "
                         "pid=630)\x1b[0;0m ERROR 03-30 23:51:21 multiproc_worker_utils.py:243] "
                         "KeyError: 'layers.32.self_attn.qkv_proj.k_scale'", 1)
    assert line.text == "KeyError: 'layers.32.self_attn.qkv_proj.k_scale'"
    assert (line.level, line.process) == ("error", "VllmWorkerProcess pid=630")


def test_a_row_of_tritons_model_table_is_its_status() -> None:
    """Triton Inference Server's model table: a model that did not load says why in its status
    (an error); its wrapped rows, READY rows and the table's rules are plain text."""
    failed = one("| tensorrt_llm   | 1       | UNAVAILABLE: Internal: unexpected error when "
                 "creating modelInstanceState: [TensorRT-LLM][ERROR] CUDA runtime error |")
    assert failed.text.startswith("UNAVAILABLE: Internal: unexpected error") and (
        failed.text.endswith("CUDA runtime error"))
    assert failed.level == "error"
    wrapped = one("|                |         | t supported (/app/bufferManager.cpp:170)   |")
    assert (wrapped.text, wrapped.level) == ("t supported (/app/bufferManager.cpp:170)", None)
    assert (one("| postprocessing | 1       | READY     |").text, one("| a | 1 | READY |").level
            ) == ("READY", None)
    for other in ("+----------------+---------+", "| Model | Version | Status |",
                  "|   0  NVIDIA H100 80GB HBM3   On  | 00000000:18:00.0 Off |    0 |"):
        assert one(other).text == other


@pytest.mark.parametrize(("raw", "text"), [
    ('{"object":"error","message":"The input (61709 tokens) is longer than the model\'s context '
     'length (40960 tokens).","type":"BadRequestError","param":null,"code":400}',
     "BadRequestError: The input (61709 tokens) is longer than the model's context length "
     "(40960 tokens)."),
    ('{"error":{"message":"This model\'s maximum context length is 4096 tokens.","type":'
     '"BadRequestError","param":null,"code":400}}',
     "BadRequestError: This model's maximum context length is 4096 tokens."),
    ('{"error":"Input validation error: `inputs` tokens + `max_new_tokens` must be <= 2048.",'
     '"error_type":"validation"}',
     "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 2048."),
    # pasted with a shell's \' escape, which is not JSON: read up to the cut, still an error
    ('{"object":"error","message":"The input (9 tokens) is longer than the model\\\'s context '
     'length (8 tokens).","type":"BadRequestError","param":null,"code":400}',
     "BadRequestError: The input (9 tokens) is longer than the model's context length "
     "(8 tokens)."),
])
def test_an_api_error_body_is_an_error(raw: str, text: str) -> None:
    """The error body an OpenAI-compatible server (vLLM, SGLang) or TGI answered with."""
    line = one(raw)
    assert (line.text, line.level) == (text, "error")


def test_a_structured_log_with_an_error_field_keeps_its_message() -> None:
    line = one('{"level":"info","msg":"retrying","error":"connection refused"}')
    assert (line.text, line.level) == ("retrying", "info")


def test_an_api_error_body_behind_a_paste_prefix_is_an_error() -> None:
    line = one('> {"object":"error","message":"The input (9 tokens) is longer than the model\'s '
               'context length (8 tokens).","type":"BadRequestError","param":null,"code":400}')
    assert line.level == "error" and line.text.startswith("BadRequestError: The input (9 tokens)")


def test_a_line_number_a_viewer_copied_is_removed() -> None:
    assert one("3597\t(APIServer pid=18801) ERROR 03-01 13:30:11 [serving.py:214] boom").text == (
        "boom")
    assert one("     7\tRuntimeError: boom").text == "RuntimeError: boom"
    assert one("2024\tyear").text == "year"
