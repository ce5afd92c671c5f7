"""A model in a local folder: ``config.json``, safetensors headers and the shard index.

Only the headers are read (8 bytes, then the JSON header of each ``*.safetensors``), never
the tensor data, and each header is checked against the file's size. The shard list comes
from ``model.safetensors.index.json`` when there is one (every shard it names must exist),
else from the folder's ``*.safetensors`` files.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from servewise.errors import SourceError
from servewise.formats.checkpoint import Checkpoint, collapse
from servewise.formats.hfconfig import HfConfig, parse_config, parse_quant_config
from servewise.formats.safetensors import (
    INDEX_FILE,
    MAX_HEADER_BYTES,
    PREFIX_BYTES,
    SafetensorsHeader,
    header_length,
    parse_header,
    parse_index,
)
from servewise.sources.bounded import open_regular, read_regular

#: ``config.json`` larger than this is refused (real ones are under 100 kB; Qwen3.6's
#: quantization block makes it 58 kB).
MAX_CONFIG_BYTES = 16 * 2**20

BUNDLED_CARD = "a bundled card"
"""How hints name the cards; the planner, which knows them, appends their ids."""


def read_config(folder: Path) -> HfConfig:
    """The folder's ``config.json``, parsed."""
    path = folder / "config.json"
    try:
        data = read_regular(path, limit=MAX_CONFIG_BYTES, what="config.json")
    except FileNotFoundError:
        raise SourceError(
            f"{folder} has no config.json",
            hint="point at a Hugging Face model folder (config.json and *.safetensors), a "
            f"repository id, or {BUNDLED_CARD}",
            path=str(folder),
        ) from None
    except OSError as exc:
        raise SourceError(f"cannot read {path}: {exc}", path=str(path)) from None
    return parse_config(data, source=str(path))


def _read_small(path: Path) -> bytes:
    """A small JSON file of the folder (an index, a quantization config), bounded."""
    try:
        return read_regular(path, limit=MAX_CONFIG_BYTES, what=path.name)
    except OSError as exc:
        raise SourceError(f"cannot read {path}: {exc}", path=str(path)) from None


def read_quant_config(folder: Path) -> dict[str, Any] | None:
    """The folder's ``hf_quant_config.json`` (ModelOpt checkpoints), parsed, or None."""
    quant_path = folder / "hf_quant_config.json"
    if not quant_path.is_file():
        return None
    return parse_quant_config(_read_small(quant_path), source=str(quant_path))


def has_weights(folder: Path) -> bool:
    """Whether the folder holds weights to read: a shard index or ``*.safetensors``."""
    return (folder / INDEX_FILE).is_file() or any(folder.glob("*.safetensors"))


def read_header(path: Path, *, limit: int = MAX_HEADER_BYTES) -> SafetensorsHeader:
    """One file's header, checked against its size on disk."""
    try:
        with open_regular(path, what="safetensors file") as handle:
            size = os.fstat(handle.fileno()).st_size
            length = header_length(handle.read(PREFIX_BYTES), limit=limit, source=str(path),
                                   file_size=size)
            return parse_header(handle.read(length), file_size=size, source=str(path))
    except OSError as exc:
        raise SourceError(f"cannot read {path}: {exc}", path=str(path)) from None


def shard_files(folder: Path) -> list[Path]:
    """The checkpoint's safetensors files: from the index, else every ``*.safetensors``."""
    index_path = folder / INDEX_FILE
    if index_path.is_file():
        index = parse_index(_read_small(index_path), source=str(index_path))
        paths = [folder / name for name in index.files]
        missing = [p.name for p in paths if not p.is_file()]
        if missing:
            raise SourceError(
                f"{index_path} names {len(missing)} missing shard(s): {', '.join(missing[:5])}",
                hint="download the whole checkpoint, or remove the stale index",
                missing=missing,
            )
        return paths
    paths = sorted(folder.glob("*.safetensors"))
    if not paths:
        raise SourceError(
            f"{folder} has no *.safetensors files",
            hint="servewise reads safetensors headers; a folder with config.json alone is "
            "planned from the config (`servewise check`/`plan` compute the weights from it)",
            path=str(folder),
        )
    return paths


def read_folder(folder: Path, *, limit: int = MAX_HEADER_BYTES) -> Checkpoint:
    """A :class:`Checkpoint` for the model in ``folder``."""
    if not folder.is_dir():
        raise SourceError(f"{folder} is not a folder", path=str(folder))
    config = read_config(folder)
    quant = read_quant_config(folder)
    rows: list[tuple[str, str, tuple[int, ...], int]] = []
    file_bytes = 0
    paths = shard_files(folder)
    for path in paths:
        header = read_header(path, limit=limit)
        file_bytes += header.file_size
        rows.extend((t.name, t.dtype, t.shape, t.nbytes) for t in header.tensors)
    return Checkpoint(
        ref=str(folder),
        source="folder",
        config=config,
        tensors=tuple(collapse(rows)),
        files=len(paths),
        file_bytes=file_bytes,
        provenance=(str(folder.resolve()),),
        quant_config=quant,
    )

