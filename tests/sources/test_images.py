"""Image sources on real bytes: the registry fixture, OCI layouts and docker save archives.

The same image is read from each of the four places and must give the same libraries;
then layers (gzip, zstd, uncompressed), whiteouts, links, platforms and bad input.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from servewise.errors import IntegrityError, RegistryError, ServewiseError, SourceError
from servewise.inspect import scan as scan_module
from servewise.inspect.diff import engine_version
from servewise.inspect.scan import scan_build
from servewise.sources import SourceOptions
from servewise.store import Store
from support.images import (
    SITE,
    Entry,
    Image,
    build_tar,
    push_image,
    push_index,
    wheel_entries,
    write_docker_save,
    write_oci_layout,
)
from support.paths import BAD_NIGHTLY, CUDA, GOOD_NIGHTLY, sample_expected
from support.registry import Registry

pytestmark = pytest.mark.registry

GOOD = GOOD_NIGHTLY.name
DEEP_GEMM = f"{SITE}/vllm/third_party/deep_gemm/_C.abi3.so"
KINDS = ["registry", "oci-layout", "docker-save", "docker-save-old"]
_counter = iter(range(1_000_000))


def place(kind: str, image: Image, tmp_path: Path, registry: Registry, tag: str = "t") -> str:
    """Put ``image`` where ``kind`` says; return the REF that names it."""
    number = next(_counter)
    if kind == "registry":
        push_image(registry, f"tests/img{number}", tag, image)
        return f"{registry.host}/tests/img{number}:{tag}"
    if kind == "oci-layout":
        return str(write_oci_layout(tmp_path / f"layout{number}", {tag: image}))
    layout = "old" if kind == "docker-save-old" else "oci"
    return str(write_docker_save(tmp_path / f"save{number}.tar", {f"tests/x:{tag}": image},
                                 layout=layout))


def seed_image(wheel: Path = GOOD_NIGHTLY, compression: str = "gzip") -> Image:
    base = build_tar([Entry("etc/os-release", b"ID=test\n"), Entry("usr/lib/libc.so.6", b"no")])
    return Image([base, build_tar(wheel_entries(wheel))], [compression, compression])


@pytest.mark.parametrize("kind", KINDS)
def test_every_place_gives_the_wheel_libraries(
    kind: str, tmp_path: Path, registry: Registry
) -> None:
    ref = place(kind, seed_image(), tmp_path, registry)
    report = scan_build(ref)
    members = sample_expected()[GOOD]["members"]
    assert {lib.path for lib in report.libraries} == {f"{SITE}/{p}" for p in members}
    for library in report.libraries:
        expected = members[library.path.removeprefix(SITE + "/")]
        assert set(library.scan.sass) == set(expected["sass"])
        assert set(library.scan.ptx) == set(expected["ptx"])
        assert library.provenance.package == "vllm"
    deep_gemm = report.library(DEEP_GEMM)
    assert "sm_120" in deep_gemm.dispatch and deep_gemm.provenance.library_id == "deep_gemm"
    engine = engine_version(report)
    assert engine is not None and engine.version == "0.26.1rc1.dev77+ga6b593d2"
    assert report.metadata["created"] == "2026-07-29T04:00:00Z"
    assert report.metadata["platform"] == "linux/amd64"
    assert report.units.kind == "layer" and report.units.read == 2
    # usr/lib/libc.so.6 is named like a library but is not ELF.
    assert any("libc.so.6: not an ELF file" in note for note in report.notes)


@pytest.mark.parametrize("compression", ["gzip", "zstd", "none"])
def test_layer_compressions(compression: str, tmp_path: Path, registry: Registry) -> None:
    ref = place("registry", seed_image(compression=compression), tmp_path, registry)
    report = scan_build(ref)
    assert len(report.libraries) == 5


def test_the_bytes_decide_the_compression_not_the_media_type(
    tmp_path: Path, registry: Registry
) -> None:
    image = seed_image(compression="zstd")
    blobs = image.blobs()
    lying = [(blob, "application/vnd.oci.image.layer.v1.tar+gzip") for blob, _ in blobs]
    registry.push_blob("tests/lying", image.config())
    for blob, _ in lying:
        registry.push_blob("tests/lying", blob)
    body, media = image.manifest(lying)
    registry.push_manifest("tests/lying", "t", body, media)
    assert len(scan_build(f"{registry.host}/tests/lying:t").libraries) == 5


@pytest.mark.parametrize("kind", KINDS)
def test_whiteouts_follow_layer_order(kind: str, tmp_path: Path, registry: Registry) -> None:
    lower = build_tar(wheel_entries(GOOD_NIGHTLY))
    folder = f"{SITE}/vllm/vllm_flash_attn"
    upper = build_tar([
        Entry(f"{SITE}/vllm/third_party/deep_gemm/.wh._C.abi3.so"),  # deletes DeepGEMM
        Entry(f"{folder}/.wh..wh..opq"),  # hides both flash-attention builds below
        Entry(f"{folder}/_vllm_fa2_C.abi3.so", (CUDA / "libsw_sm120.so").read_bytes()),
        Entry(f"{SITE}/gone/.wh.libnothing.so"),  # whites out a file no layer has
    ])
    report = scan_build(place(kind, Image([lower, upper], ["gzip", "none"]), tmp_path, registry))
    paths = {lib.path for lib in report.libraries}
    assert DEEP_GEMM not in paths
    assert f"{folder}/_vllm_fa3_C.abi3.so" not in paths
    # The opaque folder's own layer still counts: its new fa2 is the sm_120 build.
    assert report.library(f"{folder}/_vllm_fa2_C.abi3.so").scan.sass == ("sm_120",)
    assert f"{SITE}/vllm/_C.abi3.so" in paths
    assert any("whiteout for" in note and "libnothing.so" in note for note in report.notes)


def test_an_upper_layer_replaces_a_library(tmp_path: Path, registry: Registry) -> None:
    good = build_tar(wheel_entries(GOOD_NIGHTLY))
    bad = build_tar(wheel_entries(BAD_NIGHTLY))
    report = scan_build(place("registry", Image([good, bad]), tmp_path, registry))
    deep_gemm = report.library(DEEP_GEMM)
    assert "sm_120" not in deep_gemm.scan.dispatch
    # The lower layer's sm120 header was never deleted (no whiteout), so it is still there.
    assert deep_gemm.headers["sm_120"] == ("sm120_fp8_fp4_gemm_1d1d.cuh",)
    engine = engine_version(report)
    assert engine is not None and engine.version == "0.26.1rc1.dev181+gf5a76426"


def test_links_and_odd_paths(tmp_path: Path, registry: Registry) -> None:
    lib = (CUDA / "libsw_sm90a.so").read_bytes()
    layer = build_tar([
        Entry("./usr/lib/libk.so.1", lib),
        Entry("usr/lib/libk.so", kind="symlink", link="libk.so.1"),
        Entry("usr/lib/libk-hard.so", kind="hardlink", link="usr/lib/libk.so.1"),
        Entry("usr/lib/libdangling.so", kind="hardlink", link="usr/lib/missing.so"),
        Entry("/opt/abs/libabs.so", lib),
    ])
    report = scan_build(place("registry", Image([layer]), tmp_path, registry))
    assert [lib.path for lib in report.libraries] == [
        "opt/abs/libabs.so", "usr/lib/libk-hard.so", "usr/lib/libk.so.1"
    ]
    assert report.library("usr/lib/libk-hard.so").scan == report.library("usr/lib/libk.so.1").scan
    assert "skipped symbolic link usr/lib/libk.so -> libk.so.1" in report.notes
    assert any("hard link usr/lib/libdangling.so" in note for note in report.notes)


@pytest.mark.parametrize("name", ["../../etc/evil.so", "usr/../../evil.so"])
def test_path_traversal_is_refused(name: str, tmp_path: Path, registry: Registry) -> None:
    layer = build_tar([Entry(name, (CUDA / "libsw_sm80.so").read_bytes())])
    with pytest.raises(SourceError) as caught:
        scan_build(place("registry", Image([layer]), tmp_path, registry))
    assert "outside the image root" in caught.value.message and caught.value.hint


def test_hard_link_out_of_the_root_is_refused(tmp_path: Path, registry: Registry) -> None:
    layer = build_tar([Entry("usr/lib/x.so", kind="hardlink", link="../../etc/shadow")])
    with pytest.raises(SourceError, match="outside the image root"):
        scan_build(place("registry", Image([layer]), tmp_path, registry))


def multi_arch(registry: Registry, repo: str, *, style: str = "oci") -> None:
    amd = seed_image(GOOD_NIGHTLY)
    arm = seed_image(BAD_NIGHTLY)
    arm.architecture, arm.variant = "arm64", "v8"
    push_index(registry, repo, "multi", [amd, arm], style=style, attestation=True)


@pytest.mark.parametrize("style", ["oci", "docker"])
def test_index_picks_the_platform(style: str, registry: Registry) -> None:
    repo = f"tests/multi-{style}"
    multi_arch(registry, repo, style=style)
    ref = f"{registry.host}/{repo}:multi"
    amd = scan_build(ref)
    arm = scan_build(ref, options=SourceOptions(platform="linux/arm64"))
    assert "sm_120" in amd.library(DEEP_GEMM).dispatch
    assert "sm_120" not in arm.library(DEEP_GEMM).dispatch
    assert arm.metadata["platform"] == "linux/arm64/v8"
    assert amd.metadata["digest"] == arm.metadata["digest"] != amd.metadata["manifest_digest"]


def test_index_without_the_platform_lists_what_it_has(registry: Registry) -> None:
    multi_arch(registry, "tests/multi-missing")
    with pytest.raises(SourceError) as caught:
        scan_build(f"{registry.host}/tests/multi-missing:multi",
                   options=SourceOptions(platform="linux/s390x"))
    assert "linux/amd64, linux/arm64/v8" in caught.value.message
    assert "unknown" not in caught.value.message  # the attestation entry is not a platform
    assert caught.value.fields["platforms"] == ["linux/amd64", "linux/arm64/v8"]


def test_unknown_repository_and_missing_tag(registry: Registry) -> None:
    with pytest.raises(RegistryError) as caught:
        scan_build(f"{registry.host}/tests/never-pushed:x")
    assert "no such repository" in caught.value.message
    push_image(registry, "tests/one-tag", "v1", Image([build_tar([])]))
    with pytest.raises(RegistryError) as missing:
        scan_build(f"{registry.host}/tests/one-tag:v2")
    assert "no tag or digest 'v2'" in missing.value.message
    assert "servewise tags" in (missing.value.hint or "")


def test_layer_cache_reads_only_new_layers(
    tmp_path: Path, registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = build_tar([Entry("etc/os-release", b"ID=test\n")])
    push_image(registry, "tests/cache", "a", Image([base, build_tar(wheel_entries(GOOD_NIGHTLY))]))
    push_image(registry, "tests/cache", "b", Image([base, build_tar(wheel_entries(BAD_NIGHTLY))]))
    with Store(tmp_path / "s.db") as store:
        first = scan_build(f"{registry.host}/tests/cache:a", store=store)
        second = scan_build(f"{registry.host}/tests/cache:b", store=store)
        assert (first.units.read, first.units.cached) == (2, 0)
        assert (second.units.read, second.units.cached) == (1, 1)

        def no_reading(*_args: object) -> object:
            raise AssertionError("a cached layer was read again")

        monkeypatch.setattr(scan_module, "read_unit", no_reading)
        again = scan_build(f"{registry.host}/tests/cache:a", store=store)
    assert (again.units.read, again.units.cached) == (0, 2)
    assert all(lib.cached for lib in again.libraries)
    assert [lib.scan for lib in again.libraries] == [lib.scan for lib in first.libraries]


def test_layers_are_read_in_parallel_workers(
    tmp_path: Path, registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    image = Image([build_tar(wheel_entries(GOOD_NIGHTLY)), build_tar(wheel_entries(BAD_NIGHTLY)),
                   build_tar([Entry("opt/libk.so", (CUDA / "libsw_sm100a.so").read_bytes())])],
                  ["gzip", "zstd", "none"])
    ref = place("registry", image, tmp_path, registry)
    serial = scan_build(ref, workers=1)
    monkeypatch.setattr(scan_module, "PARALLEL_THRESHOLD", 0)
    parallel = scan_build(ref, workers=2)
    assert [lib.to_dict() for lib in parallel.libraries] == [
        lib.to_dict() for lib in serial.libraries
    ]


@pytest.mark.parametrize("kind", ["oci-layout", "docker-save"])
def test_a_blob_that_does_not_match_its_digest(kind: str, tmp_path: Path) -> None:
    image = seed_image()
    if kind == "oci-layout":
        root = write_oci_layout(tmp_path / "lay", {"t": image})
        layer = root / "blobs" / "sha256" / image.manifest()[0].decode().split(
            '"layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", '
            '"digest": "sha256:')[1][:64]
        data = bytearray(layer.read_bytes())
        data[-20] ^= 0xFF
        layer.write_bytes(bytes(data))
        ref = str(root)
    else:
        path = write_docker_save(tmp_path / "s.tar", {"x:t": image})
        data = bytearray(path.read_bytes())
        blob = image.blobs()[1][0]
        at = bytes(data).find(blob)
        data[at + len(blob) // 2] ^= 0xFF
        path.write_bytes(bytes(data))
        ref = str(path)
    with pytest.raises(ServewiseError) as caught:
        scan_build(ref)
    assert isinstance(caught.value, IntegrityError | SourceError)
    assert "digest" in caught.value.message or "damaged" in caught.value.message


def test_truncated_layout_blob(tmp_path: Path) -> None:
    image = seed_image()
    root = write_oci_layout(tmp_path / "lay", {"t": image})
    blob = image.blobs()[1][0]
    from support.images import digest_of

    path = root / "blobs" / "sha256" / digest_of(blob).split(":")[1]
    path.write_bytes(blob[: len(blob) // 2])
    with pytest.raises(IntegrityError, match="ends after"):
        scan_build(str(root))


def test_archive_with_several_images_needs_a_name(tmp_path: Path) -> None:
    path = write_docker_save(tmp_path / "two.tar", {"x:good": seed_image(GOOD_NIGHTLY),
                                                    "x:bad": seed_image(BAD_NIGHTLY)})
    with pytest.raises(SourceError) as caught:
        scan_build(str(path))
    assert "x:good" in caught.value.message and "docker-archive:" in (caught.value.hint or "")
    bad = scan_build(f"docker-archive:{path}:x:bad")
    assert "sm_120" not in bad.library(DEEP_GEMM).dispatch
    assert "sm_120" in scan_build(f"docker-archive:{path}:good").library(DEEP_GEMM).dispatch


def test_layout_names(tmp_path: Path) -> None:
    root = write_oci_layout(tmp_path / "lay", {"good": seed_image(GOOD_NIGHTLY),
                                               "bad": seed_image(BAD_NIGHTLY)})
    with pytest.raises(SourceError, match="several images"):
        scan_build(str(root))
    assert "sm_120" not in scan_build(f"oci:{root}:bad").library(DEEP_GEMM).dispatch
    with pytest.raises(SourceError, match="no image named 'ugly'"):
        scan_build(f"oci:{root}:ugly")


def test_compressed_and_foreign_archives(tmp_path: Path) -> None:
    import gzip

    path = write_docker_save(tmp_path / "s.tar", {"x:t": seed_image()})
    zipped = tmp_path / "s.tar.gz"
    zipped.write_bytes(gzip.compress(path.read_bytes()))
    for ref in (f"docker-archive:{zipped}", str(zipped)):
        with pytest.raises(SourceError, match="gzip-compressed") as caught:
            scan_build(ref)
        assert "gunzip" in (caught.value.hint or "")
    plain = tmp_path / "plain.tar"
    plain.write_bytes(build_tar([Entry("hello.txt", b"hi")]))
    with pytest.raises(SourceError, match=r"neither manifest\.json nor index\.json"):
        scan_build(str(plain))


def test_a_layout_is_not_written_to(tmp_path: Path) -> None:
    root = write_oci_layout(tmp_path / "lay", {"t": seed_image()})
    before = sorted(p.relative_to(root) for p in root.rglob("*"))
    shutil.copytree(root, tmp_path / "copy")
    scan_build(str(root))
    assert sorted(p.relative_to(root) for p in root.rglob("*")) == before
    assert json.loads((root / "index.json").read_text()) == json.loads(
        (tmp_path / "copy" / "index.json").read_text()
    )
