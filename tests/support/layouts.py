"""Engine builds laid out as the real packages lay themselves out, from the committed fixtures.

Each distribution is written the way pip installs it: its files under site-packages
and a ``NAME-VERSION.dist-info`` with ``METADATA`` and ``RECORD``. :func:`install`
writes one into a folder; :func:`wheel` packs one into a wheel (with the helpers of
:mod:`support.zips`). The layouts follow the packages' own build files, cited per
layout in :data:`LAYOUTS`.
"""

from __future__ import annotations

import base64
import hashlib
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from support.paths import CUDA, SAMPLES
from support.zips import build_wheel


def fixture(name: str) -> bytes:
    """The bytes of a committed CUDA fixture."""
    return (CUDA / name).read_bytes()


@dataclass(frozen=True)
class Dist:
    """One distribution: name, version and files (path under site-packages → bytes)."""

    name: str
    version: str
    files: dict[str, bytes] = field(default_factory=dict)

    @property
    def dist_info(self) -> str:
        return f"{self.name.replace('-', '_')}-{self.version}.dist-info"

    def all_files(self) -> dict[str, bytes]:
        """The files plus METADATA and RECORD."""
        files = dict(self.files)
        files[f"{self.dist_info}/METADATA"] = (
            f"Metadata-Version: 2.1\nName: {self.name}\nVersion: {self.version}\n".encode()
        )
        lines = []
        for path, data in files.items():
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            lines.append(f"{path},sha256={digest.decode()},{len(data)}")
        lines.append(f"{self.dist_info}/RECORD,,")
        files[f"{self.dist_info}/RECORD"] = ("\n".join(lines) + "\n").encode()
        return files


def install(site: Path, *dists: Dist) -> Path:
    """Write ``dists`` into the site-packages folder ``site``."""
    for dist in dists:
        for path, data in dist.all_files().items():
            target = site / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
    return site


def wheel(folder: Path, dist: Dist) -> Path:
    """``dist`` as a wheel file in ``folder``."""
    name = f"{dist.name.replace('-', '_')}-{dist.version}-py3-none-manylinux_2_28_x86_64.whl"
    members = {path: (data, zipfile.ZIP_DEFLATED) for path, data in dist.all_files().items()}
    return build_wheel(folder / name, members)


def sample_vllm_files() -> dict[str, bytes]:
    """The good sample nightly's vllm files (its own dist-info left out)."""
    with zipfile.ZipFile(sorted(SAMPLES.glob("vllm-*dev77*.whl"))[0]) as archive:
        return {n: archive.read(n) for n in archive.namelist() if ".dist-info/" not in n}


def deep_gemm_standalone() -> Dist:
    """DeepGEMM installed on its own: ``deep_gemm/deep_gemm_cpp*.so`` (DeepGEMM's setup.py)."""
    return Dist("deep-gemm", "2.1.1", {
        "deep_gemm/__init__.py": b"__version__ = '2.1.1'\n",
        "deep_gemm/deep_gemm_cpp.cpython-312-x86_64-linux-gnu.so":
            fixture("libdispatch_deep_gemm_cpp.so"),
        "deep_gemm/include/deep_gemm/impls/sm120_fp8_fp4_gemm_1d1d.cuh": b"// sm120\n",
        "deep_gemm/include/deep_gemm/impls/sm90_fp8_gemm_1d2d.cuh": b"// sm90\n",
    })


def sgl_deep_gemm() -> Dist:
    """SGLang's DeepGEMM fork as sgl-deep-gemm 0.2.5 lays it out: ``deep_gemm/_C.so``, VERSION."""
    return Dist("sgl-deep-gemm", "0.2.5", {
        "deep_gemm/VERSION": b"0.2.5",
        "deep_gemm/__init__.py": b"# torch.ops.load_library(_C.so)\n",
        "deep_gemm/_C.so": fixture("libdispatch_with_sm120.so"),
    })


def sgl_kernel() -> Dist:
    """sgl-kernel: two builds of common_ops (sm90/, sm100/) and flash_ops (sgl-kernel CMake)."""
    return Dist("sglang-kernel", "0.4.10", {
        "sgl_kernel/__init__.py": b"",
        "sgl_kernel/sm90/common_ops.abi3.so": fixture("libsw_id_common_ops.so"),
        "sgl_kernel/sm100/common_ops.abi3.so": fixture("libsw_id_common_ops.so"),
        "sgl_kernel/flash_ops.abi3.so": fixture("libsw_sm90a.so"),
    })


def flashinfer_packages() -> tuple[Dist, Dist, Dist]:
    """flashinfer-python (JIT, no library of its own), flashinfer-cubin, flashinfer-jit-cache."""
    python = Dist("flashinfer-python", "0.7.2", {
        "flashinfer/__init__.py": b"__version__ = '0.7.2'\n",
        "flashinfer/data/include/flashinfer/attention/decode.cuh": b"// JIT source\n",
    })
    cubin = Dist("flashinfer-cubin", "0.6.13", {
        "flashinfer_cubin/__init__.py": b"",
        "flashinfer_cubin/cubins/fmha/trtllm/fmha_kernel_sm100f.cubin": fixture(
            "saxpy_sm100f.cubin"),
        "flashinfer_cubin/cubins/fmha/trtllm/fmha_kernel_sm120a.cubin": fixture(
            "saxpy_sm120a.cubin"),
    })
    jit_cache = Dist("flashinfer-jit-cache", "0.6.13", {
        "flashinfer_jit_cache/__init__.py": b"",
        "flashinfer_jit_cache/jit_cache/batch_decode/batch_decode.so": fixture(
            "libsw_id_flashinfer.so"),
    })
    return python, cubin, jit_cache


def mscclpp() -> Dist:
    """MSCCL++: Python bindings ``_mscclpp`` and the library ``lib/libmscclpp.so``."""
    return Dist("mscclpp", "0.7.0", {
        "mscclpp/__init__.py": b"from ._mscclpp import *\n",
        "mscclpp/_mscclpp.cpython-312-x86_64-linux-gnu.so": fixture("libsw_id_mscclpp_py.so"),
        "mscclpp/lib/libmscclpp.so": fixture("libsw_id_mscclpp.so"),
    })


def tensorrt_llm() -> Dist:
    """TensorRT-LLM's wheel: ``tensorrt_llm/libs/libtensorrt_llm.so`` (scripts/build_wheel.py)."""
    return Dist("tensorrt-llm", "1.2.1", {
        "tensorrt_llm/__init__.py": b"",
        "tensorrt_llm/version.py": b"__version__ = '1.2.1'\n",
        "tensorrt_llm/libs/libtensorrt_llm.so": fixture("libsw_id_trtllm.so"),
        "tensorrt_llm/libs/libth_common.so": fixture("libsw_sm90a.so"),
    })


def flash_attn() -> Dist:
    """Dao-AILab flash-attn: the extension module at the top level (its setup.py)."""
    return Dist("flash-attn", "2.8.3", {
        "flash_attn/__init__.py": b"__version__ = '2.8.3'\n",
        "flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so": fixture("libsw_id_flash_attn.so"),
    })


def nccl_wheel() -> Dist:
    """nvidia-nccl-cu13: ``nvidia/nccl/lib/libnccl.so.2``."""
    return Dist("nvidia-nccl-cu13", "2.27.3", {
        "nvidia/nccl/lib/libnccl.so.2": fixture("libsw_id_nccl.so"),
    })


def sglang_image(root: Path) -> Path:
    """An SGLang image's filesystem: sgl-kernel, FlashInfer's three packages, DeepGEMM, MSCCL++
    side by side in one dist-packages, and the system NCCL under /usr/lib."""
    site = root / "usr/local/lib/python3.12/dist-packages"
    install(site, Dist("sglang", "0.5.2", {"sglang/__init__.py": b""}), sgl_kernel(),
            *flashinfer_packages(), sgl_deep_gemm(), mscclpp())
    system = root / "usr/lib/x86_64-linux-gnu/libnccl.so.2"
    system.parent.mkdir(parents=True)
    system.write_bytes(fixture("libsw_id_nccl.so"))
    return root


def vllm_image(root: Path) -> Path:
    """A vLLM image's filesystem: the vllm package in dist-packages and NCCL's wheel."""
    site = root / "usr/local/lib/python3.12/dist-packages"
    install(site, Dist("vllm", "0.26.1rc1.dev77+ga6b593d2", sample_vllm_files()), nccl_wheel())
    return root
