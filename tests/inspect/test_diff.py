"""diff_builds: the seed's two nightlies, pairing across sources and renames, exit codes."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

from servewise.inspect.diff import diff_builds, engine_version
from servewise.inspect.scan import scan_build
from servewise.knowledge.gpus import GpuCatalog
from support import layouts
from support.layouts import Dist, install
from support.paths import BAD_NIGHTLY as BAD
from support.paths import CUDA
from support.paths import GOOD_NIGHTLY as GOOD


def test_the_seed_nightlies(catalog: GpuCatalog) -> None:
    diff = diff_builds(scan_build(str(GOOD)), scan_build(str(BAD)))
    assert diff.counts() == {"added": 0, "removed": 0, "changed": 1, "unchanged": 4}
    (changed,) = [c for c in diff.libraries if c.status == "changed"]
    assert changed.library_id == "deep_gemm"
    assert changed.jit_dispatch.lost == ("sm_120", "sm_120f")
    assert changed.jit_dispatch.gained == ()
    assert changed.sass.a == changed.sass.b == ()
    assert changed.gpu_code_changed and changed.coverage_changed
    assert diff.coverage_changed and diff.exit_code == 1
    assert diff.packages == (
        ("vllm", "0.26.1rc1.dev77+ga6b593d2", "0.26.1rc1.dev181+gf5a76426"),)
    assert diff.engine_a is not None and diff.engine_a.reading.commit == "a6b593d2"
    assert diff.engine_b is not None and diff.engine_b.reading.commit == "f5a76426"
    # For one GPU the question narrows: the verdict on sm_120 changed, on Hopper it did not.
    on_blackwell = diff_builds(scan_build(str(GOOD)), scan_build(str(BAD)),
                               gpu=catalog.find("rtx-pro-6000"))
    assert on_blackwell.exit_code == 1
    assert [c.verdicts for c in on_blackwell.libraries if c.verdict_changed] == [
        ("jit-dispatch", "missing")]
    on_hopper = diff_builds(scan_build(str(GOOD)), scan_build(str(BAD)),
                            gpu=catalog.find("h200"))
    assert on_hopper.exit_code == 0 and on_hopper.verdicts_changed is False


def test_a_build_against_itself_and_against_its_own_files(tmp_path: Path) -> None:
    wheel = scan_build(str(GOOD))
    same = diff_builds(wheel, scan_build(str(GOOD)))
    assert same.exit_code == 0 and same.counts()["unchanged"] == 5 and not same.packages
    with zipfile.ZipFile(GOOD) as archive:
        archive.extractall(tmp_path / "site")
    folder = diff_builds(wheel, scan_build(str(tmp_path / "site")))
    assert folder.exit_code == 0
    assert all(not c.renamed and c.status == "unchanged" for c in folder.libraries)


def test_a_wheel_pairs_with_an_image_layout(tmp_path: Path) -> None:
    image = scan_build(str(layouts.vllm_image(tmp_path / "image")))
    diff = diff_builds(scan_build(str(GOOD)), image)
    added = [c for c in diff.libraries if c.status == "added"]
    assert [c.library_id for c in added] == ["nccl"]  # the image adds NCCL's wheel
    assert all(c.status == "unchanged" for c in diff.libraries if c.status != "added")
    assert diff.exit_code == 1  # a library with GPU code came in
    assert ("nvidia-nccl-cu13", None, "2.27.3") in diff.packages


def test_renamed_and_reinterpreted_libraries_are_paired(tmp_path: Path) -> None:
    files = layouts.sample_vllm_files()
    old = {**files}
    new = {k.replace("_C.abi3.so", "_C_stable_libtorch.abi3.so") if k == "vllm/_C.abi3.so"
           else k.replace("_moe_C.abi3.so", "_moe_C.cpython-312-x86_64-linux-gnu.so"): v
           for k, v in files.items()}
    install(tmp_path / "a", Dist("vllm", "0.32.0", old))
    install(tmp_path / "b", Dist("vllm", "0.33.0", new))
    diff = diff_builds(scan_build(str(tmp_path / "a")), scan_build(str(tmp_path / "b")))
    renamed = {c.a.path: c.b.path for c in diff.libraries if c.renamed and c.a and c.b}
    assert renamed == {
        "vllm/_C.abi3.so": "vllm/_C_stable_libtorch.abi3.so",
        "vllm/_moe_C.abi3.so": "vllm/_moe_C.cpython-312-x86_64-linux-gnu.so",
    }
    assert diff.counts()["added"] == diff.counts()["removed"] == 0
    assert diff.exit_code == 0  # same GPU code under new names
    assert diff.packages == (("vllm", "0.32.0", "0.33.0"),)


def test_added_host_only_libraries_do_not_change_coverage(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    shutil.copy(CUDA / "libsw_sm90a.so", site / "libsw_sm90a.so")
    before = scan_build(str(site))
    shutil.copy(CUDA / "libsw_id_mscclpp_py.so", site / "_bindings.so")
    after = scan_build(str(site))
    diff = diff_builds(before, after)
    assert [c.status for c in diff.libraries] == ["added", "unchanged"]
    assert diff.exit_code == 0
    shutil.copy(CUDA / "libsw_sm120a.so", site / "libsw_sm120a.so")
    diff = diff_builds(before, scan_build(str(site)))
    assert diff.exit_code == 1
    assert diff.to_dict()["summary"]["archs_gained"] == ["sm_120a"]


def test_provenance_changes_are_reported(tmp_path: Path) -> None:
    nccl = (CUDA / "libsw_id_nccl.so").read_bytes()
    newer = nccl.replace(b"NCCL version 2.27.3+cuda13.0", b"NCCL version 2.28.1+cuda13.0")
    assert len(newer) == len(nccl) and newer != nccl
    for name, data in (("a", nccl), ("b", newer)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "libnccl.so.2").write_bytes(data)
    diff = diff_builds(scan_build(str(tmp_path / "a")), scan_build(str(tmp_path / "b")))
    (change,) = diff.libraries
    assert change.status == "changed" and not change.gpu_code_changed
    assert change.provenance == {"library_version": ("2.27.3+cuda13.0", "2.28.1+cuda13.0")}
    assert diff.exit_code == 0  # same archs: a version bump alone is no coverage change


def test_engine_version_prefers_the_engine_package(tmp_path: Path) -> None:
    site = layouts.sglang_image(tmp_path / "image")
    found = engine_version(scan_build(str(site)))
    assert found is not None
    assert (found.engine, found.package, found.version) == ("sglang", "sglang", "0.5.2")
    assert engine_version(scan_build(str(CUDA / "libsw_sm90a.so"))) is None
