"""The resolver table: which source each REF form opens, and the options' checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from servewise.errors import SourceError, UsageError
from servewise.sources import RESOLVERS, SourceOptions, open_source
from servewise.sources.resolve import looks_like_path
from support.images import Entry, Image, build_tar, write_docker_save, write_oci_layout
from support.paths import CUDA, GOOD_NIGHTLY


def claimed_by(ref: str) -> str:
    return next(r.name for r in RESOLVERS if r.claims(ref))


def test_each_ref_form_has_its_resolver(tmp_path: Path) -> None:
    layout = write_oci_layout(tmp_path / "layout", {"t": Image([build_tar([])])})
    archive = write_docker_save(tmp_path / "save.tar", {"x:t": Image([build_tar([])])})
    plain_tar = tmp_path / "files.tar"
    plain_tar.write_bytes(build_tar([Entry("a", b"1")]))
    cases = {
        "pypi:vllm==0.33.0": "pypi",
        "https://files.example/vllm-0.33.0-cp38-abi3-manylinux_2_28_x86_64.whl": "remote-wheel",
        f"oci:{layout}:t": "oci-layout",
        str(layout): "oci-layout",
        f"docker-archive:{archive}:x:t": "docker-archive",
        str(archive): "docker-archive",
        str(plain_tar): "docker-archive",
        str(GOOD_NIGHTLY): "wheel",
        str(CUDA / "libsw_sm80.so"): "local",
        str(tmp_path): "local",
        "vllm/vllm-openai:nightly": "image",
        "docker://ghcr.io/sgl-project/sglang": "image",
        "127.0.0.1:5000/x@sha256:" + "a" * 64: "image",
    }
    assert {ref: claimed_by(ref) for ref in cases} == cases


@pytest.mark.parametrize("ref", ["./missing.so", "/nope/lib.so", "gone.whl", "x.tar", "dir/"])
def test_paths_that_do_not_exist_are_not_image_references(ref: str) -> None:
    assert looks_like_path(ref)
    with pytest.raises(SourceError, match="no such file or folder"):
        open_source(ref)


@pytest.mark.parametrize("platform", ["linux", "linux/", "amd64", "x/y/z/w"])
def test_bad_platforms(platform: str) -> None:
    with pytest.raises(UsageError):
        SourceOptions(platform=platform)


def test_good_platforms() -> None:
    for platform in ("linux/arm64", "linux/arm64/v8", "manylinux_2_28_aarch64", "any"):
        assert SourceOptions(platform=platform).platform == platform
