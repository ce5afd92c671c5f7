"""The device a plan is for: a catalog GPU, a GPU the user describes, or vLLM's CPU backend.

Memory is the figure the engine will see. The catalog holds the vendor's figure (GB, 10^9
bytes), which drivers exceed by several percent (an H100 80GB reports 79.19 GiB); where a
real log gives the driver's figure the catalog keeps it too and the plan prefers it. A user
may always give the memory (``--gpu-memory 95.59GiB``) and the compute capability.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from servewise.errors import UsageError

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(gib|gb|mib|mb|b)?\s*$", re.IGNORECASE)
_UNITS = {"gib": 2**30, "gb": 10**9, "mib": 2**20, "mb": 10**6, "b": 1, None: 2**30}


def parse_size(text: str, what: str = "memory") -> int:
    """``96GB`` → 96·10⁹ bytes, ``95.59GiB`` → bytes, a bare number is GiB."""
    match = _SIZE.match(text)
    if match is None:
        raise UsageError(
            f"cannot read {what} {text!r}",
            hint="give a size such as 95.59GiB, 96GB, 4096MiB or a number of bytes with B",
            found=text,
        )
    unit = match.group(2).lower() if match.group(2) else None
    return int(float(match.group(1)) * _UNITS[unit])


@dataclass(frozen=True)
class Device:
    """One accelerator (or the CPU backend's memory node) as the engine sees it."""

    name: str
    memory_bytes: int
    memory_source: str
    """``driver`` (a figure a real log reported), ``vendor`` (the catalog's GB) or ``user``."""
    platform: str = "cuda"
    """``cuda`` or ``cpu`` (vLLM's CPU backend)."""
    compute_capability: tuple[int, int] | None = None
    gpu_id: str | None = None
    amx: bool = False
    """CPU backend: whether the CPU has AMX tiles (vLLM's CPU MLA block-size rule)."""

    @property
    def is_cpu(self) -> bool:
        """Whether this is vLLM's CPU backend."""
        return self.platform == "cpu"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data."""
        cc = self.compute_capability
        return {
            "name": self.name,
            "gpu_id": self.gpu_id,
            "platform": self.platform,
            "memory_bytes": self.memory_bytes,
            "memory_source": self.memory_source,
            "compute_capability": f"{cc[0]}.{cc[1]}" if cc else None,
        }


def parse_gpu_arg(text: str) -> tuple[str, int]:
    """``NAME:COUNT`` (COUNT GPUs per node; default 1)."""
    name, _, count = text.rpartition(":") if ":" in text else (text, "", "1")
    if not name:
        name, count = text, "1"
    if not count.isdigit() or int(count) < 1:
        raise UsageError(
            f"cannot read --gpu {text!r}",
            hint="give NAME:COUNT, e.g. h200:8 or rtx-pro-6000:2 (COUNT per node)",
            found=text,
        )
    return name.strip(), int(count)


def find_device(name: str, *, memory: str | None = None, capability: str | None = None
                ) -> Device:
    """The device called ``name`` (catalog, or ``cpu``); ``memory`` overrides its size.

    A name the catalog does not know is accepted when ``memory`` is given.
    """
    cc: tuple[int, int] | None = None
    if capability:
        match = re.fullmatch(r"(\d+)\.(\d+)", capability.strip())
        if match is None:
            raise UsageError(f"cannot read compute capability {capability!r}",
                             hint="give MAJOR.MINOR, e.g. 12.0", found=capability)
        cc = (int(match.group(1)), int(match.group(2)))
    if name.strip().lower() == "cpu":
        if memory is None:
            raise UsageError("the CPU backend needs its KV cache size",
                             hint="give --kv-cache-memory (VLLM_CPU_KVCACHE_SPACE or "
                             "--kv-cache-memory-bytes) or --gpu-memory")
        return Device("cpu", parse_size(memory), "user", platform="cpu", amx=_has_amx())
    from servewise.knowledge.gpus import load_gpu_catalog

    catalog = load_gpu_catalog()
    gpu = catalog.get(name)
    if gpu is None:
        if memory is None:
            catalog.find(name)  # raises, naming close matches
        assert memory is not None
        return Device(name, parse_size(memory), "user", compute_capability=cc)
    size, source = gpu.engine_memory
    if memory is not None:
        size, source = parse_size(memory), "user"
    return Device(gpu.name, size, source, compute_capability=cc or (gpu.cc.major, gpu.cc.minor),
                  gpu_id=gpu.id)


def _has_amx() -> bool:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            return " amx_tile" in handle.read()
    except OSError:
        return False
