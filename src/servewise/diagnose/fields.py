"""Extracted fields: names carry their units, and the names say how to read the text.

A named group or fact called ``*_gib`` is a memory size converted to GiB
(``"448.00 MiB"`` → 0.4375; ``GB`` is read as GiB, as engines print it; a bare
number is GiB); ``*_list`` collects every match; ``*_bytes``, ``*_tokens``,
``*_len``, ``*_index``, ``*_num``, ``*_size``, ``*_count``, ``*_ms``, ``seq_num``,
``rank``, ``line``, ``port``, ``pid`` are numbers; names with ``fraction`` or
``utilization`` are fractions; a trailing ``_alt`` (``_alt2``…) is another
spelling of the same field. Everything else stays text.
"""

from __future__ import annotations

import math
import re
import string
from collections.abc import Mapping
from typing import Any

from servewise.diagnose.result import FieldValue

_ALT = re.compile(r"_alt\d*$")
_NUMBER = re.compile(r"-?[\d,]*\.?\d+")
_UNIT = re.compile(r"([KMGT]?)i?B\b")
_SCALE = {"": 1 / 2**30, "K": 1 / 2**20, "M": 1 / 2**10, "G": 1.0, "T": 2.0**10}
_INT_SUFFIXES = ("_bytes", "_tokens", "_len", "_index", "_num", "_size", "_count", "_seqs",
                 "_heads", "_pid", "_line", "_ms", "_dim", "_devices")
_INT_NAMES = {"seq_num", "rank", "line", "port", "pid", "timeout_ms", "gpu_index"}


def field_name(group: str) -> str:
    """The field a group name stands for (``free_gib_alt`` → ``free_gib``)."""
    return _ALT.sub("", group)


def size_gib(text: str) -> float | None:
    """A memory size in GiB: ``"1.34 GiB"`` → 1.34, ``"448.00 MiB"`` → 0.4375."""
    number = _NUMBER.search(text)
    if number is None:
        return None
    value = float(number[0].replace(",", ""))
    unit = _UNIT.search(text[number.end():])
    scale = _SCALE[unit[1]] if unit is not None else 1.0
    return round(value * scale, 4)


def convert(name: str, text: str) -> FieldValue | None:
    """The value of field ``name`` read from ``text`` (None when it is not readable)."""
    base = name[: -len("_list")] if name.endswith("_list") else name
    text = text.strip()
    if base.endswith("_gib"):
        return size_gib(text)
    if "fraction" in base or "utilization" in base:
        number = _NUMBER.search(text)
        return float(number[0].replace(",", "")) if number else None
    if base in _INT_NAMES or base.endswith(_INT_SUFFIXES):
        number = _NUMBER.search(text)
        if number is None:
            return None
        value = float(number[0].replace(",", ""))
        return int(value) if value.is_integer() else value
    return text


def extract_groups(match: re.Match[str], into: dict[str, FieldValue]) -> None:
    """Add the named groups of ``match`` (not ``inner``) to ``into``, first value wins."""
    for group, text in match.groupdict().items():
        if text is None or group == "inner":
            continue
        name = field_name(group)
        if name.endswith("_list"):
            continue
        if name not in into:
            value = convert(name, text)
            if value is not None:
                into[name] = value


def extract_lists(pattern: re.Pattern[str], text: str, into: dict[str, FieldValue]) -> None:
    """Every match of ``pattern``'s ``*_list`` groups in ``text``, as lists."""
    names = [g for g in pattern.groupindex if field_name(g).endswith("_list")]
    if not names:
        return
    for match in pattern.finditer(text):
        for group in names:
            value = match[group]
            if value is None:
                continue
            name = field_name(group)
            converted = convert(name, value)
            if converted is None:
                continue
            current = into.setdefault(name, [])
            if isinstance(current, list) and len(current) < 32:
                current.append(converted)  # type: ignore[arg-type]


def floor2(value: float) -> float:
    """Round down to two decimals (``0.9348`` → ``0.93``)."""
    return math.floor(value * 100 + 1e-9) / 100


def ceil2(value: float) -> float:
    """Round up to two decimals."""
    return math.ceil(value * 100 - 1e-9) / 100


class _Values(dict[str, Any]):
    """Template values; a missing name raises so the caller can skip the step."""

    def __missing__(self, key: str) -> Any:
        raise KeyError(key)


def render(template: str, values: Mapping[str, Any]) -> str:
    """``template`` with ``{name}`` / ``{name:.2f}`` filled from ``values`` (lists joined)."""
    flat = {
        key: ", ".join(str(item) for item in value) if isinstance(value, list) else value
        for key, value in values.items()
    }
    return string.Formatter().vformat(template, (), _Values(flat))


def known(values: Mapping[str, Any], name: str) -> bool:
    """Whether ``name`` has a usable value (present, not None, not False, not empty)."""
    value = values.get(name)
    return value is not None and value is not False and value != [] and value != ""
