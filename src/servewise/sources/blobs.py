"""Blob streams: bytes pulled from any source, counted, hashed, and decompressed on the fly.

A layer blob is never written out. :class:`VerifiedBlob` turns an iterator of
chunks (an HTTP response, a file range) into a ``read(n)`` stream that checks the
declared size as it goes and the digest at the end; :func:`layer_stream` puts a
gzip (ISA-L) or zstd decompressor in front when the first bytes say so, whatever
the media type claims, and stops a layer that inflates beyond a sane ratio.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import zstandard
from isal import isal_zlib

from servewise.errors import ArchiveLimitError, IntegrityError, SourceError
from servewise.sources.interface import CHUNK_SIZE

GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
#: Uncompressed bytes allowed per compressed byte before a layer is called a bomb.
MAX_LAYER_RATIO = 2000
#: Below this many uncompressed bytes, no ratio is enforced.
RATIO_FLOOR = 64 * 2**20
#: What isal raises on damaged deflate data (its type stubs do not declare it).
_INFLATE_ERROR: type[Exception] = getattr(isal_zlib, "IsalError", Exception)


class ChunkStream:
    """``read(n)`` over an iterator of byte chunks, with a small look-ahead."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self._chunks = chunks
        self._buf = memoryview(b"")
        self._done = False

    def _pull(self) -> bytes:
        """The next chunk from the iterator (``b""`` at the end)."""
        if self._done:
            return b""
        for chunk in self._chunks:
            if chunk:
                return chunk
        self._done = True
        self._at_end()
        return b""

    def _at_end(self) -> None:
        """Called once when the iterator is exhausted."""

    def peek(self, size: int) -> bytes:
        """Up to ``size`` bytes from the current position, without consuming them."""
        while len(self._buf) < size:
            chunk = self._pull()
            if not chunk:
                break
            self._buf = memoryview(bytes(self._buf) + chunk)
        return bytes(self._buf[:size])

    def read(self, size: int = -1, /) -> bytes:
        """Up to ``size`` bytes (everything left for ``-1``); ``b""`` at the end."""
        if size < 0:
            parts = [bytes(self._buf)]
            self._buf = memoryview(b"")
            while chunk := self._pull():
                parts.append(chunk)
            return b"".join(parts)
        if not self._buf:
            chunk = self._pull()
            if not chunk:
                return b""
            if len(chunk) <= size:
                return chunk
            self._buf = memoryview(chunk)
        out = bytes(self._buf[:size])
        self._buf = self._buf[size:]
        return out

    def unread(self, data: bytes) -> None:
        """Put bytes back in front of the stream (what a decompressor read too far)."""
        if data:
            self._buf = memoryview(bytes(data) + bytes(self._buf))

    def readinto(self, target: Any) -> int:
        """File-object protocol for decompressors that want it."""
        view = memoryview(target).cast("B")
        data = self.read(len(view))
        view[: len(data)] = data
        return len(data)

    def readable(self) -> bool:
        """File-object protocol."""
        return True

    def close(self) -> None:
        """Stop the underlying iterator (closes an HTTP response)."""
        close = getattr(self._chunks, "close", None)
        if close is not None:
            close()


class VerifiedBlob(ChunkStream):
    """A blob's bytes, checked against its declared size and digest."""

    def __init__(self, chunks: Iterator[bytes], digest: str, size: int, where: str) -> None:
        super().__init__(self._counted(chunks))
        algorithm, _, self._hex = digest.partition(":")
        self._hash = hashlib.new(algorithm)
        self._digest = digest
        self._size = size
        self._where = where
        self.received = 0

    def _counted(self, chunks: Iterator[bytes]) -> Iterator[bytes]:
        try:
            for chunk in chunks:
                self.received += len(chunk)
                if self.received > self._size:
                    raise IntegrityError(
                        f"{self._where}: more than the {self._size} bytes its descriptor declares",
                        hint="the registry or archive serves different bytes than the manifest "
                        "names; nothing from it was used",
                        path=self._where, declared_bytes=self._size,
                    )
                self._hash.update(chunk)
                yield chunk
        finally:
            close = getattr(chunks, "close", None)
            if close is not None:
                close()

    def _at_end(self) -> None:
        if self.received != self._size:
            raise IntegrityError(
                f"{self._where}: ends after {self.received} of {self._size} bytes",
                hint="the blob is truncated; try again, and if it persists the source is damaged",
                path=self._where, declared_bytes=self._size, received_bytes=self.received,
            )
        if self._hash.hexdigest() != self._hex:
            raise IntegrityError(
                f"{self._where}: content digest is sha256:{self._hash.hexdigest()[:16]}…, "
                f"not the {self._digest[:23]}… it was asked for",
                hint="the registry or archive serves different bytes than the manifest names; "
                "nothing from it was used",
                path=self._where, expected_digest=self._digest,
            )

    def drain(self) -> None:
        """Read (and hash) whatever is left, so the digest is checked."""
        self._buf = memoryview(b"")
        while self._pull():
            pass


class GzipReader:
    """A gzip stream (one or more members) inflated with ISA-L, at most ``size`` bytes a read.

    Faster than ``igzip.IGzipFile`` here because it hands ISA-L large input buffers.
    """

    def __init__(self, raw: ChunkStream, input_size: int = 1 << 20) -> None:
        self._raw = raw
        self._input_size = input_size
        self._inflater: Any = None  # None between members
        self._spare = b""  # input read but not yet given to an inflater

    def _next_member(self) -> bool:
        """Start the next member; ``False`` at the end of the stream."""
        while True:
            rest = self._spare or self._raw.read(self._input_size)
            self._spare = b""
            if not rest:
                return False
            while len(rest) < 2:
                more = self._raw.read(self._input_size)
                if not more:
                    break
                rest += more
            if not rest.strip(b"\0"):
                continue  # zero padding after the last member
            if not rest.startswith(GZIP_MAGIC):
                raise OSError("bytes after a gzip member that start no other member")
            self._inflater = isal_zlib.decompressobj(31)
            self._spare = rest
            return True

    def read(self, size: int = -1, /) -> bytes:
        """Up to ``size`` inflated bytes; ``b""`` at the end of the last member."""
        limit = size if size > 0 else CHUNK_SIZE
        while True:
            if self._inflater is None and not self._next_member():
                return b""
            inflater = self._inflater
            data = self._spare or inflater.unconsumed_tail
            self._spare = b""
            if not data:
                data = self._raw.read(self._input_size)
                if not data:
                    raise EOFError("the gzip stream ends before its end-of-stream marker")
            out: bytes = inflater.decompress(data, limit)
            if inflater.eof:
                self._spare = inflater.unused_data
                self._inflater = None
            if out:
                return out


class _Decompressed:
    """A decompressor's output with its errors turned into servewise errors and a bomb guard."""

    def __init__(self, inner: Any, raw: VerifiedBlob, method: str, where: str,
                 declared: int) -> None:
        self._inner = inner
        self._raw = raw
        self.method = method
        self._where = where
        self._limit = max(RATIO_FLOOR, MAX_LAYER_RATIO * max(declared, 1))
        self.produced = 0

    def read(self, size: int = -1, /) -> bytes:
        try:
            data: bytes = self._inner.read(size)
        except (SourceError, ArchiveLimitError):
            raise
        except (OSError, EOFError, zstandard.ZstdError, ValueError, _INFLATE_ERROR) as error:
            raise SourceError(
                f"{self._where}: damaged {self.method} data ({error})",
                hint="the layer is damaged or truncated; pull it again",
                path=self._where,
            ) from None
        self.produced += len(data)
        if self.produced > self._limit:
            raise ArchiveLimitError(
                f"{self._where} decompresses to more than {self._limit} bytes",
                hint="the layer is damaged or a decompression bomb; it was not read further",
                path=self._where,
            )
        return data


@dataclass(frozen=True)
class LayerStream:
    """A layer's tar bytes and what was done to get them."""

    stream: VerifiedBlob | _Decompressed
    compression: str
    """``gzip``, ``zstd`` or ``none``, from the bytes themselves."""


def layer_stream(raw: VerifiedBlob, where: str, declared: int) -> LayerStream:
    """The tar stream inside a layer blob, decompressed by what its first bytes say."""
    head = raw.peek(4)
    source: Any = raw
    if head.startswith(GZIP_MAGIC):
        return LayerStream(_Decompressed(GzipReader(raw), raw, "gzip", where, declared), "gzip")
    if head.startswith(ZSTD_MAGIC):
        zstd_reader = zstandard.ZstdDecompressor().stream_reader(
            source, read_size=CHUNK_SIZE, read_across_frames=True, closefd=False
        )
        return LayerStream(_Decompressed(zstd_reader, raw, "zstd", where, declared), "zstd")
    return LayerStream(raw, "none")


@dataclass(frozen=True)
class FileBlob:
    """A blob stored in a file on disk, whole or as a byte range (a member of a tar)."""

    path: str
    offset: int = 0
    length: int = -1

    def chunks(self, chunk_size: int = CHUNK_SIZE) -> Iterator[bytes]:
        """The blob's bytes."""
        try:
            handle = open(self.path, "rb")  # noqa: SIM115 - closed by the generator
        except OSError as error:
            raise SourceError(f"cannot read {self.path}: {error.strerror}",
                              path=self.path) from None
        return self._read(handle, chunk_size)

    def _read(self, handle: Any, chunk_size: int) -> Iterator[bytes]:
        with handle:
            handle.seek(self.offset)
            left = (self.length if self.length >= 0
                    else max(os.fstat(handle.fileno()).st_size - self.offset, 0))
            while left:
                data = handle.read(min(chunk_size, left))
                if not data:
                    return
                left -= len(data)
                yield data


__all__ = ["ChunkStream", "FileBlob", "GzipReader", "LayerStream", "VerifiedBlob",
           "layer_stream"]
