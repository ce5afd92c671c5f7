"""The Prometheus text exposition format (what ``GET /metrics`` returns), read into samples.

Pure: text in, :class:`Exposition` out. Understands ``# TYPE`` lines, label sets with escaped
values (``\\\\``, ``\\"``, ``\\n``), the special values ``+Inf``, ``-Inf`` and ``NaN``, and
optional timestamps; ``# HELP`` and other comments are skipped. Format reference:
https://prometheus.io/docs/instrumenting/exposition_formats/#text-based-format
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from servewise.errors import FormatError

Labels = tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class Sample:
    """One line of the exposition: a metric name, its labels (sorted) and its value."""

    name: str
    labels: Labels
    value: float

    def label(self, key: str) -> str | None:
        """The value of label ``key``, or None."""
        for name, value in self.labels:
            if name == key:
                return value
        return None


@dataclass(frozen=True)
class Exposition:
    """Every sample of one scrape, and the declared type of each metric family."""

    samples: tuple[Sample, ...]
    types: dict[str, str] = field(default_factory=dict)

    def named(self, name: str) -> list[Sample]:
        """The samples whose name is exactly ``name``."""
        return [s for s in self.samples if s.name == name]


def _value(text: str, line: int) -> float:
    special = {"+Inf": math.inf, "Inf": math.inf, "-Inf": -math.inf, "NaN": math.nan}
    if text in special:
        return special[text]
    try:
        return float(text)
    except ValueError:
        raise FormatError("Prometheus metrics", offset=line, expected="a number",
                          found=repr(text[:40]),
                          hint="the URL's /metrics is not Prometheus text") from None


def _labels(text: str, line: int) -> tuple[Labels, int]:
    """Labels from just after ``{`` to the matching ``}``; returns them and the index after."""
    labels: list[tuple[str, str]] = []
    i = 0
    while True:
        while i < len(text) and text[i] in " ,":
            i += 1
        if i < len(text) and text[i] == "}":
            return tuple(sorted(labels)), i + 1
        equals = text.find("=", i)
        if equals < 0 or equals + 1 >= len(text) or text[equals + 1] != '"':
            raise FormatError("Prometheus metrics", offset=line, expected='name="value"',
                              found=repr(text[i:i + 40]))
        key = text[i:equals].strip()
        j = equals + 2
        value: list[str] = []
        while j < len(text) and text[j] != '"':
            if text[j] == "\\" and j + 1 < len(text):
                value.append({"n": "\n", "\\": "\\", '"': '"'}.get(text[j + 1], text[j + 1]))
                j += 2
            else:
                value.append(text[j])
                j += 1
        if j >= len(text):
            raise FormatError("Prometheus metrics", offset=line, expected="a closing quote",
                              found=repr(text[i:i + 40]))
        labels.append((key, "".join(value)))
        i = j + 1


def parse_exposition(text: str) -> Exposition:
    """Read a whole ``/metrics`` answer; raise :class:`FormatError` on a line it cannot read."""
    samples: list[Sample] = []
    types: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            parts = line.split(None, 3)
            if len(parts) >= 4 and parts[1] == "TYPE":
                types[parts[2]] = parts[3].strip()
            continue
        brace = line.find("{")
        space = line.find(" ")
        if brace >= 0 and (space < 0 or brace < space):
            name = line[:brace]
            labels, end = _labels(line[brace + 1:], number)
            rest = line[brace + 1 + end:].split()
        else:
            name, _, tail = line.partition(" ")
            labels, rest = (), tail.split()
        if not name or not rest:
            raise FormatError("Prometheus metrics", offset=number, expected="NAME VALUE",
                              found=repr(line[:60]))
        samples.append(Sample(name, labels, _value(rest[0], number)))
    return Exposition(tuple(samples), types)
