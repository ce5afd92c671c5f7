"""Images from any blob store: a registry, an OCI layout folder, a ``docker save`` archive.

The three differ only in where a blob's bytes are; :class:`ImageSource` does the
rest. Its units are the image's layers (keyed ``layer:<digest>``), read in worker
processes: each blob is streamed, size- and digest-verified, decompressed by its
first bytes and walked once (:mod:`servewise.sources.layers`). Its contents are
the final filesystem after whiteouts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from servewise.errors import FormatError, IntegrityError, SourceError
from servewise.formats import oci
from servewise.sources.interface import CHUNK_SIZE, Contents, ScanFn, SourceBase, Unit
from servewise.sources.layers import merge_layers, read_layer

#: Default platform of an image index, as Docker picks on an x86-64 host.
DEFAULT_PLATFORM = "linux/amd64"


class BlobOpener(Protocol):
    """Where a blob's bytes come from (a small picklable value)."""

    def chunks(self, chunk_size: int = CHUNK_SIZE) -> Iterator[bytes]:
        """The blob's bytes, unverified."""
        ...


@dataclass(frozen=True)
class LayerUnit:
    """One layer, read in one pass and cached under its digest."""

    key: str
    size: int
    label: str
    digest: str
    media_type: str
    blob: BlobOpener
    where: str

    def read(self, scan: ScanFn) -> dict[str, Any]:
        """Stream, verify, decompress and walk the layer."""
        from servewise.sources.blobs import VerifiedBlob, layer_stream  # only when reading

        raw = VerifiedBlob(self.blob.chunks(CHUNK_SIZE), self.digest, self.size, self.where)
        try:
            layer = layer_stream(raw, self.where, self.size)
            try:
                result = read_layer(layer.stream, scan, self.where)
            except (FormatError, SourceError) as error:
                if isinstance(error, IntegrityError):
                    raise
                # Bytes that do not parse may simply not be the blob's: say so if they are not.
                raw.drain()
                if isinstance(error, FormatError):
                    raise SourceError(
                        error.message, path=self.where,
                        hint=error.hint or "the layer is not a readable tar archive",
                    ) from None
                raise
            raw.drain()
        finally:
            raw.close()
        result["compression"] = layer.compression
        return result


def layer_units(
    manifest: oci.Manifest, opener: Callable[[oci.Descriptor], BlobOpener], where: str
) -> list[LayerUnit]:
    """One unit per layer of ``manifest``, bottom first."""
    units: list[LayerUnit] = []
    for number, layer in enumerate(manifest.layers, start=1):
        if oci.layer_compression(layer.media_type) is None and layer.media_type:
            raise SourceError(
                f"{where}: layer {number} has media type {layer.media_type!r}, "
                "not an image layer",
                hint="this manifest is not a container image (an artifact or attestation?)",
                path=where, media_type=layer.media_type,
            )
        units.append(LayerUnit(
            key=f"layer:{layer.digest}",
            size=layer.size,
            label=f"layer {number}/{len(manifest.layers)} {layer.digest[:19]}",
            digest=layer.digest,
            media_type=layer.media_type,
            blob=opener(layer),
            where=f"{where} layer {number} ({layer.digest[:19]}…)",
        ))
    return units


def choose_platform(index: oci.Index, platform: str | None, where: str) -> oci.Descriptor:
    """The index entry for ``platform`` (default linux/amd64), or an error listing what there is."""
    wanted = oci.parse_platform(platform or DEFAULT_PLATFORM)
    chosen = index.select(wanted)
    if chosen is None:
        offered = index.platforms()
        raise SourceError(
            f"{where} has no image for {wanted}; it has "
            + (", ".join(offered) if offered else "no platform-tagged images"),
            hint="pick one with --platform"
            + (f", e.g. --platform {offered[0]}" if offered else ""),
            path=where, platform=str(wanted), platforms=list(offered),
        )
    return chosen


def image_metadata(
    reference: str, manifest_digest: str, manifest: oci.Manifest, config: oci.ImageConfig,
    *, index_digest: str | None = None,
) -> dict[str, Any]:
    """The image facts reports carry: digests, created date, platform, layers."""
    return {
        "reference": reference,
        "digest": index_digest or manifest_digest,
        "manifest_digest": manifest_digest,
        "config_digest": manifest.config.digest,
        "media_type": manifest.media_type,
        "platform": str(config.platform),
        "created": config.created,
        "layers": len(manifest.layers),
        "compressed_bytes": sum(layer.size for layer in manifest.layers),
        "labels": dict(sorted(config.labels.items())),
    }


class ImageSource(SourceBase):
    """An image (kind ``image``, ``docker-archive`` or ``oci-layout``): its layers as units,
    its final filesystem as contents."""

    def __init__(self, ref: str, kind: str, layers: list[LayerUnit],
                 metadata: dict[str, Any]) -> None:
        super().__init__(ref)
        self._kind = kind
        self._layers = layers
        self._metadata = metadata

    def units(self) -> list[Unit]:
        """One unit per layer."""
        return list(self._layers)

    def contents(self, results: Mapping[str, dict[str, Any]]) -> Contents:
        """The final filesystem after whiteouts."""
        merged = merge_layers([(unit.key, results[unit.key]) for unit in self._layers])
        return Contents(merged.members, merged.scans, merged.origin, merged.notes)

    def metadata(self) -> dict[str, Any]:
        """Digest, created date, platform, layers."""
        return dict(self._metadata)


__all__ = ["DEFAULT_PLATFORM", "BlobOpener", "ImageSource", "LayerUnit", "choose_platform",
           "image_metadata", "layer_units"]


class LocalBlobs(Protocol):
    """Blobs by digest in a folder or an archive on disk."""

    def read(self, digest: str, limit: int) -> bytes:
        """A whole small blob, verified against its digest."""
        ...

    def opener(self, digest: str) -> BlobOpener:
        """How a worker reads a (large) blob."""
        ...


REF_NAME = "org.opencontainers.image.ref.name"
CONTAINERD_NAME = "io.containerd.image.name"


def _names(descriptor: oci.Descriptor) -> tuple[str, ...]:
    return tuple(n for n in (descriptor.annotations.get(REF_NAME),
                             descriptor.annotations.get(CONTAINERD_NAME)) if n)


def _named(index: oci.Index, name: str | None, where: str) -> oci.Descriptor | None:
    """The entry of a layout's ``index.json`` called ``name``; ``None``: choose by platform."""
    entries = [d for d in index.manifests if not d.is_attestation]
    if name is not None:
        for entry in entries:
            names = _names(entry)
            if name in names or any(n.rsplit(":", 1)[-1] == name or n.endswith("/" + name)
                                    for n in names):
                return entry
        offered = sorted({n for e in entries for n in _names(e)})
        raise SourceError(
            f"{where} has no image named {name!r}; it has "
            + (", ".join(offered) if offered else "no named images"),
            hint="give one of those names after the path", path=where, names=offered,
        )
    if len(entries) == 1:
        return entries[0]
    named = {n for e in entries for n in _names(e)}
    if len(named) > 1:
        raise SourceError(
            f"{where} holds several images: {', '.join(sorted(named))}",
            hint="name one after the path, e.g. oci:PATH:NAME", path=where,
            names=sorted(named),
        )
    return None


def resolve_local(blobs: LocalBlobs, index_bytes: bytes, name: str | None,
                  platform: str | None, where: str) -> tuple[str | None, str, oci.Manifest,
                                                             oci.ImageConfig]:
    """From an OCI ``index.json`` to one image.

    Returns ``(index digest, manifest digest, manifest, config)``.
    """
    try:
        top = oci.parse_manifest_document(index_bytes)
        if not isinstance(top, oci.Index):
            raise SourceError(f"{where}: index.json is not an image index", path=where,
                              hint="this is not an OCI image layout")
        chosen = _named(top, name, where) or choose_platform(top, platform, where)
        index_digest = None
        body = blobs.read(chosen.digest, oci.MAX_MANIFEST_BYTES)
        doc = oci.parse_manifest_document(body)
        if isinstance(doc, oci.Index):
            index_digest = chosen.digest
            chosen = choose_platform(doc, platform, where)
            doc = oci.parse_manifest_document(blobs.read(chosen.digest, oci.MAX_MANIFEST_BYTES))
            if isinstance(doc, oci.Index):
                raise SourceError(f"{where}: nested image indexes", path=where,
                                  hint="servewise reads one level of image index")
        config = oci.parse_config(blobs.read(doc.config.digest, oci.MAX_CONFIG_BYTES))
    except FormatError as error:
        raise SourceError(f"{where}: {error.message}", hint=error.hint or
                          "the layout's documents are unreadable", path=where) from None
    return index_digest, chosen.digest, doc, config


def split_named_path(ref: str, prefixes: tuple[str, ...]) -> tuple[str, str | None]:
    """``PREFIX:PATH[:NAME]`` (or a bare path) as ``(path, name)``."""
    for prefix in prefixes:
        if ref.startswith(prefix):
            ref = ref[len(prefix):]
            break
    if Path(ref).expanduser().exists() or ":" not in ref:
        return ref, None
    path, _, name = ref.partition(":")
    return path, name or None
