"""The knowledge tables in a diagnosis: a general signal names the cause where no rule does,
a rule written for the message wins over it, and a signal only counts on an error line."""

from __future__ import annotations

from servewise.diagnose import diagnose_text


def _root(text: str) -> tuple[str, str | None, str]:
    root = diagnose_text(text).root_cause
    assert root is not None, text
    return root.category, root.library, root.rule


def test_a_table_names_a_cause_no_rule_knows() -> None:
    log = ('[SGLang LOG] thread \'actix-rt|system:0|arbiter:242\' panicked at worker.rs:429:30:\n'
           '[SGLang LOG] called `Result::unwrap()` on an `Err` value: Os { code: 24, kind: '
           'Uncategorized, message: "Too many open files" }\n')
    assert _root(log) == ("open_files_limit", "host", "errno-emfile")


def test_a_compiled_extension_missing_takes_its_library_from_the_frames() -> None:
    log = ('Traceback (most recent call last):\n'
           '  File "/mnt/lmdeploy/lmdeploy/turbomind/turbomind.py", line 17, in <module>\n'
           '    import _turbomind as _tm\n'
           "ModuleNotFoundError: No module named '_turbomind'\n")
    assert _root(log) == ("kernel_extension_not_installed", "lmdeploy", "py-extension-not-built")


def test_a_missing_package_is_named_by_its_module() -> None:
    log = "2025-04-01 03:28:52,036 - lmdeploy - ERROR - base.py:53 - ModuleNotFoundError: " \
          "No module named 'triton'\n"
    assert _root(log) == ("optional_dependency_missing", "triton", "py-module-missing")


def test_a_rule_written_for_the_message_wins_over_the_table() -> None:
    # 802 has a rule of its own (with its fix steps); the table's entry is the fallback.
    log = ("ERROR 02-20 16:43:12 engine.py:389] Unexpected error from cudaGetDeviceCount(). "
           "Error 802: system not yet initialized\n")
    category, _, rule = _root(log)
    assert category == "fabric_manager_not_running" and not rule.startswith("cuda-")


def test_a_hip_code_without_a_rule_is_named_by_the_hip_table() -> None:
    log = "hipErrorNoBinaryForGpu: Unable to find code object for all current devices!\n"
    assert _root(log) == ("no_kernel_image", "torch", "hip-no-binary")


def test_a_signal_on_an_info_or_warning_line_is_not_a_failure() -> None:
    log = ("INFO 07-31 10:00:01 [api.py:1] Starting vLLM API server 0.26.1\n"
           "WARNING 07-31 10:00:01 [system_utils.py:255] This can cause fd limit errors like "
           "`OSError: [Errno 24] Too many open files`. Consider increasing with ulimit -n\n"
           "INFO 07-31 10:00:09 [core.py:133] Initializing a V1 LLM engine (v0.26.1)\n"
           "INFO:     Application startup complete.\n")
    assert diagnose_text(log).root_cause is None


def test_an_oom_the_rules_do_not_know_is_told_by_its_phase() -> None:
    log = "CUDA error 2 at D:\\a\\LLamaSharp\\LLamaSharp\\ggml-cuda.cu:6016: out of memory\n"
    category, library, rule = _root(log)
    assert (category, library, rule) == ("oom_other", "ggml", "oom-any")
    root = diagnose_text(log).root_cause
    assert root is not None and "come up" in root.fix.steps[0]


def test_a_code_that_names_no_cause_explains_an_unclassified_error() -> None:
    log = ("[rank0]: Traceback (most recent call last):\n"
           '[rank0]:   File "/x/torch/distributed/distributed_c10d.py", line 1, in all_reduce\n'
           "[rank0]:     work = group.allreduce([tensor], opts)\n"
           "[rank0]: torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:"
           "1970, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.21.5\n")
    root = diagnose_text(log).root_cause
    assert root is not None and root.category == "unclassified"
    assert root.extracted.get("signal") == "NCCL 5 ncclInvalidUsage"
    assert root.triage is not None and "NCCL_DEBUG=WARN" in root.triage.collect


def test_an_illegal_instruction_is_explained_not_named_a_memory_access() -> None:
    log = ("CUDA error: an illegal instruction was encountered\n"
           "Search for `cudaErrorIllegalInstruction' in https://docs.nvidia.com/cuda/"
           "cuda-runtime-api/group__CUDART__TYPES.html for more information.\n")
    root = diagnose_text(log).root_cause
    assert root is not None and root.category == "unclassified"
    assert [e.line for e in root.evidence][:1] == [1]
    assert "cudaErrorIllegalInstruction" in root.extracted.get("signal", "")


def test_a_message_of_several_lines_cites_the_line_its_signature_matched() -> None:
    log = ("RuntimeError: Failed to import transformers.models.bert.modeling_bert because of the "
           "following error (look up to see its traceback):\n"
           "/usr/lib/python3.12/site-packages/flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so: "
           "undefined symbol: _ZN3c105ErrorC2ENS_14SourceLocationE\n")
    root = diagnose_text(log).root_cause
    assert root is not None and root.evidence[0].line == 2
    assert "flash_attn_2_cuda" in root.evidence[0].text
