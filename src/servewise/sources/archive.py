"""``docker save`` archives (old and Docker 25+ layouts) and OCI archives, read in place.

One pass over the tar headers (seeking past member data) indexes the archive.
``manifest.json`` is preferred when present (moby#51389: ``index.json`` may list
fewer images), else ``index.json`` (an OCI layout inside a tar, as ``skopeo copy
oci-archive:`` writes). Old archives name layers ``<id>/layer.tar``: their digest
is the config's ``diff_id``; Docker 25+ names them ``blobs/sha256/<hex>``. Each
layer is then a byte range of the archive, read by a worker like any blob.

``docker-archive:PATH[:REPO:TAG]``, ``oci-archive:PATH[:NAME]``, or the path alone.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from servewise.errors import ArchiveLimitError, FormatError, IntegrityError, SourceError
from servewise.formats import oci, tar
from servewise.sources.blobs import GZIP_MAGIC, ZSTD_MAGIC, FileBlob
from servewise.sources.image import (
    BlobOpener,
    ImageSource,
    image_metadata,
    layer_units,
    resolve_local,
    split_named_path,
)
from servewise.sources.layers import normalize

#: Most members an archive may have.
MAX_MEMBERS = 1_000_000
_HEX_NAME_RE = re.compile(r"(?:^|/)(?:sha256[:/])?([a-f0-9]{64})(?:\.tar(?:\.gz|\.zst)?|\.json)?$")


class ArchiveIndex:
    """Where each regular member of an uncompressed tar lies."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.members: dict[str, tuple[int, int]] = {}
        try:
            with open(path, "rb") as handle:
                head = handle.read(4)
                if head.startswith(GZIP_MAGIC) or head.startswith(ZSTD_MAGIC):
                    method = "gzip" if head.startswith(GZIP_MAGIC) else "zstd"
                    raise SourceError(
                        f"{path} is a {method}-compressed archive",
                        hint="servewise reads docker save archives in place, uncompressed: "
                        f"decompress it first ({'gunzip' if method == 'gzip' else 'unzstd'})",
                        path=str(path),
                    )
                handle.seek(0)
                walker = tar.TarWalker(handle, skip=lambda n: handle.seek(n, 1),
                                       where=str(path))
                for entry in walker:
                    if entry.kind != tar.REGULAR:
                        continue
                    name = normalize(entry.name, str(path))
                    if name is None:
                        continue
                    self.members[name] = (entry.data_offset, entry.size)
                    if len(self.members) > MAX_MEMBERS:
                        raise ArchiveLimitError(f"{path} has more than {MAX_MEMBERS} members",
                                                path=str(path),
                                                hint="this is not a docker save archive")
        except OSError as error:
            raise SourceError(f"cannot read {path}: {error.strerror}", path=str(path),
                              hint="check the path and its permissions") from None
        except FormatError as error:
            raise SourceError(f"{path}: {error.message}", path=str(path),
                              hint="the archive is damaged or truncated") from None
        size = path.stat().st_size
        for name, (offset, length) in self.members.items():
            if offset + length > size:
                raise SourceError(f"{path}: member {name} ends past the end of the file",
                                  path=str(path), hint="the archive is truncated")

    def read(self, name: str, limit: int) -> bytes:
        """A whole small member."""
        if name not in self.members:
            raise SourceError(f"{self.path} has no member {name}", path=str(self.path),
                              hint="the archive is incomplete")
        offset, size = self.members[name]
        if size > limit:
            raise SourceError(f"{self.path}: {name} is {size} bytes, more than the {limit} "
                              "servewise reads for an image document", path=str(self.path),
                              hint="this is not a docker save archive")
        with open(self.path, "rb") as handle:
            handle.seek(offset)
            return handle.read(size)

    def blob(self, name: str) -> FileBlob:
        """A member as a byte range."""
        if name not in self.members:
            raise SourceError(f"{self.path} has no member {name}", path=str(self.path),
                              hint="the archive is incomplete")
        offset, size = self.members[name]
        return FileBlob(str(self.path), offset, size)


class ArchiveBlobs:
    """The OCI ``blobs/`` of an archive, by digest."""

    def __init__(self, index: ArchiveIndex) -> None:
        self.index = index

    @staticmethod
    def name(digest: str) -> str:
        """The member holding a blob."""
        algorithm, _, hexdigest = digest.partition(":")
        return f"blobs/{algorithm}/{hexdigest}"

    def read(self, digest: str, limit: int) -> bytes:
        """A small blob, verified."""
        data = self.index.read(self.name(digest), limit)
        algorithm, _, hexdigest = digest.partition(":")
        if hashlib.new(algorithm, data).hexdigest() != hexdigest:
            raise IntegrityError(f"{self.index.path}: blob {digest[:19]}… does not match its "
                                 "digest", path=str(self.index.path),
                                 hint="the archive is damaged")
        return data

    def opener(self, digest: str) -> BlobOpener:
        """A layer read in place."""
        return self.index.blob(self.name(digest))


def _pick(entries: list[dict[str, Any]], name: str | None, where: str) -> dict[str, Any]:
    if not entries:
        raise SourceError(f"{where}: manifest.json lists no image", path=where,
                          hint="this archive holds no image")
    if name is None:
        if len(entries) == 1:
            return entries[0]
        tags = [t for e in entries for t in e.get("RepoTags") or []]
        raise SourceError(f"{where} holds {len(entries)} images: {', '.join(tags) or 'untagged'}",
                          hint="name one: docker-archive:PATH:REPO:TAG", path=where, tags=tags)
    for entry in entries:
        tags = entry.get("RepoTags") or []
        if name in tags or any(t.rsplit(":", 1)[-1] == name for t in tags):
            return entry
    tags = [t for e in entries for t in e.get("RepoTags") or []]
    raise SourceError(f"{where} has no image tagged {name!r}; it has {', '.join(tags)}",
                      hint="give one of those tags after the path", path=where, tags=tags)


def _from_manifest_json(index: ArchiveIndex, name: str | None, where: str
                        ) -> tuple[str, oci.Manifest, oci.ImageConfig, list[BlobOpener]]:
    try:
        entries = json.loads(index.read("manifest.json", oci.MAX_MANIFEST_BYTES))
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            raise ValueError("not a list of objects")
    except ValueError as error:
        raise SourceError(f"{where}: manifest.json is unreadable: {error}", path=where,
                          hint="the archive is damaged") from None
    entry = _pick(entries, name, where)
    config_name = str(entry.get("Config", ""))
    config_bytes = index.read(config_name, oci.MAX_CONFIG_BYTES)
    config = oci.parse_config(config_bytes)
    layer_names = [str(n) for n in entry.get("Layers") or []]
    if len(config.diff_ids) not in (0, len(layer_names)):
        raise SourceError(f"{where}: the config lists {len(config.diff_ids)} layers, "
                          f"manifest.json {len(layer_names)}", path=where,
                          hint="the archive is damaged")
    layers: list[oci.Descriptor] = []
    openers: list[BlobOpener] = []
    for number, layer_name in enumerate(layer_names):
        match = _HEX_NAME_RE.search(layer_name)
        if match:
            digest = "sha256:" + match.group(1)
        elif config.diff_ids:
            digest = config.diff_ids[number]  # an old layer.tar: uncompressed, so its diff_id
        else:
            raise SourceError(f"{where}: no digest for layer {layer_name}", path=where,
                              hint="the archive's config has no rootfs.diff_ids")
        blob = index.blob(normalize(layer_name, where) or layer_name)
        layers.append(oci.Descriptor("", digest, blob.length))
        openers.append(blob)
    config_digest = "sha256:" + hashlib.sha256(config_bytes).hexdigest()
    manifest = oci.Manifest("docker-save", oci.Descriptor(oci.DOCKER_CONFIG, config_digest,
                                                          len(config_bytes)), tuple(layers))
    return config_digest, manifest, config, openers


def open_archive(ref: str, options: Any) -> ImageSource:
    """The resolver's opener for ``docker save`` and OCI archives."""
    path_text, name = split_named_path(ref, ("docker-archive:", "oci-archive:"))
    path = Path(path_text).expanduser()
    where = str(path) + (f":{name}" if name else "")
    index = ArchiveIndex(path)
    index_digest = None
    try:
        if "manifest.json" in index.members and not ref.startswith("oci-archive:"):
            digest, manifest, config, openers = _from_manifest_json(index, name, where)
            by_digest = {layer.digest: opener
                         for layer, opener in zip(manifest.layers, openers, strict=True)}
            units = layer_units(manifest, lambda d: by_digest[d.digest], where)
        elif "index.json" in index.members:
            blobs = ArchiveBlobs(index)
            index_digest, digest, manifest, config = resolve_local(
                blobs, index.read("index.json", oci.MAX_MANIFEST_BYTES), name,
                getattr(options, "platform", None), where,
            )
            units = layer_units(manifest, lambda d: blobs.opener(d.digest), where)
        else:
            raise SourceError(f"{where} is a tar archive but not a docker save or OCI archive: "
                              "it has neither manifest.json nor index.json", path=where,
                              hint="give a `docker save` archive, an OCI layout, or a folder")
    except FormatError as error:
        raise SourceError(f"{where}: {error.message}", path=where,
                          hint="the archive's documents are unreadable") from None
    metadata = image_metadata(where, digest, manifest, config, index_digest=index_digest)
    if manifest.media_type == "docker-save":
        # manifest.json names no manifest: the image is known by its config digest (its ID).
        metadata.update(digest=None, manifest_digest=None, image_id=digest)
    return ImageSource(ref, "docker-archive", units, metadata)
