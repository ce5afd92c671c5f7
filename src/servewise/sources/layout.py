"""OCI image layout folders (``oci-layout``, ``index.json``, ``blobs/<alg>/<hex>``).

``oci:PATH[:NAME]`` or a folder holding ``oci-layout``. ``NAME`` picks an entry of
``index.json`` by its ``org.opencontainers.image.ref.name`` annotation; without
it the single image, or the entry for ``--platform``, is taken.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from servewise.errors import IntegrityError, SourceError
from servewise.formats import oci
from servewise.sources.blobs import FileBlob
from servewise.sources.image import (
    BlobOpener,
    ImageSource,
    image_metadata,
    layer_units,
    resolve_local,
    split_named_path,
)


class LayoutBlobs:
    """The ``blobs/`` folder of a layout."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, digest: str) -> Path:
        """Where a blob lives."""
        if not oci.is_digest(digest):
            raise SourceError(f"{self.root}: {digest!r} is not a digest", path=str(self.root),
                              hint="the layout's index is damaged")
        algorithm, _, hexdigest = digest.partition(":")
        return self.root / "blobs" / algorithm / hexdigest

    def read(self, digest: str, limit: int) -> bytes:
        """A small blob, verified."""
        path = self.path(digest)
        try:
            size = path.stat().st_size
            if size > limit:
                raise SourceError(f"{path} is {size} bytes, more than the {limit} servewise "
                                  "reads for an image document", path=str(path),
                                  hint="the layout's index is damaged")
            data = path.read_bytes()
        except OSError as error:
            raise SourceError(f"{self.root}: blob {digest[:19]}… is missing ({error.strerror})",
                              path=str(path), hint="the layout is incomplete") from None
        algorithm, _, hexdigest = digest.partition(":")
        if hashlib.new(algorithm, data).hexdigest() != hexdigest:
            raise IntegrityError(f"{path}: content does not match its digest",
                                 path=str(path), hint="the layout is damaged")
        return data

    def opener(self, digest: str) -> BlobOpener:
        """A large blob read in place."""
        return FileBlob(str(self.path(digest)))


def open_layout(ref: str, options: Any) -> ImageSource:
    """The resolver's opener for ``oci:PATH[:NAME]`` and layout folders."""
    path_text, name = split_named_path(ref, ("oci:",))
    root = Path(path_text).expanduser()
    where = str(root) + (f":{name}" if name else "")
    try:
        index_bytes = (root / "index.json").read_bytes()[: oci.MAX_MANIFEST_BYTES + 1]
    except OSError as error:
        raise SourceError(f"{root} is not an OCI image layout: index.json "
                          f"{error.strerror.lower() if error.strerror else 'unreadable'}",
                          path=str(root),
                          hint="give a folder with oci-layout and index.json") from None
    blobs = LayoutBlobs(root)
    index_digest, digest, manifest, config = resolve_local(
        blobs, index_bytes, name, getattr(options, "platform", None), where
    )
    units = layer_units(manifest, lambda d: blobs.opener(d.digest), where)
    return ImageSource(ref, "oci-layout", units,
                       image_metadata(where, digest, manifest, config, index_digest=index_digest))
