"""``--gpu NAME[:COUNT]``: one parser, one type for every command."""

from __future__ import annotations

import pytest

from servewise.errors import UsageError
from servewise.knowledge.gpus import parse_gpu_spec, parse_size, split_gpu_count


def test_name_and_count() -> None:
    spec = parse_gpu_spec("h200:8")
    assert spec.count == 8 and spec.gpu is not None and spec.gpu.id == "h200"
    assert spec.memory_source in ("driver", "vendor")
    assert parse_gpu_spec("NVIDIA H200").count == 1


@pytest.mark.parametrize("text", ["h200:0", "h200:-2", "h200:two", ":4"])
def test_bad_counts(text: str) -> None:
    with pytest.raises(UsageError) as caught:
        split_gpu_count(text)
    assert "NAME:COUNT" in (caught.value.hint or "")


def test_user_memory_and_unknown_gpu() -> None:
    spec = parse_gpu_spec("gaudi3:8", memory="192GB", capability="9.4")
    assert spec.gpu is None and spec.memory_bytes == 192 * 10**9 and spec.memory_source == "user"
    assert str(spec.compute_capability) == "9.4"
    with pytest.raises(UsageError):
        parse_gpu_spec("gaudi3:8")


def test_sizes() -> None:
    assert parse_size("97887MiB") == 97887 * 2**20
    assert parse_size("96GB") == 96 * 10**9
    assert parse_size("1.5") == int(1.5 * 2**30)
    assert parse_size("1.5TiB") == int(1.5 * 2**40)  # a CPU pool or a GB200 node's memory
    assert parse_size("2TB") == 2 * 10**12
    with pytest.raises(UsageError):
        parse_size("lots")
    with pytest.raises(UsageError, match="64 TiB"):
        parse_size("65TiB")


def test_cpu_needs_its_pool() -> None:
    with pytest.raises(UsageError):
        parse_gpu_spec("cpu")
    assert parse_gpu_spec("cpu:1", memory="4GiB").is_cpu
