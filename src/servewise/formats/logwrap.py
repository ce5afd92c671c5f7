"""Whether a pasted log was wrapped at a width, and its lines joined again.

Copying a log from a terminal window (tmux, screen, a web console) breaks every line longer
than the window at its width, mid-word: no line of the paste is longer than the width, and
the broken ones are exactly that long. An engine's own log has lines of every length, and
its longest lines are rarely all the same length. A paste whose longest lines, several
different ones, all end exactly at the same column was wrapped there.

An editor or a formatter (``fold -s``, ``fmt``, an editor's hard wrap) breaks at the last
space that fits instead, so its broken lines end a little short of the width. What gives
them away is the word after the break: it would not have fitted on the line. A paste where
several different lines are followed by a continuation whose first word would have pushed
them past the longest line's length was wrapped at word breaks.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import pairwise

__all__ = ["MIN_WIDTH", "unwrapped", "word_wrap_width", "wrap_width"]

MIN_WIDTH = 80
"""Narrower than this, lines of equal length are more likely a table than a wrap."""
WORD_MIN_WIDTH = 60
"""Editors and formatters wrap narrower than terminals are wide (``fmt``'s default is 75)."""
MAX_WIDTH = 512
MIN_WRAPPED = 2
"""Different lines that must end exactly at the width, each continued on the next line."""
_SHAPE = 8


_TABLE = set("|│┃║+─━")
#: How a line that is a record of its own starts: indented (a frame's source line, a message's
#: continuation), a bracket or quote, a logger's ``name:``, a number (a timestamp, a pid).
_RECORD_START = re.compile(r"\s|[\[(<>{\"'#*\d]|[\w.-]{2,60}: ")
#: The same for a word-wrapped line's continuation, which may start with a number: only a
#: date or a time starts a record there.
_WORD_RECORD_START = re.compile(r"\s|[\[(<>{\"'#*]|\d{1,4}[-/:.]\d{1,2}[-/:.T ]|[\w.-]{2,60}: ")
#: A traceback's frame line, whose source line follows it.
_FRAME_END = re.compile(r", line \d+, in \S+$")
#: Lines that start a record although they start with a plain word.
_HEADER = re.compile(r"Traceback \(most recent call last\)|During handling of the above|"
                     r"The above exception was")
#: A line that is a rule drawn across (``-----``, ``=====``), not words.
_RULE = re.compile(r"\s*(\S)\1{7,}\s*$")
#: A word-wrapped line's continuation: one space at most before its first word (a formatter
#: that keeps the space puts it at the start of the next line).
_CONTINUATION = re.compile(r" ?(\S+)")


def _shape(text: str) -> str:
    """How a line starts, as a pattern: digits as 0, letters as a, the rest kept."""
    return "".join("0" if c.isdigit() else "a" if c.isalpha() else c for c in text[:_SHAPE])


def wrap_width(text: str) -> int | None:
    """The column ``text`` was hard-wrapped at, or None when it was not.

    A line at the width counts as broken only when the next line does not start the way it
    starts (a run of records of one format, each padded or cut to the same length, is not a
    wrap) and neither side is a table's border."""
    lines = text.splitlines()
    width = _widest(lines, MIN_WIDTH)
    return width if width is not None and _breaks(lines, width, _hard_broken) else None


def word_wrap_width(text: str) -> int | None:
    """The column ``text`` was wrapped at, at word breaks, or None when it was not."""
    lines = text.splitlines()
    width = _widest(lines, WORD_MIN_WIDTH)
    return width if width is not None and _breaks(lines, width, _word_broken) else None


def unwrapped(text: str) -> str:
    """``text`` with the lines a terminal broke at its width, or an editor at its last word
    break before it, joined again (``text`` itself, the same object, when it was not
    wrapped)."""
    lines = text.splitlines()
    width = _widest(lines, MIN_WIDTH)
    if width is not None and _breaks(lines, width, _hard_broken):
        # Every line at the width was cut there, mid-word: joined without a space.
        return _joined(lines, [len(line) == width for line in lines], spaced=False)
    width = _widest(lines, WORD_MIN_WIDTH)
    marks = _breaks(lines, width, _word_broken) if width is not None else None
    return text if marks is None else _joined(lines, [*marks, False], spaced=True)


def _widest(lines: list[str], narrowest: int) -> int | None:
    """The longest line's length, when there are lines to join and it can be a wrap's width."""
    if len(lines) < 2:
        return None
    width = max(len(line) for line in lines)
    return width if narrowest <= width <= MAX_WIDTH else None


def _breaks(lines: list[str], width: int,
            broken: Callable[[str, str, int], bool]) -> list[bool] | None:
    """For each line but the last, whether it was broken before the next one; None when fewer
    than :data:`MIN_WRAPPED` different lines were (no wrap)."""
    marks = [broken(line, after, width) for line, after in pairwise(lines)]
    cut = {line for line, mark in zip(lines, marks, strict=False) if mark}  # marks: one fewer
    return marks if len(cut) >= MIN_WRAPPED else None


def _hard_broken(line: str, after: str, width: int) -> bool:
    """Whether ``line`` was cut before ``after`` by a terminal ``width`` columns wide."""
    return (len(line) == width and bool(after.strip()) and line[-1] not in _TABLE
            and after[0] not in _TABLE and _shape(after) != _shape(line)
            and _RECORD_START.match(after) is None and _FRAME_END.search(line) is None)


def _same_prefix(line: str, after: str) -> bool:
    """Whether both lines start with the same kind of record prefix (a timestamp, a host and
    pid, a container's name): a run of records, not a line and its continuation. Two lines
    that both start with a word tell nothing."""
    shape = _shape(line)
    return shape == _shape(after) and shape.strip("a ") != ""


def _word_broken(line: str, after: str, width: int) -> bool:
    """Whether ``line`` was broken before ``after`` by a wrap at word breaks at ``width``."""
    if (not line.strip() or line[-1] in _TABLE or line.endswith("  ")
            or _FRAME_END.search(line) is not None or _RULE.match(line) is not None):
        return False
    if ((after.startswith(" ") and after[1:2].isspace()) or _RULE.match(after) is not None
            or _same_prefix(line, after)):
        return False
    word = _CONTINUATION.match(after)
    if word is None or after[0] in _TABLE or _HEADER.match(after) is not None:
        return False
    if not after.startswith(" ") and _WORD_RECORD_START.match(after) is not None:
        return False
    # The word and one space (between it and the line, or kept after it) did not fit.
    return len(line) + 1 + len(word[1]) > width


def _joined(lines: list[str], marks: list[bool], *, spaced: bool) -> str:
    """The lines, each marked one joined to the next (with a space where a wrap at word breaks
    took the one between them: not after a space or a hyphen, nor before one kept)."""
    out: list[str] = []
    pending = ""
    for index, (line, mark) in enumerate(zip(lines, marks, strict=True)):
        pending += line
        if not mark:
            out.append(pending)
            pending = ""
        elif spaced and not (line[-1].isspace() or line[-1] == "-"
                             or lines[index + 1][0] == " "):
            pending += " "
    if pending:
        out.append(pending)
    return "\n".join(out) + "\n"
