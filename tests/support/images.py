"""Container images for tests, built in memory: layers, configs, manifests, indexes.

Layers are real tar archives (``tarfile``), compressed with gzip or zstd; images are
pushed to the real registry fixture with plain HTTP, written as OCI layout folders,
or saved as ``docker save`` archives in the old and the Docker 25+ layout.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import tarfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import zstandard

from servewise.formats.oci import (
    DOCKER_CONFIG,
    DOCKER_LIST,
    DOCKER_MANIFEST,
    OCI_CONFIG,
    OCI_INDEX,
    OCI_MANIFEST,
)
from support.registry import Registry, sha256_digest

LAYER_TYPES = {
    ("oci", "none"): "application/vnd.oci.image.layer.v1.tar",
    ("oci", "gzip"): "application/vnd.oci.image.layer.v1.tar+gzip",
    ("oci", "zstd"): "application/vnd.oci.image.layer.v1.tar+zstd",
    ("docker", "none"): "application/vnd.docker.image.rootfs.diff.tar",
    ("docker", "gzip"): "application/vnd.docker.image.rootfs.diff.tar.gzip",
    ("docker", "zstd"): "application/vnd.docker.image.rootfs.diff.tar.zstd",
}
SITE = "usr/local/lib/python3.12/dist-packages"


digest_of = sha256_digest
"""``sha256:<hex>`` of ``data`` (the registry helper's, under the name these tests use)."""


@dataclass(frozen=True)
class Entry:
    """One tar member: a file (``data``), ``dir``, ``symlink``/``hardlink`` (``link``)."""

    name: str
    data: bytes = b""
    kind: str = "file"
    link: str = ""


def build_tar(entries: list[Entry], *, fmt: int = tarfile.PAX_FORMAT) -> bytes:
    """A tar archive of ``entries`` in order."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=fmt) as archive:
        for entry in entries:
            info = tarfile.TarInfo(entry.name)
            info.mtime = 1_700_000_000
            if entry.kind == "dir":
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                archive.addfile(info)
            elif entry.kind == "symlink":
                info.type, info.linkname = tarfile.SYMTYPE, entry.link
                archive.addfile(info)
            elif entry.kind == "hardlink":
                info.type, info.linkname = tarfile.LNKTYPE, entry.link
                archive.addfile(info)
            else:
                info.size, info.mode = len(entry.data), 0o755
                archive.addfile(info, io.BytesIO(entry.data))
    return out.getvalue()


def compress(data: bytes, method: str) -> bytes:
    """``data`` as a gzip or zstd stream, or unchanged for ``none``."""
    if method == "gzip":
        return gzip.compress(data, compresslevel=1, mtime=0)
    if method == "zstd":
        return zstandard.ZstdCompressor(level=1).compress(data)
    return data


def wheel_entries(wheel: Path, prefix: str = SITE) -> list[Entry]:
    """The files of a wheel as tar entries under ``prefix`` (an image's site-packages)."""
    entries = []
    with zipfile.ZipFile(wheel) as archive:
        for info in archive.infolist():
            if not info.is_dir():
                entries.append(Entry(f"{prefix}/{info.filename}", archive.read(info)))
    return entries


@dataclass
class Image:
    """One single-platform image: layer tars (bottom first) and config facts."""

    layers: list[bytes]
    compression: list[str] = field(default_factory=list)
    created: str = "2026-07-29T04:00:00Z"
    architecture: str = "amd64"
    os: str = "linux"
    variant: str = ""
    style: str = "oci"
    """``oci`` or ``docker`` media types."""

    def blobs(self) -> list[tuple[bytes, str]]:
        """Each layer blob with its media type."""
        methods = self.compression or ["gzip"] * len(self.layers)
        return [
            (compress(layer, method), LAYER_TYPES[(self.style, method)])
            for layer, method in zip(self.layers, methods, strict=True)
        ]

    def config(self) -> bytes:
        """The image config JSON."""
        doc: dict[str, object] = {
            "created": self.created,
            "architecture": self.architecture,
            "os": self.os,
            "config": {"Env": ["PATH=/usr/bin"], "Labels": {"servewise.test": "yes"}},
            "rootfs": {"type": "layers", "diff_ids": [digest_of(layer) for layer in self.layers]},
            "history": [{"created": self.created, "created_by": "servewise tests"}],
        }
        if self.variant:
            doc["variant"] = self.variant
        return json.dumps(doc, sort_keys=True).encode()

    def manifest(self, blobs: list[tuple[bytes, str]] | None = None) -> tuple[bytes, str]:
        """The manifest JSON and its media type."""
        blobs = blobs if blobs is not None else self.blobs()
        config = self.config()
        media = OCI_MANIFEST if self.style == "oci" else DOCKER_MANIFEST
        doc = {
            "schemaVersion": 2,
            "mediaType": media,
            "config": {"mediaType": OCI_CONFIG if self.style == "oci" else DOCKER_CONFIG,
                       "digest": digest_of(config), "size": len(config)},
            "layers": [{"mediaType": kind, "digest": digest_of(blob), "size": len(blob)}
                       for blob, kind in blobs],
        }
        return json.dumps(doc).encode(), media

    @property
    def platform(self) -> dict[str, str]:
        """The index entry's platform."""
        found = {"os": self.os, "architecture": self.architecture}
        if self.variant:
            found["variant"] = self.variant
        return found


def push_image(registry: Registry, repo: str, tag: str, image: Image) -> str:
    """Push ``image`` as ``repo:tag``; return the manifest digest."""
    blobs = image.blobs()
    registry.push_blob(repo, image.config())
    for blob, _ in blobs:
        registry.push_blob(repo, blob)
    body, media = image.manifest(blobs)
    return registry.push_manifest(repo, tag, body, media)


def push_index(registry: Registry, repo: str, tag: str, images: list[Image],
               *, style: str = "oci", attestation: bool = False) -> str:
    """Push each image by digest and an index (or Docker manifest list) naming them as ``tag``."""
    entries = []
    for image in images:
        blobs = image.blobs()
        registry.push_blob(repo, image.config())
        for blob, _ in blobs:
            registry.push_blob(repo, blob)
        body, media = image.manifest(blobs)
        digest = registry.push_manifest(repo, digest_of(body), body, media)
        entries.append({"mediaType": media, "digest": digest, "size": len(body),
                        "platform": image.platform})
    if attestation:
        entries.append({"mediaType": OCI_MANIFEST, "digest": entries[0]["digest"],
                        "size": entries[0]["size"],
                        "platform": {"os": "unknown", "architecture": "unknown"},
                        "annotations": {"vnd.docker.reference.type": "attestation-manifest"}})
    media = OCI_INDEX if style == "oci" else DOCKER_LIST
    body = json.dumps({"schemaVersion": 2, "mediaType": media, "manifests": entries}).encode()
    return registry.push_manifest(repo, tag, body, media)


def write_blob(root: Path, data: bytes) -> str:
    """Store ``data`` under ``root/blobs/sha256/``; return its digest."""
    digest = digest_of(data)
    path = root / "blobs" / "sha256" / digest.split(":", 1)[1]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return digest


def write_oci_layout(root: Path, images: dict[str, Image]) -> Path:
    """An OCI image layout folder holding ``images`` by ref name."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "oci-layout").write_text('{"imageLayoutVersion":"1.0.0"}')
    manifests = []
    for name, image in images.items():
        blobs = image.blobs()
        write_blob(root, image.config())
        for blob, _ in blobs:
            write_blob(root, blob)
        body, media = image.manifest(blobs)
        manifests.append({"mediaType": media, "digest": write_blob(root, body),
                          "size": len(body), "platform": image.platform,
                          "annotations": {"org.opencontainers.image.ref.name": name}})
    (root / "index.json").write_text(json.dumps(
        {"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": manifests}
    ))
    return root


def write_docker_save(path: Path, images: dict[str, Image], *, layout: str = "oci") -> Path:
    """A ``docker save`` archive: ``oci`` (Docker 25+: OCI layout plus manifest.json) or ``old``."""
    members: list[Entry] = []
    manifest_json = []
    index_entries = []
    written: set[str] = set()

    def add(name: str, data: bytes) -> None:
        if name not in written:
            written.add(name)
            members.append(Entry(name, data))

    for repo_tag, image in images.items():
        config = image.config()
        if layout == "old":
            config_name = digest_of(config).split(":", 1)[1] + ".json"
            add(config_name, config)
            layer_names = []
            for number, layer in enumerate(image.layers):
                layer_id = hashlib.sha256(f"{repo_tag}{number}".encode()).hexdigest()
                add(f"{layer_id}/VERSION", b"1.0")
                add(f"{layer_id}/json", b"{}")
                add(f"{layer_id}/layer.tar", layer)
                layer_names.append(f"{layer_id}/layer.tar")
            manifest_json.append({"Config": config_name, "RepoTags": [repo_tag],
                                  "Layers": layer_names})
            continue
        blobs = image.blobs()
        add("blobs/sha256/" + digest_of(config).split(":", 1)[1], config)
        for blob, _ in blobs:
            add("blobs/sha256/" + digest_of(blob).split(":", 1)[1], blob)
        body, media = image.manifest(blobs)
        add("blobs/sha256/" + digest_of(body).split(":", 1)[1], body)
        manifest_json.append({
            "Config": "blobs/sha256/" + digest_of(config).split(":", 1)[1],
            "RepoTags": [repo_tag],
            "Layers": ["blobs/sha256/" + digest_of(blob).split(":", 1)[1] for blob, _ in blobs],
        })
        index_entries.append({"mediaType": media, "digest": digest_of(body), "size": len(body),
                              "annotations": {"io.containerd.image.name": repo_tag,
                                              "org.opencontainers.image.ref.name":
                                              repo_tag.rsplit(":", 1)[-1]}})
    if layout == "oci":
        add("oci-layout", b'{"imageLayoutVersion":"1.0.0"}')
        add("index.json", json.dumps({"schemaVersion": 2, "mediaType": OCI_INDEX,
                                      "manifests": index_entries}).encode())
    add("manifest.json", json.dumps(manifest_json).encode())
    path.write_bytes(build_tar(members, fmt=tarfile.USTAR_FORMAT))
    return path
