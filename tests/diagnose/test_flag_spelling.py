"""Fix steps spell flags as the log's engine does; the spellings are not values from the log."""

from __future__ import annotations

from servewise.diagnose import diagnose_text
from servewise.diagnose.advice_figures import flag_values

SGLANG_WEIGHT_OOM = """\
[2025-05-02 10:11:12 TP0] Load weight begin. avail mem=78.50 GB
[2025-05-02 10:11:40 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/sgl-workspace/sglang/python/sglang/srt/model_loader/loader.py", line 381, in load_model
    model = _initialize_model(model_config, self.load_config)
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 896.00 MiB. GPU 0 has a total \
capacity of 79.19 GiB of which 412.00 MiB is free.
"""

VLLM_WEIGHT_OOM = """\
(Worker_TP0 pid=613) INFO 06-29 03:35:10 [default_loader.py:262] Loading weights took 31.02 seconds
Loading safetensors checkpoint shards:  40% Completed | 6/15 [00:20<00:31,  3.51s/it]
(Worker_TP0 pid=613) ERROR 06-29 03:35:32 [multiproc_executor.py:585] torch.OutOfMemoryError: \
CUDA out of memory. Tried to allocate 896.00 MiB. GPU 0 has a total capacity of 79.19 GiB of \
which 412.00 MiB is free.
"""


def _fix_text(log: str) -> tuple[str, dict[str, object]]:
    root = diagnose_text(log).root_cause
    assert root is not None and root.category == "oom_weight_load", root
    return " ".join(root.fix.steps), dict(root.extracted)


def test_an_sglang_log_gets_sglang_flags() -> None:
    text, extracted = _fix_text(SGLANG_WEIGHT_OOM)
    assert "--tp-size" in text and "--tensor-parallel-size" not in text
    assert not [name for name in extracted if name.startswith("flag_")]


def test_a_vllm_log_gets_vllm_flags() -> None:
    text, extracted = _fix_text(VLLM_WEIGHT_OOM)
    assert "--tensor-parallel-size" in text and "--tp-size" not in text
    assert not [name for name in extracted if name.startswith("flag_")]


def test_an_unknown_error_reports_only_what_the_log_says() -> None:
    log = ('Traceback (most recent call last):\n  File "x.py", line 3, in <module>\n'
           "    foo()\nZeroDivisionError: division by zero\n")
    root = diagnose_text(log).root_cause
    assert root is not None and root.category == "unclassified"
    assert dict(root.extracted) == {"exception": "ZeroDivisionError",
                                    "error": "ZeroDivisionError: division by zero"}


def test_a_setting_sglang_lacks_takes_its_counterpart() -> None:
    sglang = flag_values("sglang")
    assert sglang["flag_gpu_memory_utilization"] == "--mem-fraction-static"
    assert sglang["flag_max_num_batched_tokens"] == "--chunked-prefill-size"
    assert sglang["flag_max_model_len"] == "--context-length"
    assert flag_values("vllm")["flag_gpu_memory_utilization"] == "--gpu-memory-utilization"
    assert flag_values("tgi") == flag_values("vllm")  # another engine: vLLM's spellings


# A watchdog timeout after the ranks had talked (DST008): the timeout to raise is the engine's
# own setting (issue 28, item 9: a vLLM log was told SGLang's --dist-timeout).
VLLM_WATCHDOG = """\
INFO 03-04 10:00:00 [api_server.py:1805] vLLM API server version 0.19.0
(VllmWorker rank=1 pid=2978) [rank1]:[E1203 07:25:44.417115665 ProcessGroupNCCL.cpp:632] \
[Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE, \
NumelIn=1024, NumelOut=1024, Timeout(ms)=600000) ran for 600041 milliseconds before timing out.
"""

SGLANG_WATCHDOG = """\
[2025-05-02 10:11:12 TP0] Load weight begin. avail mem=78.50 GB
[rank1]:[E1203 07:25:44.417115665 ProcessGroupNCCL.cpp:632] [Rank 1] Watchdog caught \
collective operation timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE, NumelIn=1024, \
NumelOut=1024, Timeout(ms)=600000) ran for 600041 milliseconds before timing out.
"""


def _watchdog_fix(log: str, engine: str) -> str:
    root = diagnose_text(log).root_cause
    assert root is not None and root.rule == "DST008", root
    assert root.extracted["engine"] == engine
    return " ".join(root.fix.steps)


def test_a_vllm_watchdog_timeout_names_vllms_own_timeout() -> None:
    text = _watchdog_fix(VLLM_WATCHDOG, "vllm")
    assert "--distributed-timeout-seconds" in text
    assert "--dist-timeout" not in text


def test_an_sglang_watchdog_timeout_names_sglangs_own_timeout() -> None:
    text = _watchdog_fix(SGLANG_WATCHDOG, "sglang")
    assert "--dist-timeout" in text
    assert "--distributed-timeout-seconds" not in text
