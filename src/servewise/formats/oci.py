"""OCI and Docker image documents: indexes, manifests, image configs, layer media types.

Pure parsers over the JSON bytes a registry, an OCI layout or a ``docker save``
archive holds (image-spec v1.1, Docker manifest v2 schema 2). Every document is
checked for the fields servewise uses; anything else is an error naming what was
expected. Docker schema 1 manifests (deprecated since 2017) are refused.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from servewise.errors import FormatError

OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
DOCKER_LIST = "application/vnd.docker.distribution.manifest.list.v2+json"
DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
DOCKER_CONFIG = "application/vnd.docker.container.image.v1+json"
DOCKER_SCHEMA1 = (
    "application/vnd.docker.distribution.manifest.v1+json",
    "application/vnd.docker.distribution.manifest.v1+prettyjws",
)
INDEX_TYPES = (OCI_INDEX, DOCKER_LIST)
MANIFEST_TYPES = (OCI_MANIFEST, DOCKER_MANIFEST)
#: What a client asks a registry for, every kind servewise reads.
ACCEPT = ", ".join((*INDEX_TYPES, *MANIFEST_TYPES))

#: Largest index or manifest accepted (the limit of the distribution registry).
MAX_MANIFEST_BYTES = 4 * 2**20
#: Largest image config accepted.
MAX_CONFIG_BYTES = 8 * 2**20
#: Most layers an image may have.
MAX_LAYERS = 10_000

_DIGEST_RE = re.compile(r"^(sha256:[a-f0-9]{64}|sha512:[a-f0-9]{128})$")

#: Layer media types and how their bytes are compressed.
_LAYER_COMPRESSION = {
    "application/vnd.oci.image.layer.v1.tar": "none",
    "application/vnd.oci.image.layer.v1.tar+gzip": "gzip",
    "application/vnd.oci.image.layer.v1.tar+zstd": "zstd",
    "application/vnd.oci.image.layer.nondistributable.v1.tar": "none",
    "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip": "gzip",
    "application/vnd.oci.image.layer.nondistributable.v1.tar+zstd": "zstd",
    "application/vnd.docker.image.rootfs.diff.tar": "none",
    "application/vnd.docker.image.rootfs.diff.tar.gzip": "gzip",
    "application/vnd.docker.image.rootfs.diff.tar.zstd": "zstd",
    "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip": "gzip",
}


def layer_compression(media_type: str) -> str | None:
    """``none``, ``gzip`` or ``zstd`` for a layer media type; ``None`` if it is not a layer."""
    return _LAYER_COMPRESSION.get(media_type)


def is_digest(text: str) -> bool:
    """Whether ``text`` is a digest servewise can verify (``sha256:<64 hex>`` or sha512)."""
    return _DIGEST_RE.match(text) is not None


@dataclass(frozen=True, order=True)
class Platform:
    """An image platform: ``linux/amd64``, ``linux/arm64/v8``."""

    os: str
    architecture: str
    variant: str = ""

    def __str__(self) -> str:
        base = f"{self.os}/{self.architecture}"
        return f"{base}/{self.variant}" if self.variant else base

    def satisfies(self, wanted: Platform) -> bool:
        """Whether an image for this platform serves ``wanted`` (arm64 ``v8`` is the default)."""
        if (self.os, self.architecture) != (wanted.os, wanted.architecture):
            return False
        if not wanted.variant:
            return True
        mine = self.variant or ("v8" if self.architecture == "arm64" else "")
        return mine == wanted.variant


_ARCH_ALIASES = {"x86_64": "amd64", "x86-64": "amd64", "aarch64": "arm64"}


def parse_platform(text: str) -> Platform:
    """``os/arch[/variant]`` (``linux/amd64``); ``x86_64`` and ``aarch64`` are accepted."""
    parts = text.strip().lower().split("/")
    if len(parts) not in (2, 3) or not all(parts):
        raise FormatError("platform", offset=0, expected="os/architecture[/variant], "
                          "e.g. linux/amd64", found=repr(text),
                          hint="use --platform linux/amd64 or linux/arm64")
    arch = _ARCH_ALIASES.get(parts[1], parts[1])
    return Platform(parts[0], arch, parts[2] if len(parts) == 3 else "")


@dataclass(frozen=True)
class Descriptor:
    """A reference to a blob or manifest by digest."""

    media_type: str
    digest: str
    size: int
    platform: Platform | None = None
    annotations: dict[str, str] = field(default_factory=dict)

    @property
    def is_attestation(self) -> bool:
        """A BuildKit attestation manifest (``unknown/unknown``), never an image to run."""
        return (
            self.annotations.get("vnd.docker.reference.type") == "attestation-manifest"
            or (self.platform is not None and self.platform.os == "unknown")
        )


@dataclass(frozen=True)
class Index:
    """An OCI image index or Docker manifest list."""

    media_type: str
    manifests: tuple[Descriptor, ...]

    def platforms(self) -> tuple[str, ...]:
        """The platforms it offers, attestations left out."""
        return tuple(
            str(d.platform) for d in self.manifests if d.platform and not d.is_attestation
        )

    def select(self, wanted: Platform) -> Descriptor | None:
        """The entry for ``wanted``: an exact variant first, then any that satisfies it."""
        fits = [
            d for d in self.manifests
            if d.platform is not None and not d.is_attestation and d.platform.satisfies(wanted)
        ]
        exact = [d for d in fits if d.platform is not None and d.platform.variant == wanted.variant]
        chosen = exact or fits
        return chosen[0] if chosen else None


@dataclass(frozen=True)
class Manifest:
    """An image manifest: its config blob and its layers, bottom first."""

    media_type: str
    config: Descriptor
    layers: tuple[Descriptor, ...]


@dataclass(frozen=True)
class ImageConfig:
    """What servewise reads from an image config."""

    created: str | None
    """RFC 3339 creation time, as written."""
    os: str
    architecture: str
    variant: str
    diff_ids: tuple[str, ...]
    """sha256 of each uncompressed layer, bottom first."""
    labels: dict[str, str]
    env: tuple[str, ...]

    @property
    def platform(self) -> Platform:
        """The platform the config declares."""
        return Platform(self.os, self.architecture, self.variant)


def _load(data: bytes, what: str, limit: int) -> dict[str, Any]:
    if len(data) > limit:
        raise FormatError(what, offset=0, expected=f"at most {limit} bytes",
                          found=f"{len(data)} bytes")
    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError) as error:
        raise FormatError(what, offset=getattr(error, "pos", 0) or 0, expected="JSON",
                          found=str(error)[:120]) from None
    if not isinstance(doc, dict):
        raise FormatError(what, offset=0, expected="a JSON object",
                          found=type(doc).__name__)
    return doc


def _str(doc: dict[str, Any], key: str, what: str, *, required: bool = True) -> str:
    value = doc.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise FormatError(what, offset=0, expected=f"a string {key!r}",
                          found=repr(value)[:80])
    return value


def parse_descriptor(doc: Any, what: str = "descriptor") -> Descriptor:
    """A descriptor object: ``mediaType``, ``digest``, ``size``, optional platform."""
    if not isinstance(doc, dict):
        raise FormatError(what, offset=0, expected="a JSON object", found=repr(doc)[:80])
    digest = _str(doc, "digest", what)
    if not is_digest(digest):
        raise FormatError(what, offset=0, expected="a digest sha256:<64 hex digits>",
                          found=repr(digest)[:80])
    size = doc.get("size")
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise FormatError(what, offset=0, expected="a non-negative integer 'size'",
                          found=repr(size)[:40])
    platform = None
    raw = doc.get("platform")
    if isinstance(raw, dict):
        platform = Platform(str(raw.get("os", "")), str(raw.get("architecture", "")),
                            str(raw.get("variant", "") or ""))
    annotations = doc.get("annotations")
    return Descriptor(
        media_type=_str(doc, "mediaType", what, required=False),
        digest=digest,
        size=size,
        platform=platform,
        annotations={str(k): str(v) for k, v in annotations.items()}
        if isinstance(annotations, dict) else {},
    )


def parse_manifest_document(data: bytes, content_type: str = "") -> Index | Manifest:
    """An index or an image manifest, told apart by ``mediaType`` (or the HTTP content type)."""
    doc = _load(data, "image manifest", MAX_MANIFEST_BYTES)
    media_type = doc.get("mediaType") or content_type.split(";", 1)[0].strip()
    if media_type in DOCKER_SCHEMA1 or doc.get("schemaVersion") == 1:
        raise FormatError("image manifest", offset=0, expected="schema 2 (Docker v2 or OCI)",
                          found="a Docker schema 1 manifest",
                          hint="push the image again with a current Docker or BuildKit")
    if doc.get("schemaVersion") != 2:
        raise FormatError("image manifest", offset=0, expected="schemaVersion 2",
                          found=repr(doc.get("schemaVersion")))
    if "manifests" in doc or media_type in INDEX_TYPES:
        entries = doc.get("manifests")
        if not isinstance(entries, list):
            raise FormatError("image index", offset=0, expected="a 'manifests' list",
                              found=repr(entries)[:80])
        return Index(
            media_type=media_type or OCI_INDEX,
            manifests=tuple(parse_descriptor(e, "index entry") for e in entries),
        )
    if "layers" not in doc or "config" not in doc:
        raise FormatError("image manifest", offset=0, expected="'config' and 'layers'",
                          found="keys " + ", ".join(sorted(doc))[:120])
    layers = doc["layers"]
    if not isinstance(layers, list):
        raise FormatError("image manifest", offset=0, expected="a 'layers' list",
                          found=repr(layers)[:80])
    if len(layers) > MAX_LAYERS:
        raise FormatError("image manifest", offset=0, expected=f"at most {MAX_LAYERS} layers",
                          found=f"{len(layers)} layers")
    return Manifest(
        media_type=media_type or OCI_MANIFEST,
        config=parse_descriptor(doc["config"], "manifest config"),
        layers=tuple(parse_descriptor(layer, "manifest layer") for layer in layers),
    )


def parse_config(data: bytes) -> ImageConfig:
    """An image config (OCI or Docker): creation time, platform, ``rootfs.diff_ids``."""
    doc = _load(data, "image config", MAX_CONFIG_BYTES)
    rootfs = doc.get("rootfs")
    diff_ids: list[str] = []
    if isinstance(rootfs, dict) and isinstance(rootfs.get("diff_ids"), list):
        diff_ids = [str(d) for d in rootfs["diff_ids"]]
    inner = doc.get("config")
    inner = inner if isinstance(inner, dict) else {}
    labels = inner.get("Labels")
    env = inner.get("Env")
    created = doc.get("created")
    return ImageConfig(
        created=created if isinstance(created, str) and created else None,
        os=str(doc.get("os", "") or ""),
        architecture=str(doc.get("architecture", "") or ""),
        variant=str(doc.get("variant", "") or ""),
        diff_ids=tuple(diff_ids),
        labels={str(k): str(v) for k, v in labels.items()} if isinstance(labels, dict) else {},
        env=tuple(str(e) for e in env) if isinstance(env, list) else (),
    )


__all__ = [
    "ACCEPT", "DOCKER_CONFIG", "DOCKER_LIST", "DOCKER_MANIFEST", "INDEX_TYPES", "MANIFEST_TYPES",
    "MAX_CONFIG_BYTES", "MAX_LAYERS", "MAX_MANIFEST_BYTES", "OCI_CONFIG", "OCI_INDEX",
    "OCI_MANIFEST", "Descriptor", "ImageConfig", "Index", "Manifest", "Platform", "is_digest",
    "layer_compression", "parse_config", "parse_descriptor", "parse_manifest_document",
    "parse_platform",
]
