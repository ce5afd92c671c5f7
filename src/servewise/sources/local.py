"""Builds on local disk: one library file, or a folder (site-packages, a virtual environment)."""

from __future__ import annotations

import os
import stat
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from servewise.errors import SourceError
from servewise.formats.magic import PREFIX_BYTES
from servewise.sources.interface import CHUNK_SIZE, Member
from servewise.sources.members import MemberSource

#: At most this many files are listed in a folder (a guard against scanning ``/``).
MAX_FILES = 2_000_000


def file_identity(info: os.stat_result) -> str:
    """Content identity of a file without reading it: size, modification time, inode."""
    return f"file:{info.st_size}:{info.st_mtime_ns}:{info.st_dev}:{info.st_ino}"


def file_chunks(path: str, chunk_size: int = CHUNK_SIZE) -> Iterator[bytes]:
    """The bytes of a file in chunks."""
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed by the generator below
    except OSError as error:
        raise SourceError(
            f"cannot read {path}: {error.strerror}",
            hint="check the path and its permissions",
            path=path,
        ) from None
    return _FileChunks(handle, path, chunk_size)


class _FileChunks(Iterator[bytes]):
    """A file's chunks; :meth:`close` closes the file even when no chunk was taken (a
    generator that never started would leave it to the garbage collector)."""

    def __init__(self, handle: BinaryIO, path: str, chunk_size: int) -> None:
        self._handle = handle
        self._chunks = _chunks_of(handle, path, chunk_size)

    def __next__(self) -> bytes:
        return next(self._chunks)

    def close(self) -> None:
        """Stop reading and close the file."""
        self._chunks.close()
        self._handle.close()


@dataclass(frozen=True)
class FileReader:
    """Reads a file on disk again, in any process."""

    path: str

    def chunks(self, chunk_size: int = CHUNK_SIZE) -> Iterator[bytes]:
        """The file's bytes."""
        return file_chunks(self.path, chunk_size)


def _chunks_of(handle: BinaryIO, path: str, chunk_size: int) -> Generator[bytes, None, None]:
    # The first read is tiny: a reader that decides from the magic alone whether a file can
    # hold GPU code stops there, whatever the file's size.
    size = min(chunk_size, PREFIX_BYTES)
    with handle:
        while True:
            try:
                chunk = handle.read(size)
                size = chunk_size
            except OSError as error:
                raise SourceError(
                    f"cannot read {path}: {error.strerror}", path=path, hint="check the disk"
                ) from None
            if not chunk:
                return
            yield chunk


def _site_packages_roots(folder: Path) -> list[Path]:
    """The site-packages folders of a virtual environment or prefix, if ``folder`` is one."""
    roots: dict[Path, Path] = {}
    for pattern in ("lib/python3*/site-packages", "lib/python3*/dist-packages",
                    "lib64/python3*/site-packages", "Lib/site-packages"):
        for path in sorted(folder.glob(pattern)):
            # A venv's lib64 is a symbolic link to lib: list each real folder once.
            if path.is_dir():
                roots.setdefault(path.resolve(), path)
    return list(roots.values())


class LocalSource(MemberSource):
    """A single file, or every regular file below a folder."""

    def __init__(self, path: Path) -> None:
        super().__init__(str(path))
        self._path = path
        try:
            info = path.lstat()
        except OSError as error:
            raise SourceError(
                f"cannot open {path}: {error.strerror}",
                hint="give a .so/.cubin file, a folder, a virtual environment or a .whl file",
                path=str(path),
            ) from None
        if stat.S_ISLNK(info.st_mode):
            try:
                info = path.stat()
            except OSError:
                raise SourceError(
                    f"{path} is a symbolic link to {os.readlink(path)}, which does not exist",
                    hint="give the path of the real file",
                    path=str(path),
                ) from None
        self._is_dir = stat.S_ISDIR(info.st_mode)
        if not self._is_dir and not stat.S_ISREG(info.st_mode):
            raise SourceError(
                f"{path} is neither a regular file nor a folder",
                hint="give a .so/.cubin file, a folder or a .whl file",
                path=str(path),
            )

    @property
    def kind(self) -> str:
        """``folder`` or ``file``."""
        return "folder" if self._is_dir else "file"

    def list_members(self) -> list[Member]:
        """The file itself, or every regular file below the folder (site-packages relative)."""
        if not self._is_dir:
            info = self._path.stat()
            return [
                Member(self._path.name, info.st_size, file_identity(info),
                       FileReader(str(self._path)))
            ]
        roots = _site_packages_roots(self._path) or [self._path]
        found: list[Member] = []
        for root in roots:
            self._walk(root, found)
        return found

    def _walk(self, root: Path, found: list[Member]) -> None:
        def on_error(error: OSError) -> None:
            self._notes.append(f"skipped {error.filename}: {error.strerror}")

        for folder, dirs, files in os.walk(root, onerror=on_error, followlinks=False):
            # os.walk lists a symlink to a folder among ``dirs`` (and never enters it):
            # name it in the notes like a symlinked file instead of dropping it silently.
            for name in [name for name in dirs if os.path.islink(os.path.join(folder, name))]:
                full = os.path.join(folder, name)
                rel = os.path.relpath(full, root).replace(os.sep, "/")
                self._notes.append(f"skipped symbolic link {rel} -> {os.readlink(full)}")
                dirs.remove(name)
            dirs.sort()
            for name in sorted(files):
                full = os.path.join(folder, name)
                try:
                    info = os.lstat(full)
                except OSError as error:
                    self._notes.append(f"skipped {full}: {error.strerror}")
                    continue
                rel = os.path.relpath(full, root).replace(os.sep, "/")
                if stat.S_ISLNK(info.st_mode):
                    self._notes.append(f"skipped symbolic link {rel} -> {os.readlink(full)}")
                    continue
                if not stat.S_ISREG(info.st_mode):
                    continue
                if not os.access(full, os.R_OK):
                    self._notes.append(f"skipped {rel}: not readable")
                    continue
                found.append(Member(rel, info.st_size, file_identity(info), FileReader(full)))
                if len(found) > MAX_FILES:
                    raise SourceError(
                        f"{self._path} holds more than {MAX_FILES} files",
                        hint="point at the engine's site-packages or virtual environment",
                        path=str(self._path),
                    )


def open_local(ref: str, options: object = None) -> LocalSource:
    """The resolver's opener for files and folders on disk."""
    return LocalSource(Path(ref).expanduser())
