"""safetensors headers and the sharded-checkpoint index, parsed without touching tensor data.

A safetensors file is an 8-byte little-endian header length ``N``, ``N`` bytes of UTF-8
JSON mapping tensor names to ``{"dtype", "shape", "data_offsets": [begin, end]}`` (offsets
relative to the end of the header) plus an optional ``__metadata__`` of strings, then the
tensor bytes. Two reads (the first 8 bytes, then the header) are enough to know every
tensor's name, dtype, shape and exact byte size, also for packed formats (NVFP4 ``U8``
blocks, FP8 scales), because the size is ``end - begin``::

    n = header_length(first_8_bytes)
    header = parse_header(next_n_bytes, file_size=size_of_the_file)
    header.data_bytes, header.unknown_dtypes

``model.safetensors.index.json`` maps tensor names to shard files and may carry
``metadata.total_size``; :func:`parse_index` reads it. Every malformed input raises
:class:`~servewise.errors.FormatError` with the offset, what was expected and what was found.
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from servewise.errors import FormatError

#: Bits per element of every dtype the safetensors format defines (safetensors ``Dtype``).
DTYPE_BITS: Mapping[str, int] = {
    "BOOL": 8,
    "F4": 4,
    "F6_E2M3": 6,
    "F6_E3M2": 6,
    "U8": 8,
    "I8": 8,
    "F8_E5M2": 8,
    "F8_E4M3": 8,
    "F8_E8M0": 8,
    "I16": 16,
    "U16": 16,
    "F16": 16,
    "BF16": 16,
    "I32": 32,
    "U32": 32,
    "F32": 32,
    "C64": 64,
    "F64": 64,
    "I64": 64,
    "U64": 64,
}

#: Largest header read by default (bytes). huggingface_hub refuses above 25 MB; the largest
#: real shard headers seen (DeepSeek-V4 expert shards) are well under 1 MB.
MAX_HEADER_BYTES = 64 * 2**20

PREFIX_BYTES = 8
"""Length of the little-endian u64 that starts every file."""

INDEX_FILE = "model.safetensors.index.json"
"""The file that maps each tensor of a sharded model to its shard (:func:`parse_index`)."""


@dataclass(frozen=True)
class TensorInfo:
    """One tensor of a header: name, dtype, shape and where its bytes lie."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    begin: int
    end: int

    @property
    def nbytes(self) -> int:
        """Exact stored size, from the offsets (right for packed and unknown dtypes too)."""
        return self.end - self.begin

    @property
    def elements(self) -> int:
        """Number of elements the shape names."""
        return math.prod(self.shape)


@dataclass(frozen=True)
class SafetensorsHeader:
    """A parsed header: the tensors in offset order, ``__metadata__`` and its size."""

    header_length: int
    tensors: tuple[TensorInfo, ...]
    metadata: Mapping[str, str]
    unknown_dtypes: tuple[str, ...]
    """Dtypes the format table does not know; their tensors are kept, sized by offsets."""

    @property
    def data_bytes(self) -> int:
        """Bytes of tensor data (the end of the last tensor)."""
        return max((tensor.end for tensor in self.tensors), default=0)

    @property
    def file_size(self) -> int:
        """The size the file must have: prefix, header and data."""
        return PREFIX_BYTES + self.header_length + self.data_bytes


def header_length(
    prefix: bytes, *, limit: int = MAX_HEADER_BYTES, source: str | None = None,
    file_size: int | None = None,
) -> int:
    """The header length from a file's first 8 bytes; above ``limit``, or past the end of a
    file of ``file_size`` bytes when that is known, is an error."""
    if len(prefix) < PREFIX_BYTES:
        raise FormatError(
            "safetensors prefix",
            offset=0,
            expected="an 8-byte little-endian header length",
            found=f"{len(prefix)} bytes",
            source=source,
        )
    (length,) = struct.unpack_from("<Q", prefix)
    if length < 2:
        raise FormatError(
            "safetensors header length",
            offset=0,
            expected="at least 2 (an empty JSON object)",
            found=str(length),
            source=source,
        )
    if length > limit:
        raise FormatError(
            "safetensors header length",
            offset=0,
            expected=f"at most {limit} bytes (the header size cap)",
            found=f"{length} bytes",
            source=source,
            hint="the file is not a safetensors file (real headers are a few MiB at most): "
            "check that it downloaded whole, e.g. against the sha256 the Hub lists",
        )
    if file_size is not None and PREFIX_BYTES + length > file_size:
        raise FormatError("safetensors header", offset=PREFIX_BYTES,
                          expected=f"{length} header bytes", found=f"a {file_size}-byte file",
                          source=source)
    return int(length)


def _bad(what: str, expected: str, found: str, source: str | None) -> FormatError:
    return FormatError(what, offset=PREFIX_BYTES, expected=expected, found=found, source=source)


def _tensor(name: str, entry: Any, source: str | None) -> TensorInfo:
    what = f"safetensors header entry {name!r}"
    if not isinstance(entry, dict):
        raise _bad(what, "an object with dtype, shape and data_offsets", type(entry).__name__,
                   source)
    dtype = entry.get("dtype")
    shape = entry.get("shape")
    offsets = entry.get("data_offsets")
    if not isinstance(dtype, str) or not dtype:
        raise _bad(what, "a dtype string", repr(dtype), source)
    if not isinstance(shape, list) or not all(
        isinstance(dim, int) and not isinstance(dim, bool) and dim >= 0 for dim in shape
    ):
        raise _bad(what, "a shape of non-negative integers", repr(shape), source)
    if (
        not isinstance(offsets, list)
        or len(offsets) != 2
        or not all(isinstance(o, int) and not isinstance(o, bool) and o >= 0 for o in offsets)
        or offsets[0] > offsets[1]
    ):
        raise _bad(what, "data_offsets [begin, end] with 0 <= begin <= end", repr(offsets),
                   source)
    tensor = TensorInfo(name, dtype, tuple(shape), offsets[0], offsets[1])
    bits = DTYPE_BITS.get(dtype)
    if bits is not None:
        total_bits = tensor.elements * bits
        if total_bits % 8 or tensor.nbytes != total_bits // 8:
            raise _bad(
                what,
                f"{total_bits / 8:g} bytes for {dtype} {list(shape)}",
                f"data_offsets spanning {tensor.nbytes} bytes",
                source,
            )
    return tensor


def parse_header(
    header: bytes, *, file_size: int | None = None, source: str | None = None
) -> SafetensorsHeader:
    """Parse the JSON header (the bytes after the 8-byte prefix).

    The tensors must tile the data area from 0 with no gap or overlap (the format's rule).
    With ``file_size`` the header must also account for the file exactly: a header that
    claims more (or less) data than the file holds is an error.
    """
    try:
        document = json.loads(header.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _bad("safetensors header", "UTF-8 JSON", f"{type(exc).__name__}: {exc}",
                   source) from None
    if not isinstance(document, dict):
        raise _bad("safetensors header", "a JSON object", type(document).__name__, source)
    raw_metadata = document.pop("__metadata__", None) or {}
    if not isinstance(raw_metadata, dict) or not all(
        isinstance(value, str) for value in raw_metadata.values()
    ):
        raise _bad("safetensors __metadata__", "an object of strings", repr(raw_metadata)[:80],
                   source)
    tensors = sorted(
        (_tensor(name, entry, source) for name, entry in document.items()),
        key=lambda t: (t.begin, t.end),
    )
    expected = 0
    for tensor in tensors:
        if tensor.begin != expected:
            found = "an overlap" if tensor.begin < expected else f"a gap at {expected}"
            raise _bad(
                f"safetensors data_offsets of {tensor.name!r}",
                f"begin {expected} (tensors tile the data area)",
                f"begin {tensor.begin} ({found})",
                source,
            )
        expected = tensor.end
    unknown = tuple(sorted({t.dtype for t in tensors if t.dtype not in DTYPE_BITS}))
    parsed = SafetensorsHeader(len(header), tuple(tensors), dict(raw_metadata), unknown)
    if file_size is not None and parsed.file_size != file_size:
        raise FormatError(
            "safetensors file size",
            offset=PREFIX_BYTES + len(header),
            expected=f"{parsed.file_size} bytes (8 + {len(header)} header + "
            f"{parsed.data_bytes} data, as the header says)",
            found=f"{file_size} bytes",
            source=source,
            hint="the file is truncated or its header is wrong; download it again",
        )
    return parsed


@dataclass(frozen=True)
class SafetensorsIndex:
    """``model.safetensors.index.json``: which shard holds each tensor."""

    weight_map: Mapping[str, str]
    total_size: int | None
    """``metadata.total_size`` (tensor bytes over all shards) when the index states it."""

    @property
    def files(self) -> tuple[str, ...]:
        """The shard files, sorted."""
        return tuple(sorted(set(self.weight_map.values())))


def parse_index(data: bytes, *, source: str | None = None) -> SafetensorsIndex:
    """Parse a sharded checkpoint's index file."""
    what = "safetensors index"
    try:
        document = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise FormatError(what, offset=0, expected="UTF-8 JSON",
                          found=f"{type(exc).__name__}: {exc}", source=source) from None
    if not isinstance(document, dict):
        raise FormatError(what, offset=0, expected="a JSON object",
                          found=type(document).__name__, source=source)
    weight_map = document.get("weight_map")
    if (
        not isinstance(weight_map, dict)
        or not weight_map
        or not all(isinstance(v, str) and v for v in weight_map.values())
    ):
        raise FormatError(what, offset=0, expected="a non-empty weight_map of file names",
                          found=repr(weight_map)[:80], source=source)
    for shard in weight_map.values():
        parts = shard.replace("\\", "/").split("/")
        if shard.startswith(("/", "\\")) or ".." in parts:
            raise FormatError(what, offset=0, expected="shard names inside the repository",
                              found=shard, source=source)
    metadata = document.get("metadata") or {}
    total = metadata.get("total_size") if isinstance(metadata, dict) else None
    if isinstance(total, str) and total.isdigit():
        total = int(total)
    if total is not None and (not isinstance(total, int) or isinstance(total, bool)):
        raise FormatError(what, offset=0, expected="metadata.total_size as an integer",
                          found=repr(total), source=source)
    return SafetensorsIndex(dict(weight_map), total)
