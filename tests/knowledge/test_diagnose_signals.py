"""The knowledge tables of general failure signals validate, cite their vendors, and find what
their entries describe (by name, message and number)."""

from __future__ import annotations

from pathlib import Path

import pytest

from servewise.diagnose.ruleset import load_rules
from servewise.diagnose.signals import SIGNAL_PRECEDENCE
from servewise.diagnose.tables import LAYERS
from servewise.knowledge._load import DataFileError

RULES = load_rules(Path("/nonexistent"))


def _finds(signal_id: str, text: str) -> bool:
    signal = RULES.signals[signal_id]
    return any(pattern.search(text) for pattern in signal.patterns) and not any(
        pattern.search(text) for pattern in signal.exclude)


def test_the_tables_cover_what_the_issue_names() -> None:
    tables = {table.name for table in RULES.signal_tables}
    assert tables >= {"cuda", "hip", "nccl", "errno", "python", "hub", "capability", "torch",
                      "tools"}
    assert len(RULES.signals) >= 60


def test_every_entry_cites_its_vendor_and_says_what_to_collect() -> None:
    for signal in RULES.signals.values():
        assert signal.sources and all(s.startswith("https://") for s in signal.sources), signal.id
        assert signal.meaning and signal.collect, signal.id
        assert signal.layer in LAYERS, signal.id
        if signal.category is not None:
            assert signal.category in RULES.categories, signal.id
            assert signal.fix and signal.risk, signal.id
        assert signal.patterns and signal.keywords, signal.id


def test_entries_that_name_a_cause_are_rules_below_every_written_rule() -> None:
    assert {r.id for r in RULES.signal_rules} == {
        s.id for s in RULES.signals.values() if s.category}
    lowest = min(rule.precedence for rule in RULES.rules)
    assert all(rule.precedence == SIGNAL_PRECEDENCE < lowest for rule in RULES.signal_rules)
    assert all(rule.kind == "cause" and rule.table for rule in RULES.signal_rules)
    found = RULES.get("cuda-802")
    assert found is not None and found.category == "fabric_manager_not_running"


@pytest.mark.parametrize(("signal_id", "line", "category"), [
    ("cuda-802", "Error 802: system not yet initialized", "fabric_manager_not_running"),
    ("cuda-802", "CUDA driver error: system not yet initialized", "fabric_manager_not_running"),
    ("cuda-803", "CUDA error: system has unsupported display driver / cuda driver combination",
     "driver_library_mismatch"),
    ("cuda-804", "Error 804: forward compatibility was attempted on non supported HW",
     "driver_too_old"),
    ("cuda-209", "CUDA error 209 at ggml-cuda.cu:6701: no kernel image is available",
     "no_kernel_image"),
    ("cuda-222", "CUDA error 222 at ggml-cuda.cu:6466: the provided PTX was compiled with an "
     "unsupported toolchain.", "driver_too_old"),
    ("cuda-35", "cudaErrorInsufficientDriver", "driver_too_old"),
    ("hip-no-binary", "hipErrorNoBinaryForGpu: Unable to find code object for all current "
     "devices!", "no_kernel_image"),
    ("errno-emfile", 'Err` value: Os { code: 24, kind: Uncategorized, message: "Too many open '
     'files" }', "open_files_limit"),
    ("errno-enospc", "OSError: [Errno 28] No space left on device: '/root/.cache/x'",
     "disk_full"),
    ("errno-eaddrinuse", "OSError: [Errno 98] Address already in use", "port_in_use"),
    ("errno-eacces-cache", "PermissionError: [Errno 13] Permission denied: '/home/u/.cache/"
     "huggingface'", "cache_dir_not_writable"),
    ("py-extension-not-built", "ModuleNotFoundError: No module named '_turbomind'",
     "kernel_extension_not_installed"),
    ("py-extension-not-built", "ModuleNotFoundError: No module named 'vllm._C'",
     "kernel_extension_not_installed"),
    ("py-module-missing", "ModuleNotFoundError: No module named 'triton'",
     "optional_dependency_missing"),
    ("py-undefined-symbol", "ImportError: /x/vllm/_C.abi3.so: undefined symbol: _ZN3c10",
     "binary_abi_mismatch"),
    ("hub-401-gated", "requests.exceptions.HTTPError: 401 Client Error: Unauthorized for url",
     "hf_auth_gated"),
    ("hub-429", "requests.exceptions.HTTPError: 429 Client Error: Too Many Requests for url",
     "hf_hub_unreachable"),
    ("cc-torch-not-compatible", "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not "
     "compatible with the current PyTorch installation.", "no_kernel_image"),
    ("cc-requires-capability", "RuntimeError: this kernel requires compute capability >= 9.0",
     "kernel_unsupported_arch"),
    ("tool-nvcc-missing-flashinfer", "RuntimeError: Could not find nvcc",
     "jit_compiler_missing"),
    ("torch-fork-reinit", "RuntimeError: Cannot re-initialize CUDA in forked subprocess.",
     "cuda_fork_reinit"),
])
def test_an_entry_finds_its_signal_and_names_its_category(signal_id: str, line: str,
                                                          category: str) -> None:
    assert _finds(signal_id, line)
    assert RULES.signals[signal_id].category == category


@pytest.mark.parametrize(("signal_id", "line"), [
    ("cuda-802", "CUDA error 8020 at x"),  # another number
    ("errno-enospc", "NCCL WARN Error: failed to extend /dev/shm/nccl-x: No space left on device"),
    ("py-module-missing", "ModuleNotFoundError: No module named 'vllm'"),  # the engine itself
    ("py-extension-not-built", "No module named '_distutils_hack'"),  # not an extension
    ("cuda-1", "OSError: [Errno 22] invalid argument"),  # errno, not CUDA
])
def test_an_entry_does_not_find_what_only_looks_like_it(signal_id: str, line: str) -> None:
    assert not _finds(signal_id, line)


def test_entries_without_a_category_only_explain() -> None:
    explaining = [s for s in RULES.signals.values() if s.category is None]
    assert {"cuda-700", "cuda-710", "nccl-unhandled-cuda-error", "errno-eacces"} <= {
        s.id for s in explaining}
    assert all(not s.fix or s.category for s in RULES.signals.values())


def _table(tmp_path: Path, body: str) -> Path:
    folder = tmp_path / "diagnose_signals"
    folder.mkdir()
    (folder / "cuda.toml").write_text(body, encoding="utf-8")
    return tmp_path


def test_a_user_table_replaces_the_shipped_one(tmp_path: Path) -> None:
    user = _table(tmp_path, '''title = "mine"
library = "driver"
layer = "driver"
[[signal]]
id = "cuda-802"
messages = ["system not yet initialized"]
category = "no_gpu_visible"
meaning = "m"
fix = ["f"]
collect = "c"
risk = "r"
source = "https://example.com/cuda"
''')
    rules = load_rules(user)
    assert rules.signals["cuda-802"].category == "no_gpu_visible"
    assert "cuda-803" not in rules.signals and "errno-emfile" in rules.signals


@pytest.mark.parametrize(("body", "field"), [
    ('title = "t"\nlibrary = "driver"\nlayer = "driver"\n[[signal]]\nid = "x"\n'
     'messages = ["m"]\nmeaning = "m"\ncollect = "c"\n', "source"),
    ('title = "t"\nlibrary = "driver"\nlayer = "driver"\n[[signal]]\nid = "x"\n'
     'patterns = ["abc"]\nkeywords = ["xyz"]\nmeaning = "m"\ncollect = "c"\n'
     'source = "https://e.com"\n', "patterns"),
    ('title = "t"\nlibrary = "driver"\nlayer = "driver"\n[[signal]]\nid = "x"\n'
     'messages = ["m"]\ncategory = "no_such"\nmeaning = "m"\ncollect = "c"\n'
     'source = "https://e.com"\n', "category"),
    ('title = "t"\nlibrary = "driver"\nlayer = "driver"\n[[signal]]\nid = "x"\n'
     'messages = ["m"]\ncategory = "disk_full"\nfix = ["use {path}"]\nmeaning = "m"\n'
     'collect = "c"\nsource = "https://e.com"\n', "fix"),
])
def test_a_bad_entry_names_its_file_and_field(tmp_path: Path, body: str, field: str) -> None:
    user = _table(tmp_path, body)
    with pytest.raises(DataFileError) as raised:
        load_rules(user)
    assert f"field {field!r}" in str(raised.value) and "cuda.toml" in str(raised.value)
