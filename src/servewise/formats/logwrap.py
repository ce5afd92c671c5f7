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


def word_wrap_width(text: str) -> int | None:
    """The column ``text`` was wrapped at, at word breaks, or None when it was not."""
    return _word_width(text.splitlines())


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


def _word_width(lines: list[str]) -> int | None:
    if len(lines) < 2:
        return None
    width = max(len(line) for line in lines)
    if not WORD_MIN_WIDTH <= width <= MAX_WIDTH:
        return None
    broken = {line for line, after in pairwise(lines) if _word_broken(line, after, width)}
    return width if len(broken) >= MIN_WRAPPED else None


def unwrapped(text: str) -> str:
    """``text`` with the lines a terminal broke at its width, or an editor at its last word
    break before it, joined again (``text`` itself, the same object, when it was not
    wrapped)."""
    lines = text.splitlines()
    width = _width(lines)
    if width is None:
        width = _word_width(lines)
        return text if width is None else _joined_at_words(lines, width)
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


def _joined_at_words(lines: list[str], width: int) -> str:
    out: list[str] = []
    pending = ""
    for line, after in pairwise([*lines, ""]):
        pending += line
        if after and _word_broken(line, after, width):
            if not (line[-1].isspace() or line[-1] == "-" or after[0] == " "):
                pending += " "  # the break took the space (a cut mid-word gets one too)
        else:
            out.append(pending)
            pending = ""
    return "\n".join(out) + "\n"
