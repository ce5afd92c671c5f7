"""Real failure excerpts from public issues, and the seed's failures written as full logs."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from servewise.diagnose import diagnose_text
from servewise.knowledge.gpus import load_gpu_catalog
from support.configs import find_shared
from support.diagnose import LOG_FIXTURES, SGLANG_SAMPLE
from support.engine import missing_dependency


def _dev_logs() -> list[dict[str, Any]]:
    shared = find_shared()
    if shared is None:
        return []
    path = shared / "data" / "failure_logs_dev.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


DEV = _dev_logs()


def _head(library: str | None) -> str:
    return re.split(r"[-_.]", library or "")[0]


def test_the_dev_set_is_there() -> None:
    if not DEV:
        missing_dependency("shared/data/failure_logs_dev.jsonl not found beside the repository")
    assert len(DEV) == 17


@pytest.mark.parametrize("case", DEV, ids=lambda c: c["id"])
def test_dev_failure_log(case: dict[str, Any]) -> None:
    diagnosis = diagnose_text(case["excerpt"])
    root = diagnosis.root_cause
    assert root is not None, case["id"]
    assert root.category == case["category"], (case["id"], root.rule)
    assert _head(root.library) == _head(case["culprit_library"]), (case["id"], root.library)
    assert diagnosis.exit_code == 1
    assert root.fix.steps


def _seed(name: str) -> Any:
    return _seed_path(LOG_FIXTURES / name)


def _seed_path(path: Path) -> Any:
    return diagnose_text(path.read_text()).root_cause


def test_seed_deepgemm_scale_factor_layout() -> None:
    root = _seed("dsv4_deepgemm_layout.log")
    assert (root.category, root.library, root.extracted["api"]) == (
        "kernel_unsupported_arch", "deep_gemm", "layout")
    assert root.extracted["reason"] == "Unknown SF transformation"
    assert root.processes == ("Worker_TP0 pid=421", "Worker_TP1 pid=422")
    text = " ".join(root.fix.steps)
    assert "servewise gate" in text and "VLLM_USE_DEEP_GEMM=0" in text and "hyperconnection" in text
    assert any(e.role == "quoted" for e in root.evidence)  # the executor's wrapper agrees


def test_seed_deepgemm_hyperconnection() -> None:
    root = _seed("dsv4_deepgemm_hyperconnection.log")
    assert (root.category, root.library, root.extracted["api"]) == (
        "kernel_unsupported_arch", "deep_gemm", "hyperconnection")
    assert root.extracted["line"] == 56
    assert "does not remove this call" in " ".join(root.fix.steps)


def test_seed_cutlass_dispatch() -> None:
    root = _seed("dsv4_cutlass_dispatch.log")
    assert (root.category, root.library, root.extracted["api"]) == (
        "kernel_unsupported_dtype", "cutlass", "scaled_mm")
    assert root.extracted["op"] == "dispatch_scaled_mm"
    assert "#47988" in " ".join(root.fix.steps)


def test_seed_triton_e8m0() -> None:
    root = _seed("dsv4_triton_e8m0.log")
    assert (root.category, root.library) == ("kernel_unsupported_dtype", "triton")
    assert root.extracted["dtype"] == "float8_e8m0fnu"
    assert root.extracted["caller"] == "w8a8_triton_block_scaled_mm"


def test_seed_sglang_h200_workspace_oom() -> None:
    root = _seed_path(SGLANG_SAMPLE)
    assert (root.category, root.library) == ("oom_workspace_alloc", "flashinfer")
    values = root.extracted
    assert (values["requested_gib"], values["free_gib"], values["mem_fraction_static"]) == (
        1.34, 1.06, 0.944)
    assert values["fraction_max"] == 0.93 and values["fraction_cautious"] == 0.88
    assert dict(root.fix.flags) == {"--mem-fraction-static": "0.93"}
    assert "0.88" in " ".join(root.fix.steps)
    assert "fragmentation" not in values  # 1.06 + 0.21 GiB < 1.34 GiB: really missing
    # The related command runs as printed: the GPU's catalog id and the log's TP size.
    (plan,) = [command for command in root.related if command.startswith("servewise plan")]
    assert plan.endswith("--gpu NAME:8")  # the log does not name its GPU
    on_h200 = diagnose_text(SGLANG_SAMPLE.read_text(), gpu=load_gpu_catalog().find("H200"))
    assert on_h200.root_cause is not None
    (plan,) = [c for c in on_h200.root_cause.related if c.startswith("servewise plan")]
    assert plan.endswith("--gpu h200:8")
