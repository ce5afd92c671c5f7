"""Where the committed test inputs live, and what their build scripts say they hold."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CUDA = ROOT / "tests" / "data" / "cuda"
SAMPLES = ROOT / "src" / "servewise" / "samples"
GOOD_NIGHTLY = SAMPLES / "vllm-0.26.1rc1.dev77+ga6b593d2-cp38-abi3-linux_x86_64.whl"
BAD_NIGHTLY = SAMPLES / "vllm-0.26.1rc1.dev181+gf5a76426-cp38-abi3-linux_x86_64.whl"


def cuda_expected() -> dict[str, dict[str, Any]]:
    """Per CUDA fixture, what ``scripts/build_cuda_fixtures.sh`` put in it."""
    files: dict[str, dict[str, Any]] = json.loads((CUDA / "expected.json").read_text())["files"]
    return files


def sample_expected() -> dict[str, dict[str, Any]]:
    """Per sample wheel, what each member holds."""
    wheels: dict[str, dict[str, Any]] = json.loads(
        (SAMPLES / "expected.json").read_text()
    )["wheels"]
    return wheels


def cuda_fixtures(kinds: tuple[str, ...]) -> list[tuple[str, dict[str, Any]]]:
    """Committed CUDA fixtures of ``kinds`` (``cubin``, ``shared-library``, ...), with facts."""
    return [
        (name, facts)
        for name, facts in sorted(cuda_expected().items())
        if facts.get("kind") in kinds and (CUDA / name).is_file()
    ]
