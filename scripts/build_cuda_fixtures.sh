#!/usr/bin/env bash
# Rebuild servewise's committed CUDA test fixtures and the demo sample wheels.
#
#   tests/data/cuda/*                 small .so / .o / .cubin files + expected.json
#   src/servewise/samples/*.whl       two tiny "vLLM nightly" wheels (the seed story)
#   src/servewise/samples/expected.json
#
# Sources: tests/data/cuda/src/.  Needs nvcc >= 12.8 (for --compress-mode; written
# against nvcc 13.0), g++ and python3.  No GPU needed.  Run from anywhere:
#   make fixtures        (or)        bash scripts/build_cuda_fixtures.sh
#
# expected.json is written from what THIS SCRIPT asked nvcc for (targets, compress
# mode, number of .cu files), never by reading the binaries back.  The compress-mode
# knowledge below was measured with nvcc 13.0.88 (see tests/data/cuda/README.md):
#   none            -> nothing compressed
#   default/balance -> cubins stored raw, PTX zstd (entry flag 0x8000)
#   size            -> cubins and PTX zstd (0x8000)
#   speed           -> cubins stored raw, PTX LZ4 (0x2000)
#   speed + -Xfatbin -compress-all -> cubins and PTX LZ4 (0x2000)
#   -rdc=true objects: relocatable cubins in __nv_relfatbin are zstd in default mode.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

NVCC=${NVCC:-nvcc}
CXX=${CXX:-g++}
CC=${CC:-gcc}
PYTHON=${PYTHON:-python3}

OUT=tests/data/cuda
SRC=$OUT/src
SAMPLES=src/servewise/samples
WORK=$(mktemp -d "${TMPDIR:-/tmp}/sw-fixtures.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
MANIFEST=$WORK/manifest.tsv
: >"$MANIFEST"

command -v "$NVCC" >/dev/null || { echo "error: nvcc not found (set NVCC=...)" >&2; exit 1; }
NVCC_VERSION=$("$NVCC" --version | sed -n 's/^Cuda compilation tools, //p')
echo "nvcc: $(command -v "$NVCC")  ($NVCC_VERSION)"
echo "$("$NVCC" --version | tail -n 1)"
echo "g++:  $("$CXX" --version | head -n 1)"

mkdir -p "$OUT" "$SAMPLES"

run() {
    printf '+ %s\n' "$*"
    "$@"
}

# Host link flags shared by every CUDA library:
#   -nodlink        no device-link step: without it nvcc adds an nvlink "dlink" cubin
#                   container for the default arch (sm_75 in 13.0) to every .so.
#   -cudart shared  link libcudart.so.13 dynamically.
#   -z noseparate-code and -s keep files small; .nv_fatbin is an allocated section
#                   and survives stripping.
NVCC_SO=(-shared -nodlink -Xcompiler -fPIC -cudart shared
         -Xlinker -z,noseparate-code -Xlinker -s)
HOST_SO=(-std=c++17 -O2 -shared -fPIC -fvisibility=hidden -Wl,-z,noseparate-code -s)

# gencode TARGET... : sm_90a -> -gencode arch=compute_90a,code=sm_90a (SASS)
#                     compute_90 -> -gencode arch=compute_90,code=compute_90 (PTX)
gencode() {
    local t
    for t in "$@"; do
        case $t in
            sm_*) printf -- '-gencode\narch=compute_%s,code=sm_%s\n' "${t#sm_}" "${t#sm_}" ;;
            compute_*) printf -- '-gencode\narch=%s,code=%s\n' "$t" "$t" ;;
            *) echo "bad target $t" >&2; return 1 ;;
        esac
    done
}

# compression MODE TARGETS... -> "<scheme> <which entry kinds are compressed>"
compression() {
    local mode=$1; shift
    local has_ptx=no t
    for t in "$@"; do [[ $t == compute_* ]] && has_ptx=yes; done
    case $mode in
        none) echo "none -" ;;
        default|balance) [[ $has_ptx == yes ]] && echo "zstd ptx" || echo "none -" ;;
        size) [[ $has_ptx == yes ]] && echo "zstd sass,ptx" || echo "zstd sass" ;;
        speed) [[ $has_ptx == yes ]] && echo "lz4 ptx" || echo "none -" ;;
        speed-all) [[ $has_ptx == yes ]] && echo "lz4 sass,ptx" || echo "lz4 sass" ;;
        *) echo "bad mode $mode" >&2; return 1 ;;
    esac
}

mode_flags() {
    case $1 in
        speed-all) printf -- '--compress-mode=speed\n-Xfatbin\n-compress-all\n' ;;
        *) printf -- '--compress-mode=%s\n' "$1" ;;
    esac
}

# record FILE KIND "TARGETS" COMPRESSION COMPRESSED CONTAINERS SECTIONS NOTE
# (one tab-separated manifest line; the Python step turns it into expected.json).
# A ninth column carries $ID_FACTS when set: the identity flags the library was
# built with, "key=value;key=value" (soname, pyinit, ns, c_prefix, version).
record() {
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@" "${ID_FACTS:--}" >>"$MANIFEST"
}

# cuda_lib OUT MODE "TARGETS" NOTE SOURCE... : one fatbin container per .cu file.
cuda_lib() {
    local out=$1 mode=$2 targets=$3 note=$4; shift 4
    local -a gc mf
    mapfile -t gc < <(gencode $targets)
    mapfile -t mf < <(mode_flags "$mode")
    local objs=() src
    for src in "$@"; do
        if [[ $src == *.cu ]]; then objs+=("$src"); fi
    done
    run "$NVCC" "${NVCC_SO[@]}" "${gc[@]}" "${mf[@]}" -o "$out" "$@"
    local comp
    read -r -a comp < <(compression "$mode" $targets)
    record "$out" shared-library "$targets" "${comp[0]}" "${comp[1]}" "${#objs[@]}" \
        ".nv_fatbin=${#objs[@]}" "$note"
}

echo "== per-target shared libraries (saxpy.cu, --compress-mode=none)"
for t in sm_80 sm_86 sm_90 sm_90a sm_100a sm_100f sm_120 sm_120a sm_120f; do
    cuda_lib "$OUT/libsw_${t/_/}.so" none "$t" "one SASS target" "$SRC/saxpy.cu"
done

echo "== PTX only"
cuda_lib "$OUT/libsw_compute90_ptx.so" default "compute_90" \
    "PTX only (code=compute_90); default mode compresses PTX with zstd" "$SRC/saxpy.cu"

echo "== compress modes (sm_90a SASS + compute_90 PTX)"
cuda_lib "$OUT/libsw_sm90a_none.so" none "sm_90a compute_90" \
    "--compress-mode=none: nothing compressed" "$SRC/saxpy.cu"
cuda_lib "$OUT/libsw_sm90a_default.so" default "sm_90a compute_90" \
    "--compress-mode=default: cubin raw, PTX zstd" "$SRC/saxpy.cu"
cuda_lib "$OUT/libsw_sm90a_zstd.so" size "sm_90a compute_90" \
    "--compress-mode=size: cubin and PTX zstd (0x8000)" "$SRC/saxpy.cu"
cuda_lib "$OUT/libsw_sm90a_lz4ptx.so" speed "sm_90a compute_90" \
    "--compress-mode=speed: cubin raw, PTX LZ4 (0x2000)" "$SRC/saxpy.cu"
cuda_lib "$OUT/libsw_sm90a_lz4.so" speed-all "sm_90a compute_90" \
    "--compress-mode=speed -Xfatbin -compress-all: cubin and PTX LZ4 (0x2000)" "$SRC/saxpy.cu"

echo "== many entries in one container, several containers in one section"
cuda_lib "$OUT/libsw_multiarch.so" default "sm_80 sm_90a sm_100f sm_120f compute_120" \
    "one container, five entries" "$SRC/saxpy.cu"
cuda_lib "$OUT/libsw_two_sources.so" default "sm_90a sm_120a compute_90" \
    "two .cu files -> two containers in .nv_fatbin" "$SRC/saxpy.cu" "$SRC/reduce.cu"

echo "== SASS next to host sm100_ strings (like vllm 0.33 _C_stable_libtorch)"
cuda_lib "$OUT/libsw_sass_with_host_strings.so" none "sm_90a sm_100a" \
    "own SASS plus host strings sm100_*: not JIT-dispatch" \
    "$SRC/saxpy.cu" "$SRC/engine_host_strings.cpp"

echo "== relocatable device code"
RDC_TARGETS="sm_90a sm_120f"
mapfile -t GC < <(gencode $RDC_TARGETS)
run "$NVCC" -c -rdc=true -Xcompiler -fPIC "${GC[@]}" -o "$WORK/rdc.o" "$SRC/saxpy.cu"
# --strip-unneeded drops the tmpxft_<pid> file symbol, so rebuilds are identical.
run strip --strip-unneeded -o "$OUT/sw_rdc.o" "$WORK/rdc.o"
record "$OUT/sw_rdc.o" object "$RDC_TARGETS" zstd sass 1 "__nv_relfatbin=1" \
    "nvcc -c -rdc=true: cubins in __nv_relfatbin, zstd in default mode"
# Linking with -rdc needs the device link, so no -nodlink here: .nv_fatbin gets the
# linked (raw) cubins and __nv_relfatbin keeps the relocatable (zstd) ones.
run "$NVCC" -shared -rdc=true -Xcompiler -fPIC -cudart shared \
    -Xlinker -z,noseparate-code -Xlinker -s "${GC[@]}" -o "$OUT/libsw_rdc.so" "$SRC/saxpy.cu"
record "$OUT/libsw_rdc.so" shared-library "$RDC_TARGETS" zstd sass 2 \
    ".nv_fatbin=1,__nv_relfatbin=1" \
    "-rdc=true shared library: linked cubins (raw) in .nv_fatbin + relocatable (zstd) in __nv_relfatbin"

echo "== standalone cubins"
for t in sm_80 sm_90a sm_100f sm_120a sm_120f; do
    mapfile -t GC < <(gencode "$t")
    run "$NVCC" -cubin "${GC[@]}" -o "$OUT/saxpy_${t/_/}.cubin" "$SRC/saxpy.cu"
    record "$OUT/saxpy_${t/_/}.cubin" cubin "$t" null - null - "nvcc -cubin"
done

echo "== host library embedding a cubin as a byte array (TensorRT style)"
"$PYTHON" - "$OUT/saxpy_sm90a.cubin" "$WORK/embedded_cubin.c" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
name = "cubin_sw_saxpy_sm90a"
rows = [", ".join(f"0x{b:02x}" for b in data[i:i + 12]) for i in range(0, len(data), 12)]
body = ",\n    ".join(rows)
open(sys.argv[2], "w").write(
    "/* generated by scripts/build_cuda_fixtures.sh from saxpy_sm90a.cubin */\n"
    f"__attribute__((visibility(\"default\"))) unsigned char {name}[] = {{\n    {body}\n}};\n"
    f"__attribute__((visibility(\"default\"))) unsigned int {name}_len = {len(data)};\n"
)
PY
run "$CC" -O2 -shared -fPIC -fvisibility=hidden -Wl,-z,noseparate-code -s \
    -o "$OUT/libsw_embedded_cubin_sm90a.so" "$WORK/embedded_cubin.c"
record "$OUT/libsw_embedded_cubin_sm90a.so" embedded-cubin "sm_90a" null - 0 - \
    "cubin bytes in .data, no fatbin (cuobjdump sees nothing)"

echo "== host-only DeepGEMM-like JIT dispatchers"
run "$CXX" "${HOST_SO[@]}" -DSW_WITH_SM120 '-DSW_DG_HASH="a6b593d2"' \
    -o "$OUT/libdispatch_with_sm120.so" "$SRC/deep_gemm_dispatch.cpp"
record "$OUT/libdispatch_with_sm120.so" host-only "" null - 0 - \
    "DeepGEMM a6b593d2 (deepseek-ai upstream): sm90_/sm100_/sm120_ names, arch_major == 12"
run "$CXX" "${HOST_SO[@]}" '-DSW_DG_HASH="f5a76426"' \
    -o "$OUT/libdispatch_without_sm120.so" "$SRC/deep_gemm_dispatch.cpp"
record "$OUT/libdispatch_without_sm120.so" host-only "" null - 0 - \
    "DeepGEMM f5a76426 (vllm-project fork): sm90_/sm100_ only, no arch_major == 12"

echo "== libraries that say who they are (identity by SONAME, PyInit_, namespaces, versions)"
# identity_lib OUT MODE "TARGETS" NOTE "FACTS" EXTRA... : saxpy.cu + identity_lib.cpp.
identity_lib() {
    local out=$1 mode=$2 targets=$3 note=$4 facts=$5; shift 5
    ID_FACTS=$facts cuda_lib "$out" "$mode" "$targets" "$note" \
        "$SRC/saxpy.cu" "$SRC/identity_lib.cpp" "$@"
}
identity_lib "$OUT/libsw_id_nccl.so" default "sm_80 sm_90 sm_100 sm_120 compute_120" \
    "NCCL-like: SONAME libnccl.so.2, ncclX exports, NCCL version string" \
    "soname=libnccl.so.2;c_prefix=nccl;version=NCCL version 2.27.3+cuda13.0" \
    -DSW_C_PREFIX=nccl '-DSW_VERSION="NCCL version 2.27.3+cuda13.0"' \
    -Xlinker -soname=libnccl.so.2
identity_lib "$OUT/libsw_id_mscclpp.so" none "sm_90 sm_100a sm_120a" \
    "MSCCL++-like: SONAME libmscclpp.so.0, exports in namespace mscclpp" \
    "soname=libmscclpp.so.0;ns=mscclpp" \
    -DSW_NS=mscclpp -Xlinker -soname=libmscclpp.so.0
identity_lib "$OUT/libsw_id_trtllm.so" none "sm_90a sm_100a sm_120a" \
    "TensorRT-LLM-like core: SONAME libtensorrt_llm.so, namespace tensorrt_llm" \
    "soname=libtensorrt_llm.so;ns=tensorrt_llm" \
    -DSW_NS=tensorrt_llm -Xlinker -soname=libtensorrt_llm.so
identity_lib "$OUT/libsw_id_common_ops.so" size "sm_90a sm_100a sm_120a" \
    "sgl-kernel-like common_ops: PyInit_common_ops, embeds namespace mscclpp" \
    "pyinit=common_ops;ns=sgl_kernel,mscclpp" \
    -DSW_PYINIT=common_ops -DSW_NS=sgl_kernel -DSW_NS2=mscclpp
identity_lib "$OUT/libsw_id_flashinfer.so" none "sm_90a sm_100a" \
    "FlashInfer AOT-like module: namespace flashinfer, no PyInit_ (a torch library)" \
    "ns=flashinfer" \
    -DSW_NS=flashinfer
identity_lib "$OUT/libsw_id_flash_attn.so" default "sm_80 sm_90 compute_90" \
    "flash-attn-like: PyInit_flash_attn_2_cuda, namespace flash" \
    "pyinit=flash_attn_2_cuda;ns=flash" \
    -DSW_PYINIT=flash_attn_2_cuda -DSW_NS=flash
run "$CXX" "${HOST_SO[@]}" -DSW_PYINIT=_mscclpp -o "$OUT/libsw_id_mscclpp_py.so" \
    "$SRC/identity_lib.cpp"
ID_FACTS="pyinit=_mscclpp" record "$OUT/libsw_id_mscclpp_py.so" host-library "" null - 0 - \
    "MSCCL++-like Python bindings: PyInit__mscclpp only"
run "$CXX" "${HOST_SO[@]}" -DSW_WITH_SM120 '-DSW_DG_HASH="a6b593d2"' -DSW_PYINIT=deep_gemm_cpp \
    -o "$OUT/libdispatch_deep_gemm_cpp.so" "$SRC/deep_gemm_dispatch.cpp"
ID_FACTS="pyinit=deep_gemm_cpp;ns=deep_gemm" record "$OUT/libdispatch_deep_gemm_cpp.so" \
    host-only "" null - 0 - \
    "standalone DeepGEMM layout (deep_gemm_cpp): a6b593d2 dispatcher plus PyInit_deep_gemm_cpp"

echo "== demo sample wheels (the seed story)"
SW=$WORK/samples
mkdir -p "$SW/good" "$SW/bad"
sample_lib() {  # sample_lib OUT "TARGETS" SOURCE
    local out=$1 targets=$2 src=$3
    local -a gc
    mapfile -t gc < <(gencode $targets)
    run "$NVCC" "${NVCC_SO[@]}" "${gc[@]}" --compress-mode=default -o "$out" "$src"
}
sample_lib "$SW/_C.abi3.so" "sm_80 sm_90a sm_100f sm_120f compute_120" "$SRC/saxpy.cu"
sample_lib "$SW/_moe_C.abi3.so" "sm_90a sm_100f sm_120f" "$SRC/reduce.cu"
sample_lib "$SW/_vllm_fa2_C.abi3.so" "sm_80 compute_80" "$SRC/saxpy.cu"
sample_lib "$SW/_vllm_fa3_C.abi3.so" "sm_90a" "$SRC/saxpy.cu"
cp "$OUT/libdispatch_with_sm120.so" "$SW/good/deep_gemm_C.abi3.so"
cp "$OUT/libdispatch_without_sm120.so" "$SW/bad/deep_gemm_C.abi3.so"

echo "== expected.json, sample wheels, sizes"
"$PYTHON" - "$MANIFEST" "$OUT" "$SRC" "$SW" "$SAMPLES" "$NVCC_VERSION" <<'PY'
import base64
import hashlib
import json
import re
import sys
import zipfile
from pathlib import Path

manifest, out, src, sw, samples, nvcc_version = sys.argv[1:]
out, src, sw, samples = Path(out), Path(src), Path(sw), Path(samples)

# -- JIT-dispatch names, read from the dispatcher's SOURCE (not from the binary) ----
def dispatch_names(with_sm120: bool) -> dict[str, list[str]]:
    text = (src / "deep_gemm_dispatch.cpp").read_text()
    table = text.split("deep_gemm_kernel_names[] = {", 1)[1].split("nullptr", 1)[0]
    names: list[str] = []
    in_sm120 = False
    for line in table.splitlines():
        line = line.strip()
        if line.startswith("#ifdef SW_WITH_SM120"):
            in_sm120 = True
        elif line.startswith("#endif"):
            in_sm120 = False
        elif line.startswith('"') and (with_sm120 or not in_sm120):
            names.append(line.strip('",'))
    by_arch: dict[str, list[str]] = {}
    for n in names:
        m = re.match(r"sm(\d+)_", n)
        assert m, n
        by_arch.setdefault(f"sm_{m.group(1)}", []).append(n)
    return {k: sorted(v) for k, v in sorted(by_arch.items(), key=lambda kv: int(kv[0][3:]))}

ENGINE_HOST_NAMES = {"sm_100": ["sm100_cutlass_moe_mm", "sm100_cutlass_scaled_mm_fp8"]}

def arch_key(a: str) -> tuple[int, str]:
    m = re.match(r"(?:sm|compute)_(\d+)([a-z]?)", a)
    assert m, a
    return int(m.group(1)), m.group(2)

expected: dict[str, dict] = {}
for line in Path(manifest).read_text().splitlines():
    path, kind, targets, comp, compressed, containers, sections, note, facts = line.split("\t")
    name = Path(path).name
    t = targets.split()
    entry: dict = {
        "kind": kind,
        "sass": sorted((x for x in t if x.startswith("sm_")), key=arch_key),
        "ptx": sorted((x for x in t if x.startswith("compute_")), key=arch_key),
        "compression": None if comp == "null" else comp,
        "compressed": [] if compressed == "-" else compressed.split(","),
        "containers": None if containers == "null" else int(containers),
        "sections": {} if sections == "-" else {
            k: int(v) for k, v in (kv.split("=") for kv in sections.split(","))},
        "jit_dispatch": None,
        "jit_names": None,
        "cuobjdump_visible": kind in ("shared-library", "object", "cubin"),
        "note": note,
    }
    if facts != "-":
        pairs = dict(item.split("=", 1) for item in facts.split(";"))
        entry["identity"] = {
            "soname": pairs.get("soname"),
            "python_modules": [pairs["pyinit"]] if "pyinit" in pairs else [],
            "namespaces": pairs["ns"].split(",") if "ns" in pairs else [],
            "c_prefix": pairs.get("c_prefix"),
            "version_string": pairs.get("version"),
        }
    if name.startswith("libdispatch_"):
        names = dispatch_names(with_sm120=name != "libdispatch_without_sm120.so")
        entry["jit_dispatch"] = {k: len(v) for k, v in names.items()}
        entry["jit_names"] = names
        entry["version_string"] = (
            "DeepGEMM f5a76426" if "without_sm120" in name else "DeepGEMM a6b593d2")
    if name == "libsw_sass_with_host_strings.so":
        entry["host_strings"] = ENGINE_HOST_NAMES
    expected[name] = entry

doc = {
    "_comment": (
        "Written by scripts/build_cuda_fixtures.sh from the flags it passed, not by reading "
        "the binaries. sass = SASS cubins (servewise spelling, keeps a/f), ptx = PTX "
        "(compute_NN). compression: scheme of the compressed entries ('none' = nothing "
        "compressed, null = no fatbin); compressed: which entry kinds are compressed. "
        "containers: fatbin containers over .nv_fatbin + __nv_relfatbin (sections splits "
        "them). jit_dispatch: distinct smNN_* kernel names per arch in a host-only "
        "dispatcher (jit_names lists them)."),
    "nvcc": nvcc_version,
    "files": dict(sorted(expected.items())),
}
(out / "expected.json").write_text(json.dumps(doc, indent=2) + "\n")

# -- sample wheels -------------------------------------------------------------------
def header(name: str) -> bytes:
    return (src / "deep_gemm_impls" / name).read_bytes()

CORE = {
    "vllm/_C.abi3.so": (sw / "_C.abi3.so").read_bytes(),
    "vllm/_moe_C.abi3.so": (sw / "_moe_C.abi3.so").read_bytes(),
    "vllm/vllm_flash_attn/_vllm_fa2_C.abi3.so": (sw / "_vllm_fa2_C.abi3.so").read_bytes(),
    "vllm/vllm_flash_attn/_vllm_fa3_C.abi3.so": (sw / "_vllm_fa3_C.abi3.so").read_bytes(),
}
IMPLS = "vllm/third_party/deep_gemm/include/deep_gemm/impls/"

WHEELS = {
    "good": ("0.26.1rc1.dev77+ga6b593d2", "a6b593d2", (2025, 7, 29, 0, 0, 0), True),
    "bad": ("0.26.1rc1.dev181+gf5a76426", "f5a76426", (2025, 7, 31, 0, 0, 0), False),
}

def record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + digest.decode()

sample_expect: dict[str, dict] = {}
for which, (version, dg_hash, stamp, with_sm120) in WHEELS.items():
    files: dict[str, bytes] = {
        "vllm/__init__.py": (
            f'"""servewise demo sample: a stand-in for a vLLM nightly (not vLLM)."""\n'
            f'__version__ = "{version}"\n').encode(),
        **CORE,
        "vllm/third_party/deep_gemm/__init__.py": (
            f'"""Bundled DeepGEMM {dg_hash} (servewise demo stand-in)."""\n').encode(),
        "vllm/third_party/deep_gemm/_C.abi3.so": (sw / which / "deep_gemm_C.abi3.so").read_bytes(),
        IMPLS + "sm90_fp8_gemm_1d2d.cuh": header("sm90_fp8_gemm_1d2d.cuh"),
        IMPLS + "sm100_fp8_fp4_gemm_1d1d.cuh": header("sm100_fp8_fp4_gemm_1d1d.cuh"),
    }
    if with_sm120:
        files[IMPLS + "sm120_fp8_fp4_gemm_1d1d.cuh"] = header("sm120_fp8_fp4_gemm_1d1d.cuh")
    dist = f"vllm-{version}.dist-info"
    files[f"{dist}/METADATA"] = (
        "Metadata-Version: 2.1\nName: vllm\n"
        f"Version: {version}\n"
        "Summary: servewise demo sample standing in for a vLLM nightly wheel (tiny, not vLLM)\n"
        "Requires-Python: >=3.9\n").encode()
    files[f"{dist}/WHEEL"] = (
        "Wheel-Version: 1.0\nGenerator: servewise scripts/build_cuda_fixtures.sh\n"
        "Root-Is-Purelib: false\nTag: cp38-abi3-linux_x86_64\n").encode()
    record_lines = [f"{n},{record_hash(d)},{len(d)}" for n, d in files.items()]
    record_lines.append(f"{dist}/RECORD,,")
    files[f"{dist}/RECORD"] = ("\n".join(record_lines) + "\n").encode()

    wheel = samples / f"vllm-{version}-cp38-abi3-linux_x86_64.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for n, d in files.items():
            info = zipfile.ZipInfo(n, date_time=stamp)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (0o100755 if n.endswith(".so") else 0o100644) << 16
            zf.writestr(info, d, compresslevel=9)

    dg = dispatch_names(with_sm120)
    sample_expect[wheel.name] = {
        "story": ("good nightly 07-29: bundled DeepGEMM a6b593d2 keeps sm120 kernels"
                  if with_sm120 else
                  "bad nightly 07-31: bundled DeepGEMM fork f5a76426 lost sm120"),
        "members": {
            "vllm/_C.abi3.so": {"sass": ["sm_80", "sm_90a", "sm_100f", "sm_120f"],
                                "ptx": ["compute_120"], "compression": "zstd",
                                "jit_dispatch": None},
            "vllm/_moe_C.abi3.so": {"sass": ["sm_90a", "sm_100f", "sm_120f"], "ptx": [],
                                    "compression": "none", "jit_dispatch": None},
            "vllm/vllm_flash_attn/_vllm_fa2_C.abi3.so": {
                "sass": ["sm_80"], "ptx": ["compute_80"], "compression": "zstd",
                "jit_dispatch": None},
            "vllm/vllm_flash_attn/_vllm_fa3_C.abi3.so": {
                "sass": ["sm_90a"], "ptx": [], "compression": "none", "jit_dispatch": None},
            "vllm/third_party/deep_gemm/_C.abi3.so": {
                "sass": [], "ptx": [], "compression": None,
                "jit_dispatch": {k: len(v) for k, v in dg.items()}, "jit_names": dg,
                "version_string": f"DeepGEMM {dg_hash}"},
        },
        "deep_gemm_headers": sorted(n.rsplit("/", 1)[1] for n in files if n.endswith(".cuh")),
    }
(samples / "expected.json").write_text(json.dumps(
    {"_comment": "Written by scripts/build_cuda_fixtures.sh from its build flags.",
     "nvcc": nvcc_version, "wheels": sample_expect}, indent=2) + "\n")

# -- sizes ---------------------------------------------------------------------------
total = 0
for name in sorted(expected) + ["expected.json"]:
    size = (out / name).stat().st_size
    total += size
    print(f"  {size:8d}  {out / name}")
print(f"  {total:8d}  total tests/data/cuda (without src/)")
for whl in sorted(samples.glob("*.whl")):
    print(f"  {whl.stat().st_size:8d}  {whl}")
if total > 2 * 1024 * 1024:
    sys.exit(f"fixtures total {total} bytes > 2 MiB")
PY
echo "done."
