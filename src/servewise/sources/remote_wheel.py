"""Wheels on a web server, read with HTTP range requests; a streaming pass when there are none.

The first request asks for the archive's last 64 KiB (a suffix range): the answer
gives the file's size and its end records. The central directory is then read in
one more range, and each library is fetched on its own, in a worker process, as the
byte range from its local header to the next entry: the transfer is the libraries'
compressed size plus the directory and the few metadata files provenance reads.

A server that ignores ``Range`` (it answers 200 with the whole file) is read in one
streaming pass instead: the local headers are walked in order, libraries scanned as
they arrive, and the connection closed at the central directory. The report notes it.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import posixpath
import struct
import zipfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from servewise.errors import IntegrityError, RegistryError, SourceError
from servewise.formats.pyindex import parse_wheel_name
from servewise.sources._http import httpx
from servewise.sources.blobs import ChunkStream
from servewise.sources.deadline import Deadline, current_deadline, guarded, host_of, send
from servewise.sources.interface import (
    CHUNK_SIZE,
    CapturedBytes,
    Contents,
    Member,
    ScanFn,
    SourceBase,
    Unit,
    read_exact,
)
from servewise.sources.layers import PassCollector
from servewise.sources.wheel import (
    MAX_ENTRIES,
    ZipSource,
    _check_end_records,
    inflate_data,
    inflate_entry,
)

TAIL_BYTES = 65536 + 22
_LOCAL = b"PK\x03\x04"
_CENTRAL = b"PK\x01\x02"
_DESCRIPTOR = b"PK\x07\x08"


def _client() -> httpx.Client:
    return httpx.Client(follow_redirects=True,
                        headers={"User-Agent": "servewise", "Accept-Encoding": "identity"})


def _get(client: httpx.Client, url: str, deadline: Deadline, what: str, *,
         byte_range: str | None = None, stream: bool = False) -> httpx.Response:
    """One GET within the deadline, with the retry policy of :func:`send`."""
    headers = {"Range": f"bytes={byte_range}"} if byte_range else None
    return send(client, client.build_request("GET", url, headers=headers), deadline,
                host=host_of(url), what=what, stream=stream)


def _http_error(url: str, response: httpx.Response) -> RegistryError:
    return RegistryError(f"{url}: HTTP {response.status_code}",
                         hint="check the URL" if response.status_code < 500 else "try again later",
                         url=url, status=response.status_code)


def _transport_error(url: str, error: Exception) -> RegistryError:
    return RegistryError(f"cannot reach {url}: {error}", url=url,
                         hint="check the URL and the network")


class _NoRanges(Exception):
    """The server answered a range request with the whole file."""

    def __init__(self, response: httpx.Response) -> None:
        super().__init__("no range support")
        self.response = response


class RangeFile(io.RawIOBase):
    """A seekable, read-only view of a remote file; every read becomes a cached range request."""

    def __init__(self, client: httpx.Client, url: str, size: int, tail: bytes,
                 deadline: Deadline | None = None) -> None:
        super().__init__()
        self._client = client
        self._deadline = deadline or current_deadline()
        self._url = url
        self._size = size
        self._pos = 0
        self._pieces: list[tuple[int, bytes]] = [(size - len(tail), tail)]
        self.transferred = len(tail)

    def readable(self) -> bool:
        """Yes."""
        return True

    def seekable(self) -> bool:
        """Yes."""
        return True

    def tell(self) -> int:
        """The position."""
        return self._pos

    def seek(self, offset: int, whence: int = 0) -> int:
        """Move the position."""
        base = {0: 0, 1: self._pos, 2: self._size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def read(self, size: int = -1) -> bytes:
        """Bytes from the cache, or one range request."""
        end = self._size if size is None or size < 0 else min(self._size, self._pos + size)
        if end <= self._pos:
            return b""
        data = self.fetch(self._pos, end)
        self._pos = end
        return data

    def readinto(self, buffer: Any) -> int:
        """File-object protocol."""
        data = self.read(len(buffer))
        memoryview(buffer).cast("B")[: len(data)] = data
        return len(data)

    def fetch(self, start: int, end: int) -> bytes:
        """Bytes ``start`` to ``end`` (exclusive)."""
        for at, piece in self._pieces:
            if at <= start and end <= at + len(piece):
                return piece[start - at : end - at]
        for at, piece in self._pieces:
            if start < at < end <= at + len(piece):  # the end is cached: fetch the rest only
                return self.fetch(start, at) + piece[: end - at]
        try:
            response = _get(self._client, self._url, self._deadline,
                            f"bytes {start}-{end - 1} of the wheel",
                            byte_range=f"{start}-{end - 1}")
        except httpx.TransportError as error:
            raise _transport_error(self._url, error) from None
        if response.status_code != 206:
            raise _http_error(self._url, response)
        data = response.content
        self.transferred += len(data)
        if len(data) != end - start:
            raise IntegrityError(f"{self._url}: asked for {end - start} bytes, got {len(data)}",
                                 url=self._url, hint="the server changed the file; try again")
        self._pieces.append((start, data))
        return data


@dataclass(frozen=True)
class RemoteEntryReader:
    """One entry of a remote zip, fetched as one byte range in any process."""

    url: str
    offset: int
    end: int
    compressed_size: int
    size: int
    method: int
    name: str
    deadline: Deadline | None = None

    def chunks(self, chunk_size: int = CHUNK_SIZE) -> Iterator[bytes]:
        """The entry's bytes."""
        client = _client()
        deadline = self.deadline or current_deadline()
        what = f"{self.name} in the wheel"
        try:
            answer = _get(client, self.url, deadline, what,
                          byte_range=f"{self.offset}-{self.end - 1}", stream=True)
            with contextlib.closing(answer):
                if answer.status_code != 206:
                    raise _http_error(self.url, answer)
                stream = ChunkStream(guarded(answer.iter_bytes(1 << 20), deadline,
                                             host=host_of(self.url), what=what))
                yield from inflate_entry(stream, f"{self.url}!{self.name}", self.offset,
                                         self.compressed_size, self.size, self.method, chunk_size)
        except httpx.HTTPError as error:
            raise _transport_error(self.url, error) from None
        finally:
            client.close()


def _not_a_wheel(url: str, why: str) -> SourceError:
    return SourceError(f"{url} is not a wheel: {why}",
                       hint="give the URL of a .whl file (a zip archive), or pypi:NAME==VERSION",
                       url=url)


class RemoteWheelSource(ZipSource):
    """A wheel read from a web server with range requests."""

    def __init__(self, ref: str, url: str, client: httpx.Client, size: int, tail: bytes,
                 metadata: dict[str, Any], deadline: Deadline | None = None) -> None:
        self._url = url
        self._deadline = deadline or current_deadline()
        self.file = RangeFile(client, url, size, tail, self._deadline)
        try:
            _check_end_records(url, self.file)  # type: ignore[arg-type]
            archive = zipfile.ZipFile(self.file)
            infos = archive.infolist()
            directory = int(getattr(archive, "start_dir", size))
        except (zipfile.BadZipFile, ValueError, struct.error) as error:
            raise _not_a_wheel(url, f"the zip directory is unreadable ({error})") from None
        finally:
            client.close()  # the directory is read; entries are fetched by their own clients
        self._ends: dict[int, int] = {}
        offsets = sorted({info.header_offset for info in infos} | {directory})
        for here, after in itertools.pairwise(offsets):
            self._ends[here] = after
        super().__init__(ref, infos)
        self._metadata = {**metadata, "url": url, "size_bytes": size, "range_requests": True}

    def entry_reader(self, info: zipfile.ZipInfo) -> RemoteEntryReader:
        """One range per entry: its local header to the next entry."""
        end = self._ends.get(info.header_offset, info.header_offset + 30 + len(info.filename)
                             + len(info.extra) + info.compress_size)
        return RemoteEntryReader(self._url, info.header_offset, end, info.compress_size,
                                 info.file_size, info.compress_type, info.filename,
                                 self._deadline)

    def metadata(self) -> dict[str, Any]:
        """The URL, its size, and what the index said."""
        return {**self._metadata, "directory_bytes": self.file.transferred}


class _Inflated:
    """An entry's inflated bytes as :class:`~servewise.sources.layers.EntryData`."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self._stream = ChunkStream(chunks)
        self.size = 0

    def read(self, size: int) -> bytes:
        data = read_exact(self._stream, size)
        self.size += len(data)
        return data

    def chunks(self, size: int) -> Iterator[bytes]:
        while data := self._stream.read(size):
            self.size += len(data)
            yield data

    def read_all(self, limit: int) -> bytes:
        data = read_exact(self._stream, limit + 1)
        self.size += len(data)
        if len(data) > limit:
            raise SourceError(f"a metadata file is larger than {limit} bytes",
                              hint="this is not a normal wheel")
        return data

    def drain(self) -> None:
        for _ in self.chunks(CHUNK_SIZE):
            pass


def walk_zip_stream(stream: ChunkStream, scan: ScanFn, where: str) -> dict[str, Any]:
    """One pass over a zip's local entries in order, kept like an image layer's."""
    collector = PassCollector(scan)
    offset = 0
    while True:
        signature = stream.peek(4)
        if signature != _LOCAL:
            if signature in (_CENTRAL, b"PK\x05\x06") or not signature:
                break
            raise _not_a_wheel(where, f"unexpected bytes at offset {offset:#x}")
        header = read_exact(stream, 30)
        flags, method, _, _, _, csize, usize, name_len, extra_len = struct.unpack_from(
            "<HHHHIIIHH", header, 6
        )
        name = read_exact(stream, name_len).decode("utf-8" if flags & 0x800 else "cp437",
                                                  "replace")
        extra = read_exact(stream, extra_len)
        at = 0
        while at + 4 <= len(extra):  # zip64 sizes
            tag, length = struct.unpack_from("<HH", extra, at)
            if tag == 1 and length >= 16 and 0xFFFFFFFF in (csize, usize):
                usize, csize = struct.unpack_from("<QQ", extra, at + 4)
            at += 4 + length
        descriptor = bool(flags & 0x8)
        collector.count += 1
        if collector.count > MAX_ENTRIES:
            raise SourceError(f"{where} has more than {MAX_ENTRIES} entries", path=where,
                              hint="this is not a normal wheel")
        data = _Inflated(inflate_data(stream, f"{where}!{name}", -1 if descriptor else csize,
                                      -1 if descriptor else usize, method, CHUNK_SIZE,
                                      unread=stream.unread))
        if name.endswith("/"):
            data.drain()
        else:
            collector.file(name, usize, data)
            data.drain()
            if descriptor:
                head = stream.peek(4)
                read_exact(stream, 16 if head == _DESCRIPTOR else 12)
                if name in collector.entries:
                    collector.entries[name][2] = data.size
        offset += 30 + name_len + extra_len
    result = collector.result()
    result["files"] = [[e[1], e[2]] for e in result["entries"]]
    return result


@dataclass(frozen=True)
class StreamedWheelUnit:
    """A whole wheel read in one pass (its server ignores range requests)."""

    key: str
    size: int
    label: str
    url: str
    deadline: Deadline | None = None

    def read(self, scan: ScanFn) -> dict[str, Any]:
        """Stream the wheel once, scanning libraries as they arrive."""
        client = _client()
        deadline = self.deadline or current_deadline()
        try:
            answer = _get(client, self.url, deadline, "the wheel", stream=True)
            with contextlib.closing(answer):
                if answer.status_code != 200:
                    raise _http_error(self.url, answer)
                stream = ChunkStream(guarded(answer.iter_bytes(1 << 20), deadline,
                                             host=host_of(self.url), what="the wheel"))
                return walk_zip_stream(stream, scan, self.url)
        except httpx.HTTPError as error:
            raise _transport_error(self.url, error) from None
        finally:
            client.close()


class StreamedWheelSource(SourceBase):
    """A remote wheel read in one streaming pass."""

    _kind = "wheel"

    def __init__(self, ref: str, url: str, size: int, key: str, metadata: dict[str, Any],
                 deadline: Deadline | None = None) -> None:
        super().__init__(ref)
        self._unit = StreamedWheelUnit(key, size, posixpath.basename(url), url, deadline)
        self._metadata = {**metadata, "url": url, "size_bytes": size, "range_requests": False}

    def units(self) -> list[Unit]:
        """The whole wheel."""
        return [self._unit]

    def contents(self, results: Mapping[str, dict[str, Any]]) -> Contents:
        """The wheel's files, as the pass saw them."""
        result = results[self._unit.key]
        small: dict[str, str] = result.get("small", {})
        members = [
            Member(path, size, f"{self._unit.key}:{path}",
                   CapturedBytes(small[path].encode("latin-1")) if path in small else None)
            for path, size in result["files"]
        ]
        notes = [f"the server at {self._unit.url} ignores range requests: the whole wheel "
                 f"({self._unit.size} bytes) was streamed once", *result.get("notes", [])]
        return Contents(members, dict(result["scans"]),
                        {path: self._unit.key for path in result["scans"]}, notes)

    def metadata(self) -> dict[str, Any]:
        """The URL and what the index said."""
        return dict(self._metadata)


def open_remote_wheel(ref: str, url: str, *, expected_sha256: str | None = None,
                      metadata: dict[str, Any] | None = None, deadline: Deadline | None = None
                      ) -> RemoteWheelSource | StreamedWheelSource:
    """A wheel at ``url``: with range requests when the server has them."""
    metadata = dict(metadata or {})
    deadline = deadline or current_deadline()
    client = _client()
    try:
        answer = _get(client, url, deadline, "the end of the wheel (its zip directory)",
                      byte_range=f"-{TAIL_BYTES}", stream=True)
    except httpx.TransportError as error:
        client.close()
        raise _transport_error(url, error) from None
    if answer.status_code == 200:
        size = int(answer.headers.get("content-length") or 0)
        answer.close()
        client.close()
        validator = expected_sha256 or answer.headers.get("etag") or \
            answer.headers.get("last-modified") or ""
        return StreamedWheelSource(ref, url, size, f"wheel:{url}:{size}:{validator}", metadata,
                                   deadline)
    if answer.status_code != 206:
        answer.close()
        client.close()
        if answer.status_code == 416:
            raise _not_a_wheel(url, "the file is empty")
        raise _http_error(url, answer)
    content_type = answer.headers.get("content-type", "")
    total = answer.headers.get("content-range", "").rsplit("/", 1)[-1]
    try:
        tail = b"".join(guarded(answer.iter_bytes(), deadline, host=host_of(url),
                                what="the end of the wheel (its zip directory)"))
    except httpx.HTTPError as error:
        client.close()
        raise _transport_error(url, error) from None
    finally:
        answer.close()
    if content_type.startswith("text/html"):
        client.close()
        raise _not_a_wheel(url, "the server sent a web page (text/html)")
    if not total.isdigit():
        client.close()
        raise _not_a_wheel(url, "the server did not say the file's size (Content-Range)")
    if b"PK\x05\x06" not in tail:
        client.close()
        raise _not_a_wheel(url, "no zip end record in its last bytes")
    return RemoteWheelSource(ref, url, client, int(total), tail, metadata, deadline)


def open_url(ref: str, options: Any) -> RemoteWheelSource | StreamedWheelSource:
    """The resolver's opener for ``http(s)://…`` REFs."""
    path = httpx.URL(ref).path
    name = parse_wheel_name(posixpath.basename(path))
    metadata: dict[str, Any] = {}
    if name is not None:
        metadata = {"package": name.name, "version": name.version,
                    "filename": posixpath.basename(path)}
    elif not path.endswith((".whl", ".zip")):
        raise _not_a_wheel(ref, "the URL does not name a .whl file")
    return open_remote_wheel(ref, ref, metadata=metadata,
                             deadline=getattr(options, "deadline", None))


__all__ = ["RangeFile", "RemoteEntryReader", "RemoteWheelSource", "StreamedWheelSource",
           "open_remote_wheel", "open_url", "walk_zip_stream"]
