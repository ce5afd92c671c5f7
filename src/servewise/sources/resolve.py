"""One resolver from a REF to a :class:`~servewise.sources.interface.Source`.

Every kind of source is one row of :data:`RESOLVERS`: a name, a test that claims
a REF, and the ``module:function`` that opens it (imported only when used, so the
command line starts fast). Rows are tried in order; adding a source means one new
module and one row here.

REF forms, in the order they are tried:

``pypi:NAME==VERSION``
    a wheel from a package index (PyPI or ``--index-url``)
``http://…/x.whl``, ``https://…/x.whl``
    a remote wheel, read with HTTP range requests
``oci:PATH[:REF]`` or a folder holding ``oci-layout``
    an OCI image layout
``docker-archive:PATH[:REF]``, ``oci-archive:PATH[:REF]`` or a tar file
    a ``docker save`` (or OCI) archive
a ``.whl`` or ``.zip`` file; any other file or folder
    a wheel; a library, a folder or a virtual environment on disk
``[registry/]repo[:tag|@digest]``, ``docker://…``
    an image read from its registry
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from servewise.errors import FormatError, SourceError, UsageError
from servewise.formats.magic import is_zip
from servewise.formats.oci import parse_platform
from servewise.sources.deadline import Deadline, current_deadline
from servewise.sources.interface import Source


@dataclass(frozen=True)
class SourceOptions:
    """Choices that apply to remote and image sources."""

    platform: str | None = None
    """``os/arch[/variant]`` for images and wheels; ``None``: linux/amd64."""
    insecure: bool = False
    """Allow plain HTTP and unverified TLS for registries that are not on this machine."""
    index_url: str | None = None
    """Package index for ``pypi:`` REFs (PEP 503/691 simple API); ``None``: PyPI."""
    deadline: Deadline | None = None
    """The command's network deadline (``--timeout``); ``None``: the current one."""

    def network_deadline(self) -> Deadline:
        """The deadline network sources keep: the one given, else :func:`current_deadline`."""
        return self.deadline or current_deadline()

    def __post_init__(self) -> None:
        platform = self.platform
        if platform is None:
            return
        if "/" in platform:
            try:
                parse_platform(platform)
            except FormatError as error:
                raise UsageError(f"--platform {platform!r}: {error.expected}", found=platform,
                                 hint=error.hint) from None
        elif not re.fullmatch(r"(?:many|musl)?linux\w*_[a-z0-9_]+|any", platform):
            raise UsageError(
                f"--platform {platform!r} is neither os/arch nor a wheel platform tag",
                hint="e.g. --platform linux/arm64, or manylinux_2_28_aarch64 for a wheel",
                found=platform,
            )


@dataclass(frozen=True)
class Resolver:
    """One kind of source: which REFs it claims and where its opener lives."""

    name: str
    claims: Callable[[str], bool]
    opener: str
    """``module:function`` taking ``(ref, options)`` and returning a Source."""

    def open(self, ref: str, options: SourceOptions) -> Source:
        """Import the opener and open ``ref``."""
        module, _, function = self.opener.partition(":")
        opener: Callable[[str, SourceOptions], Source] = getattr(
            importlib.import_module(module), function
        )
        return opener(ref, options)


_PATH_SUFFIXES = (".so", ".whl", ".zip", ".tar", ".cubin", ".fatbin", ".gz", ".tgz", ".zst")


def looks_like_path(ref: str) -> bool:
    """Whether a REF that names nothing on disk was still meant as a path."""
    return (
        ref.startswith((".", "/", "~"))
        or ref.endswith("/")
        or Path(ref).suffix in _PATH_SUFFIXES
        or ".so." in Path(ref).name
        or "\\" in ref
    )


def _exists(ref: str) -> bool:
    path = Path(ref).expanduser()
    return path.exists() or path.is_symlink()


def _is_tar_file(ref: str) -> bool:
    path = Path(ref).expanduser()
    if not path.is_file():
        return False
    if path.name.endswith((".tar.gz", ".tgz", ".tar.zst")):
        return True  # the archive source says how to decompress it
    try:
        with open(path, "rb") as handle:
            head = handle.read(512)
    except OSError:
        return False
    return len(head) == 512 and head[257:262] == b"ustar"


def _is_layout_folder(ref: str) -> bool:
    return (Path(ref).expanduser() / "oci-layout").is_file()


def _is_wheel_file(ref: str) -> bool:
    path = Path(ref).expanduser()
    if not path.is_file():
        return False
    if path.suffix == ".whl":
        return True
    if path.suffix != ".zip":
        return False
    try:
        with open(path, "rb") as handle:
            prefix = handle.read(4)
    except OSError:
        return False
    return is_zip(prefix)


RESOLVERS: tuple[Resolver, ...] = (
    Resolver("pypi", lambda ref: ref.startswith("pypi:"), "servewise.sources.pypi:open_pypi"),
    Resolver("remote-wheel", lambda ref: ref.startswith(("http://", "https://")),
             "servewise.sources.remote_wheel:open_url"),
    Resolver("oci-layout", lambda ref: ref.startswith("oci:") or _is_layout_folder(ref),
             "servewise.sources.layout:open_layout"),
    Resolver("docker-archive",
             lambda ref: ref.startswith(("docker-archive:", "oci-archive:")) or _is_tar_file(ref),
             "servewise.sources.archive:open_archive"),
    Resolver("wheel", _is_wheel_file, "servewise.sources.wheel:open_wheel"),
    Resolver("local", _exists, "servewise.sources.local:open_local"),
    Resolver("image", lambda ref: ref.startswith("docker://") or not looks_like_path(ref),
             "servewise.sources.registry:open_image"),
)


def open_source(ref: str, options: SourceOptions | None = None) -> Source:
    """The build named by ``ref``, opened by the first resolver that claims it."""
    options = options or SourceOptions()
    for resolver in RESOLVERS:
        if resolver.claims(ref):
            return resolver.open(ref, options)
    raise SourceError(
        f"no such file or folder: {ref}",
        hint="give a .so/.cubin file, a folder (site-packages or a virtual environment), "
        "a .whl file or URL, pypi:NAME==VERSION, a docker save tarball, an OCI layout "
        "folder or an image reference",
        path=ref,
    )


__all__ = ["RESOLVERS", "Resolver", "SourceOptions", "looks_like_path", "open_source"]
