"""Events from lines: interleaved processes separated, tracebacks and messages reassembled."""

from __future__ import annotations

from servewise.formats.logevents import EventAssembler, normalize_path
from servewise.formats.logline import parse_line


def events(text: str):  # type: ignore[no-untyped-def]
    assembler = EventAssembler()
    lines = [line for n, raw in enumerate(text.splitlines(), 1) for line in parse_line(raw, n)]
    return [e for e in assembler.feed_all(lines) if e.kind != "record" or e.level == "error"]


def test_interleaved_worker_tracebacks_are_separated() -> None:
    p0 = "(Worker_TP0 pid=1) ERROR 06-29 03:35:32 [m.py:1] "
    p1 = "(Worker_TP1 pid=2) ERROR 06-29 03:35:32 [m.py:1] "
    text = "\n".join([
        p0 + "Traceback (most recent call last):", p1 + "Traceback (most recent call last):",
        p0 + '  File "/a/site-packages/vllm/x.py", line 3, in load_model',
        p1 + '  File "/a/site-packages/deep_gemm/y.py", line 9, in gemm',
        p0 + "    code()", p1 + "    code()",
        p0 + "torch.OutOfMemoryError: CUDA out of memory.",
        p1 + "RuntimeError: Assertion error (csrc/apis/layout.hpp:60): Unknown SF transformation",
    ])
    found = {e.process: e for e in events(text) if e.kind == "traceback"}
    assert found["Worker_TP0 pid=1"].exception == "torch.OutOfMemoryError"
    assert [f.function for f in found["Worker_TP0 pid=1"].frames] == ["load_model"]
    assert found["Worker_TP1 pid=2"].frames[0].path == "/a/site-packages/deep_gemm/y.py"
    assert found["Worker_TP1 pid=2"].exception_line == 8


def test_sglang_traceback_lines_follow_the_prefixed_header() -> None:
    text = ("[2025-04-11 08:12:44 TP7] Scheduler hit an exception: Traceback (most recent call "
            "last):\n  File \"/sgl/cuda_graph_runner.py\", line 269, in __init__\n    raise X(\n"
            "Exception: Capture cuda graph failed: CUDA out of memory.\n")
    (traceback,) = events(text)
    assert traceback.process == "TP7" and traceback.header == "Scheduler hit an exception"
    assert traceback.text == "Exception: Capture cuda graph failed: CUDA out of memory."


def test_headless_excerpt_and_wrapped_message() -> None:
    (event,) = events('  File "/x/model_runner.py", line 216, in initialize\n'
                      "    self.init_cuda_graphs()\nValueError: first line\n  second line\n")
    assert event.headless and event.message == "first line\n  second line"
    (exc,) = events("RuntimeError: dispatch_scaled_mm,\n  /w/c3x/scaled_mm_helper.hpp:17\n")
    assert exc.kind == "exception" and exc.message.endswith("scaled_mm_helper.hpp:17")


def test_cpp_backtrace_attaches_to_the_assertion() -> None:
    (event,) = events("[TensorRT-LLM][ERROR] Assertion failed: Unsupported architecture (f.cpp:87)"
                      "\n1       0x7f1 tensorrt_llm::common::throwRuntimeError(char const*) + 100"
                      "\n2       0x7f2 fmhaRunner::setup() + 20\n")
    assert event.message.count("\n") == 2 and event.last_line == 3


def test_normalize_path() -> None:
    assert normalize_path("/x/deepgemm/csrc/apis/../jit_kernels/impls/../heuristics/../../utils/"
                          "layout.hpp") == "/x/deepgemm/csrc/utils/layout.hpp"
    assert normalize_path("a\\b\\c.py") == "a/b/c.py"


_RAISING = ('Traceback (most recent call last):\n'
            '  File "/opt/tgi/server.py", line 231, in serve_inner\n'
            '    model = get_model(\n'
            '  File "/opt/tgi/models/__init__.py", line 1064, in get_model\n'
            '    raise NotImplementedError("sharded is not supported for AutoModel")\n')


def test_a_cut_exception_line_takes_the_raise_line() -> None:
    (traceback,) = events(_RAISING + "\nNotImplementedEr\n")
    assert traceback.text == "NotImplementedError: sharded is not supported for AutoModel"


def test_a_traceback_cut_before_its_exception_takes_the_raise_line() -> None:
    (traceback,) = events(_RAISING)
    assert traceback.text == "NotImplementedError: sharded is not supported for AutoModel"


def test_the_exception_line_wins_over_the_raise_line() -> None:
    (traceback,) = events(_RAISING + "NotImplementedError: what it really said\n")
    assert traceback.text == "NotImplementedError: what it really said"


def test_a_raise_in_an_outer_frame_is_not_taken() -> None:
    text = ('Traceback (most recent call last):\n  File "/a.py", line 1, in f\n'
            '    raise ValueError("outer")\n  File "/b.py", line 2, in g\n    g()\n')
    (traceback,) = events(text)
    assert traceback.exception is None and "outer" not in traceback.text


def test_another_exception_than_the_raised_one_keeps_its_own_name() -> None:
    (traceback,) = events(_RAISING + "KeyError\n")
    assert traceback.text == "KeyError"


def test_an_exception_repr_above_its_traceback_is_one_event() -> None:
    """vLLM V0 logs the exception's repr, then its traceback; the excerpt ends in the frames."""
    p = "ERROR 10-11 12:27:29 engine.py:157] "
    text = "\n".join([
        p + "OutOfMemoryError('CUDA out of memory. Tried to allocate 138.00 MiB.')",
        p + "Traceback (most recent call last):",
        p + '  File "/v/vllm/engine/multiprocessing/engine.py", line 218, in run_engine_loop',
        p + "    request_outputs = self.engine_step()",
    ])
    found = [e for e in events(text) if e.kind != "record" or e.level == "error"]
    assert len(found) == 1
    (traceback,) = found
    assert traceback.text == "OutOfMemoryError: CUDA out of memory. Tried to allocate 138.00 MiB."
    assert [f.function for f in traceback.frames] == ["run_engine_loop"]


def test_a_record_that_is_not_a_repr_stays_its_own_event() -> None:
    text = ("ERROR 10-11 12:27:29 engine.py:157] Engine loop failed\n"
            "ERROR 10-11 12:27:29 engine.py:157] Traceback (most recent call last):\n"
            'ERROR 10-11 12:27:29 engine.py:157]   File "/v/x.py", line 2, in f\n'
            "ERROR 10-11 12:27:29 engine.py:157] ValueError: boom\n")
    kinds = [e.kind for e in events(text)]
    assert kinds == ["record", "traceback"]


def test_faulthandler_frames_belong_to_the_fatal_error_innermost_last() -> None:
    """Python's faulthandler lists the current thread's frames innermost first, without the
    comma of a traceback; other threads' frames are not the failure's."""
    text = ("Fatal Python error: Segmentation fault\n\n"
            "Thread 0x00007fd0aa7fc640 (most recent call first):\n"
            '  File "/usr/lib/python3.10/threading.py", line 324 in wait\n\n'
            "Current thread 0x00007fcf597eb640 (most recent call first):\n"
            '  File "/x/site-packages/flashinfer/decode.py", line 514 in begin_forward\n'
            '  File "/x/site-packages/vllm/attention/backends/flashinfer.py", line 149 in '
            "begin_forward\n")
    assembler = EventAssembler()
    lines = [line for n, raw in enumerate(text.splitlines(), 1) for line in parse_line(raw, n)]
    (fatal,) = assembler.feed_all(lines)
    assert fatal.text == "Fatal Python error: Segmentation fault"
    assert [f.path for f in fatal.frames] == [
        "/x/site-packages/vllm/attention/backends/flashinfer.py",
        "/x/site-packages/flashinfer/decode.py"]


def test_a_raise_line_cut_before_its_closing_quote_still_says_what_was_raised() -> None:
    text = ("Traceback (most recent call last):\n"
            '  File "/x/site-packages/triton/runtime/build.py", line 32, in _build\n'
            '    raise RuntimeError("Failed to find C compiler. Please\n')
    (traceback,) = events(text)
    assert traceback.exception == "RuntimeError"
    assert traceback.message == "Failed to find C compiler. Please"


def test_a_bare_assertion_error_takes_its_assert_statement_as_its_message() -> None:
    text = ("Traceback (most recent call last):\n"
            '  File "/x/vllm/model_executor/models/chatglm.py", line 53, in __init__\n'
            "    assert self.total_num_kv_heads % tp_size == 0\n"
            "AssertionError\n")
    (traceback,) = events(text)
    assert traceback.exception == "AssertionError"
    assert traceback.message == "assert self.total_num_kv_heads % tp_size == 0"
    with_message = text.replace("AssertionError\n", "AssertionError: heads do not divide\n")
    assert events(with_message)[0].message == "heads do not divide"
