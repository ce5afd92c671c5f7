"""Smoke tests of the shared registry fixture: push a small OCI image and read it back."""

from __future__ import annotations

import json

import pytest

from support.registry import Registry, sha256_digest

pytestmark = pytest.mark.registry

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
OCI_LAYER = "application/vnd.oci.image.layer.v1.tar"


def test_push_and_read_back_an_oci_image(registry: Registry) -> None:
    """Config blob + one layer + manifest go in; the manifest and a blob range come back."""
    repo = "servewise/smoke"
    config = json.dumps(
        {"architecture": "amd64", "os": "linux", "rootfs": {"type": "layers", "diff_ids": []}}
    ).encode()
    layer = bytes(range(256)) * 16
    config_digest = registry.push_blob(repo, config)
    layer_digest = registry.push_blob(repo, layer)
    assert layer_digest == sha256_digest(layer)
    manifest = json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": OCI_MANIFEST,
            "config": {"mediaType": OCI_CONFIG, "digest": config_digest, "size": len(config)},
            "layers": [{"mediaType": OCI_LAYER, "digest": layer_digest, "size": len(layer)}],
        }
    ).encode()
    manifest_digest = registry.push_manifest(repo, "v1", manifest, OCI_MANIFEST)
    assert manifest_digest == sha256_digest(manifest)

    with registry.client() as client:
        got = client.get(f"/v2/{repo}/manifests/v1", headers={"Accept": OCI_MANIFEST})
        assert got.status_code == 200
        assert got.headers["Content-Type"] == OCI_MANIFEST
        assert got.headers["Docker-Content-Digest"] == manifest_digest
        assert got.content == manifest

        blob = client.get(f"/v2/{repo}/blobs/{layer_digest}", follow_redirects=True)
        assert blob.status_code == 200
        assert sha256_digest(blob.content) == layer_digest

        part = client.get(
            f"/v2/{repo}/blobs/{layer_digest}",
            headers={"Range": "bytes=10-19"},
            follow_redirects=True,
        )
        assert part.status_code == 206
        assert part.content == layer[10:20]
        assert part.headers["Content-Range"] == f"bytes 10-19/{len(layer)}"

        tags = client.get(f"/v2/{repo}/tags/list")
        assert tags.json() == {"name": repo, "tags": ["v1"]}
