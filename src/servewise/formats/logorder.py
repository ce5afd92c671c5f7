"""Whether a pasted log is newest first, and its lines in log order again.

Log consoles (Google Cloud Logging, Kibana, Grafana's log panels) list the newest entry first,
and a log copied from them keeps that order: the exception's message on top, its traceback's
frames below it, upside down. Their lines carry a timestamp each, so the order shows: a log
whose timestamps only ever go back in time was pasted newest first.
"""

from __future__ import annotations

import re

__all__ = ["in_log_order", "newest_first"]

_STAMP = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?")
#: Where on a line a console puts its timestamp: in its first characters.
_STAMP_WITHIN = 48
#: Steps back in time (and none forward) that make a log newest first.
MIN_STEPS_BACK = 3


def newest_first(text: str) -> bool:
    """Whether the timestamps at the start of ``text``'s lines only go back in time (at least
    :data:`MIN_STEPS_BACK` times, and never forward)."""
    previous: str | None = None
    back = 0
    for line in text.splitlines():
        found = _STAMP.search(line, 0, _STAMP_WITHIN)
        if found is None:
            continue
        stamp = found.group().replace(" ", "T").replace(",", ".")
        if previous is not None:
            if stamp > previous:
                return False
            if stamp < previous:
                back += 1
        previous = stamp
    return back >= MIN_STEPS_BACK


def in_log_order(text: str) -> str:
    """``text`` with its lines in the order the engine wrote them (reversed when the paste
    is newest first; unchanged otherwise)."""
    if not newest_first(text):
        return text
    lines = text.splitlines()
    return "\n".join(reversed(lines)) + "\n"
