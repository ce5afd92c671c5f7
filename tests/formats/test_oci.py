"""OCI and Docker documents, platforms and image references."""

from __future__ import annotations

import json

import pytest

from servewise.errors import FormatError
from servewise.formats import oci
from servewise.formats.imageref import parse_reference
from support.images import Image, build_tar

D = "sha256:" + "a" * 64


def test_manifest_and_config_from_real_shapes() -> None:
    image = Image([build_tar([])], ["zstd"], style="docker")
    body, media = image.manifest()
    doc = oci.parse_manifest_document(body, media)
    assert isinstance(doc, oci.Manifest) and doc.media_type == oci.DOCKER_MANIFEST
    assert oci.layer_compression(doc.layers[0].media_type) == "zstd"
    config = oci.parse_config(image.config())
    assert config.created == image.created and str(config.platform) == "linux/amd64"
    assert len(config.diff_ids) == 1


def test_index_platforms_and_attestations() -> None:
    index = oci.parse_manifest_document(json.dumps({"schemaVersion": 2, "manifests": [
        {"mediaType": oci.OCI_MANIFEST, "digest": D, "size": 1,
         "platform": {"os": "linux", "architecture": "amd64"}},
        {"mediaType": oci.OCI_MANIFEST, "digest": D, "size": 1,
         "platform": {"os": "linux", "architecture": "arm64"}},
        {"mediaType": oci.OCI_MANIFEST, "digest": D, "size": 1,
         "platform": {"os": "unknown", "architecture": "unknown"},
         "annotations": {"vnd.docker.reference.type": "attestation-manifest"}},
    ]}).encode())
    assert isinstance(index, oci.Index)
    assert index.platforms() == ("linux/amd64", "linux/arm64")
    arm = index.select(oci.parse_platform("linux/arm64/v8"))
    assert arm is not None and arm.platform == oci.Platform("linux", "arm64")
    assert index.select(oci.parse_platform("linux/riscv64")) is None
    assert oci.parse_platform("linux/x86_64") == oci.Platform("linux", "amd64")


@pytest.mark.parametrize("body", [
    b"not json", b"[]", b'{"schemaVersion": 1, "fsLayers": []}',
    b'{"schemaVersion": 2, "config": {}, "layers": []}',
    json.dumps({"schemaVersion": 2, "config": {"digest": "md5:x", "size": 1},
                "layers": []}).encode(),
    json.dumps({"schemaVersion": 2, "config": {"digest": D, "size": -1}, "layers": []}).encode(),
    b" " * (oci.MAX_MANIFEST_BYTES + 1),
])
def test_malformed_documents(body: bytes) -> None:
    with pytest.raises(FormatError):
        oci.parse_manifest_document(body)


@pytest.mark.parametrize(("text", "registry", "repository", "tag", "digest"), [
    ("ubuntu", "docker.io", "library/ubuntu", "latest", None),
    ("vllm/vllm-openai:nightly", "docker.io", "vllm/vllm-openai", "nightly", None),
    ("docker://ghcr.io/sgl-project/sglang:v0.5", "ghcr.io", "sgl-project/sglang", "v0.5", None),
    ("127.0.0.1:5000/a/b@" + D, "127.0.0.1:5000", "a/b", None, D),
    ("localhost/x:1", "localhost", "x", "1", None),
    ("index.docker.io/library/python:3.12", "docker.io", "library/python", "3.12", None),
])
def test_image_references(text: str, registry: str, repository: str, tag: str | None,
                          digest: str | None) -> None:
    ref = parse_reference(text)
    assert (ref.registry, ref.repository, ref.tag, ref.digest) == (registry, repository, tag,
                                                                   digest)


def test_reference_details() -> None:
    assert parse_reference("127.0.0.1:5000/a").is_loopback
    assert parse_reference("[::1]:5000/a").is_loopback
    assert not parse_reference("ghcr.io/a").is_loopback
    assert parse_reference("vllm/vllm-openai").api_host == "registry-1.docker.io"
    assert parse_reference("a/b", allow_bare=True).tag is None
    for bad in ("UPPER/case", "a/b:bad tag", "a@sha256:xyz", "a//b"):
        with pytest.raises(FormatError):
            parse_reference(bad)
