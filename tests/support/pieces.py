"""Cutting a byte string into pieces at given places, for incremental-parser tests."""

from __future__ import annotations

import itertools


def cut(data: bytes, points: list[int]) -> list[bytes]:
    """``data`` split at each point (taken modulo its length + 1), in order, no empty pieces."""
    marks = sorted({0, len(data), *(p % (len(data) + 1) for p in points)})
    return [data[a:b] for a, b in itertools.pairwise(marks)]
