"""Whether a pasted log was hard-wrapped by a terminal, and its lines joined again.

Copying a log from a terminal window (tmux, screen, a web console) breaks every line longer
than the window at its width, mid-word: no line of the paste is longer than the width, and
the broken ones are exactly that long. An engine's own log has lines of every length, and
its longest lines are rarely all the same length. A paste whose longest lines, several
different ones, all end exactly at the same column was wrapped there.
"""

from __future__ import annotations

import re
from itertools import pairwise

__all__ = ["MIN_WIDTH", "unwrapped", "wrap_width"]

MIN_WIDTH = 80
"""Narrower than this, lines of equal length are more likely a table than a wrap."""
MAX_WIDTH = 512
MIN_WRAPPED = 2
"""Different lines that must end exactly at the width, each continued on the next line."""
_SHAPE = 8


_TABLE = set("|│┃║+─━")
#: How a line that is a record of its own starts: indented (a frame's source line, a message's
#: continuation), a bracket or quote, a logger's ``name:``, a number (a timestamp, a pid).
_RECORD_START = re.compile(r"\s|[\[(<>{\"'#*\d]|[\w.-]{2,60}: ")
#: A traceback's frame line, whose source line follows it.
_FRAME_END = re.compile(r", line \d+, in \S+$")


def _shape(text: str) -> str:
    """How a line starts, as a pattern: digits as 0, letters as a, the rest kept."""
    return "".join("0" if c.isdigit() else "a" if c.isalpha() else c for c in text[:_SHAPE])


def wrap_width(text: str) -> int | None:
    """The column ``text`` was hard-wrapped at, or None when it was not.

    A line at the width counts as broken only when the next line does not start the way it
    starts (a run of records of one format, each padded or cut to the same length, is not a
    wrap) and neither side is a table's border."""
    return _width(text.splitlines())


def _width(lines: list[str]) -> int | None:
    if len(lines) < 2:
        return None
    width = max(len(line) for line in lines)
    if not MIN_WIDTH <= width <= MAX_WIDTH:
        return None
    broken: set[str] = set()
    for line, after in pairwise(lines):
        if (len(line) == width and after.strip() and line[-1] not in _TABLE
                and after[0] not in _TABLE and _shape(after) != _shape(line)
                and _RECORD_START.match(after) is None and _FRAME_END.search(line) is None):
            broken.add(line)
    return width if len(broken) >= MIN_WRAPPED else None


def unwrapped(text: str) -> str:
    """``text`` with the lines a terminal broke at its width joined again (``text`` itself,
    the same object, when it was not wrapped)."""
    lines = text.splitlines()
    width = _width(lines)
    if width is None:
        return text
    out: list[str] = []
    pending = ""
    for line in lines:
        pending += line
        if len(line) != width:
            out.append(pending)
            pending = ""
    if pending:
        out.append(pending)
    return "\n".join(out) + "\n"
