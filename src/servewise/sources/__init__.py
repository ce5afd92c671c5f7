"""Where build bytes come from: a local file, a folder, a wheel."""

from __future__ import annotations

from pathlib import Path

from servewise.errors import SourceError
from servewise.sources.interface import BuildSource, Member, member_chunks
from servewise.sources.local import LocalSource
from servewise.sources.wheel import WheelSource, is_zip

__all__ = ["BuildSource", "LocalSource", "Member", "WheelSource", "member_chunks", "open_source"]


def open_source(ref: str) -> BuildSource:
    """The build named by ``ref``: a ``.whl``/zip file, a folder, or a single library file."""
    path = Path(ref).expanduser()
    if not path.exists() and not path.is_symlink():
        raise SourceError(
            f"no such file or folder: {ref}",
            hint="give a .so/.cubin file, a folder (site-packages or a virtual environment) "
            "or a .whl file",
            path=ref,
        )
    if path.is_file():
        try:
            with open(path, "rb") as handle:
                prefix = handle.read(4)
        except OSError as error:
            raise SourceError(
                f"cannot read {ref}: {error.strerror}", path=ref,
                hint="check the file's permissions",
            ) from None
        if path.suffix == ".whl" or (path.suffix == ".zip" and is_zip(prefix)):
            return WheelSource(path)
    return LocalSource(path)
