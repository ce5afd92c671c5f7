"""scan_build: sources, provenance, the store, headers, and agreement with cuobjdump."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import pytest

from servewise.errors import ArchiveLimitError, SourceError
from servewise.inspect import scan as scan_module
from servewise.inspect.scan import ScanProgress, scan_build
from servewise.sources import Unit
from servewise.store import Store
from support.cuobjdump import find_cuobjdump, list_archs, normalise_for_cuobjdump
from support.paths import CUDA, GOOD_NIGHTLY, SAMPLES, cuda_expected, sample_expected
from support.zips import build_wheel, patch_sizes

EXPECTED = cuda_expected()
SAMPLE_EXPECTED = sample_expected()


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_fixture_lists_what_was_built(name: str) -> None:
    report = scan_build(str(CUDA / name))
    (library,) = report.libraries
    expected = EXPECTED[name]
    assert set(library.scan.sass) == set(expected["sass"])
    assert set(library.scan.ptx) == set(expected["ptx"])
    if expected.get("jit_dispatch"):
        # Every dispatch name the source defines is found, for exactly the archs it names.
        plain = {a: n for a, n in library.dispatch.items() if not a.endswith(("a", "f"))}
        assert set(plain) == set(expected["jit_dispatch"])
        for arch, names in expected["jit_names"].items():
            assert set(names) <= set(library.dispatch[arch])


@pytest.mark.skipif(find_cuobjdump() is None, reason="cuobjdump is not installed")
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_same_archs_as_cuobjdump(name: str) -> None:
    elf, ptx = list_archs(CUDA / name)
    (library,) = scan_build(str(CUDA / name)).libraries
    # cuobjdump does not look into byte arrays in host data; servewise does (compared above).
    seen = [e for e in library.scan.entries if e.origin != "embedded-cubin"]
    assert {normalise_for_cuobjdump(e.arch) for e in seen if e.kind == "sass"} == elf
    assert {normalise_for_cuobjdump(e.arch) for e in seen if e.kind == "ptx"} == ptx


@pytest.mark.parametrize("wheel", sorted(SAMPLE_EXPECTED))
def test_sample_wheels(wheel: str) -> None:
    report = scan_build(str(SAMPLES / wheel))
    assert report.source_kind == "wheel"
    members = SAMPLE_EXPECTED[wheel]["members"]
    assert {lib.path for lib in report.libraries} == set(members)
    for library in report.libraries:
        expected = members[library.path]
        assert set(library.scan.sass) == set(expected["sass"])
        assert set(library.scan.ptx) == set(expected["ptx"])
        assert library.provenance.package == "vllm"
        assert library.provenance.package_version and "dev" in library.provenance.package_version
        if expected["jit_dispatch"]:
            for arch, names in expected["jit_names"].items():
                assert set(names) <= set(library.scan.dispatch[arch])
            assert ("sm_120" in library.dispatch) == ("sm_120" in expected["jit_dispatch"])
            assert library.provenance.library_id == "deep_gemm"
            # Shipped impls/smNNN_*.cuh headers count as dispatch evidence.
            assert library.headers
            assert set(library.headers) <= set(expected["jit_dispatch"])


def test_folder_and_wheel_agree(tmp_path: Path) -> None:
    wheel = SAMPLES / sorted(SAMPLE_EXPECTED)[0]
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(tmp_path / "site")
    from_wheel = scan_build(str(wheel))
    from_folder = scan_build(str(tmp_path / "site"))
    assert [(lib.path, lib.scan.sass, lib.scan.ptx, lib.dispatch, lib.provenance)
            for lib in from_wheel.libraries] == [
        (lib.path, lib.scan.sass, lib.scan.ptx, lib.dispatch, lib.provenance)
        for lib in from_folder.libraries
    ]


def test_virtualenv_paths_are_site_packages_relative(tmp_path: Path) -> None:
    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages" / "vllm"
    site.mkdir(parents=True)
    (tmp_path / "venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    shutil.copy(CUDA / "libsw_sm90a.so", site / "_C.abi3.so")
    report = scan_build(str(tmp_path / "venv"))
    assert [lib.path for lib in report.libraries] == ["vllm/_C.abi3.so"]
    assert report.libraries[0].provenance.library_id is not None


def test_second_scan_comes_from_the_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wheel = SAMPLES / sorted(SAMPLE_EXPECTED)[0]
    with Store(tmp_path / "s.db") as store:
        first = scan_build(str(wheel), store=store)
        assert not any(lib.cached for lib in first.libraries)

        def no_reading(*_args: object, **_kwargs: object) -> object:
            raise AssertionError("a cached member was read again")

        monkeypatch.setattr(scan_module, "read_unit", no_reading)
        second = scan_build(str(wheel), store=store)
    assert all(lib.cached for lib in second.libraries)
    assert second.scanned_bytes == 0
    assert [lib.scan for lib in second.libraries] == [lib.scan for lib in first.libraries]


def test_text_so_is_not_a_library(tmp_path: Path) -> None:
    (tmp_path / "libc.so").write_text("/* GNU ld script */ GROUP ( libc.so.6 )\n")
    shutil.copy(CUDA / "libsw_sm80.so", tmp_path / "libk.so")
    report = scan_build(str(tmp_path))
    assert [lib.path for lib in report.libraries] == ["libk.so"]


def test_truncated_library_warns_instead_of_failing(tmp_path: Path) -> None:
    data = (CUDA / "libsw_multiarch.so").read_bytes()
    container = data.find(b"\x50\xed\x55\xba")
    cut = tmp_path / "cut.so"
    cut.write_bytes(data[: container + 200])
    (library,) = scan_build(str(cut)).libraries
    assert library.scan.warnings
    assert "0x" in library.scan.warnings[0]


def test_missing_path_is_a_source_error() -> None:
    with pytest.raises(SourceError) as caught:
        scan_build("/nonexistent/build")
    assert caught.value.hint


def test_parallel_and_serial_scans_agree(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    for name in ("libsw_multiarch.so", "libsw_sm90a_lz4.so", "libdispatch_with_sm120.so"):
        shutil.copy(CUDA / name, site / name)
    serial = scan_build(str(site), workers=1)
    monkeypatch.setattr(scan_module, "PARALLEL_THRESHOLD", 0)
    parallel = scan_build(str(site), workers=2)
    assert [lib.scan for lib in serial.libraries] == [lib.scan for lib in parallel.libraries]


def test_provenance_reads_bundled_version_and_commit(tmp_path: Path) -> None:
    package = tmp_path / "site" / "vllm" / "third_party" / "deep_gemm"
    package.mkdir(parents=True)
    shutil.copy(CUDA / "libdispatch_with_sm120.so", package / "_C.abi3.so")
    (package / "__init__.py").write_text("__version__ = '2.8.1'\n")
    (package / "_version.py").write_text("commit_id: str | None = 'ga6b593d2'\n")
    (library,) = scan_build(str(tmp_path / "site")).libraries
    assert library.provenance.library_id == "deep_gemm"
    assert library.provenance.bundled_version == "2.8.1"
    assert library.provenance.git_hashes[0] == "a6b593d2"


def test_zip_bomb_in_a_worker_is_reported_with_its_kind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wheel = build_wheel(tmp_path / "bomb.whl", {
        "pkg/ok.so": ((CUDA / "libsw_sm80.so").read_bytes(), zipfile.ZIP_DEFLATED),
        "pkg/bomb.so": (b"\0" * 8 * 2**20, zipfile.ZIP_DEFLATED),
    })
    data = bytearray(wheel.read_bytes())
    patch_sizes(data, b"pkg/bomb.so", 1000)
    wheel.write_bytes(bytes(data))
    monkeypatch.setattr(scan_module, "PARALLEL_THRESHOLD", 0)
    with pytest.raises(ArchiveLimitError) as caught:
        scan_build(str(wheel), workers=2)
    assert "pkg/bomb.so" in caught.value.message and caught.value.hint


def test_a_hard_linked_library_is_read_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    shutil.copy(CUDA / "libsw_sm80.so", site / "liba.so")
    (site / "libb.so").hardlink_to(site / "liba.so")
    calls: list[Unit] = []
    real = scan_module.read_unit

    def counting(unit: Unit) -> dict[str, object]:
        calls.append(unit)
        return real(unit)

    monkeypatch.setattr(scan_module, "read_unit", counting)
    report = scan_build(str(site), workers=1)
    assert [lib.path for lib in report.libraries] == ["liba.so", "libb.so"]
    assert [lib.scan.sass for lib in report.libraries] == [("sm_80",), ("sm_80",)]
    assert len(calls) == 1


def test_progress_reaches_the_total() -> None:
    steps: list[ScanProgress] = []
    scan_build(str(GOOD_NIGHTLY), progress=steps.append)
    assert steps[0].done_bytes == 0 and steps[0].total_bytes > 0
    assert [s.done_bytes for s in steps] == sorted(s.done_bytes for s in steps)
    assert steps[-1].done_bytes == steps[-1].total_bytes


def test_unreadable_metadata_becomes_a_note(tmp_path: Path) -> None:
    site = tmp_path / "site"
    (site / "pkg").mkdir(parents=True)
    (site / "pkg-1.0.dist-info").mkdir()
    (site / "pkg-1.0.dist-info" / "METADATA").write_text("Summary: no name or version\n")
    shutil.copy(CUDA / "libsw_sm80.so", site / "pkg" / "libk.so")
    report = scan_build(str(site))
    assert report.libraries[0].provenance.package is None
    assert any("pkg-1.0.dist-info" in note for note in report.notes)
