"""Library and layer from paths and message formats, with or without a matching rule.

Order of evidence (``knowledge/data/diagnose_attribution.toml``): a path named in
the message (``Assertion error (…/deepgemm-src/csrc/apis/layout.hpp:60)``, a
``.so`` that lacks a symbol), the message's format (``[TensorRT-LLM][ERROR]``,
``<Op> failed with error code``), then the traceback's frames from the innermost
outwards, passing over generic ones (the standard library, torch's dispatch).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from servewise.diagnose.tables import Attribution, DiagnoseTables
from servewise.formats.logevents import Event, Frame, normalize_path

__all__ = ["Culprit", "attribute", "attribute_path"]

# Paths are found token by token (linear in the text, whatever it holds): a token is a run
# of characters that are not spaces, quotes, brackets or separators; it names a source file
# or a shared object when it ends in one's suffix (a ``:line`` after it is allowed).
_TOKEN = re.compile(r"[^\s'\"()\[\]<>,;`]+")
_SUFFIX = re.compile(r"\.(?:py|pyx|hpp|hh|h|cuh|cu|cpp|cc|c|so(?:\.[\d.]{1,16})?)(?::\d{1,7})*:?$")
_SOURCE_NAME = re.compile(r"[\w.+-]{1,256}")
_MAX_TOKEN = 512
_NAME_ERRORS = ("NameError", "UnboundLocalError")
"""Exceptions whose message names a variable of the raising code, not a library."""


def paths_in(text: str) -> list[str]:
    """Source paths (``…/x.py``, ``…/layout.hpp``) and shared objects (``_C.abi3.so``) named
    in ``text``, in order. Linear in the length of ``text``."""
    found: list[str] = []
    for token in _TOKEN.findall(text):
        if len(token) > _MAX_TOKEN or "." not in token:
            continue
        token = token.replace("\\", "/")
        suffix = _SUFFIX.search(token)
        if suffix is None:
            continue
        end = suffix.end() - len(suffix[0]) + len(suffix[0].split(":", 1)[0])
        path = token[:end].lstrip("/.") if "/" not in token else token[:end]
        shared_object = path.endswith(".so") or ".so." in path
        source_name = _SOURCE_NAME.fullmatch(path) is not None and path.endswith(
            (".hpp", ".cuh", ".cu", ".cpp"))
        if "/" in path or shared_object or source_name:
            found.append(path)
    return found


@dataclass(frozen=True)
class Culprit:
    """What attribution found."""

    library: str
    layer: str
    api: str | None
    engine: str | None
    evidence: str
    """The path or text it was read from."""
    frame: Frame | None = None
    """The frame it was read from, when it came from the traceback."""


def attribute_path(path: str, tables: DiagnoseTables,
                   include_generic: bool = False) -> tuple[Attribution, str | None] | None:
    """The attribution entry for a source path, and the API it names."""
    normal = normalize_path(path)
    for entry in tables.attributions:
        if entry.generic and not include_generic:
            if any(pattern.search(normal) for pattern in entry.paths):
                return None
            continue
        if any(pattern.search(normal) for pattern in entry.paths):
            api = None
            if entry.api is not None:
                found = entry.api.search(normal)
                api = found["api"] if found else None
            return entry, api
    return None


def _culprit(entry: Attribution, api: str | None, evidence: str,
             frame: Frame | None = None) -> Culprit:
    return Culprit(entry.library, entry.layer, api, entry.engine, evidence, frame)


def attribute(event: Event, tables: DiagnoseTables) -> Culprit | None:
    """The library and layer an event points at, or None when nothing names one.

    A ``NameError``'s message names an identifier of the code that raised it (``name
    'deep_gemm' is not defined`` is a bug of the caller, not DeepGEMM's), so its format says
    nothing: its frames do."""
    text = event.text
    for path in paths_in(text):
        found = attribute_path(path, tables)
        if found is not None:
            return _culprit(found[0], found[1], path)
    names_identifier = (event.exception or "").rsplit(".", 1)[-1] in _NAME_ERRORS
    for entry in tables.attributions if not names_identifier else ():
        if not entry.generic and any(pattern.search(text) for pattern in entry.messages):
            return _culprit(entry, None, text.splitlines()[0] if text else "")
    if event.source == "tensorrt_llm":
        # TensorRT-LLM's own logger ([TensorRT-LLM][ERROR], [TRT-LLM] [E]): its prefix, removed
        # from the text, named the library.
        for entry in tables.attributions:
            if entry.id == "tensorrt_llm":
                return _culprit(entry, None, "[TensorRT-LLM] log line")
    for frame in reversed(event.frames):
        found = attribute_path(frame.path, tables)
        if found is not None:
            return _culprit(found[0], found[1], frame.path, frame)
    return None
