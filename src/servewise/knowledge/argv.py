"""Reading and editing engine argv lists: flags, their values, one spelling per flag.

Engines accept ``--flag value`` and ``--flag=value``, and vLLM reads ``_`` and ``-``
alike in flag names; :func:`flag_key` folds those spellings so that rules and
renderers compare flags, not strings.
"""

from __future__ import annotations

from collections.abc import Sequence


def flag_key(flag: str) -> str:
    """``--kv_cache_dtype`` → ``--kv-cache-dtype`` (the comparison key of a flag)."""
    return flag.split("=", 1)[0].replace("_", "-").lower()


def _takes_value(argv: Sequence[str], index: int) -> bool:
    return index + 1 < len(argv) and not argv[index + 1].startswith("--")


def flags(argv: Sequence[str]) -> list[tuple[str, str | None, int]]:
    """Every flag of ``argv`` as ``(key, value or None, index)``, in order."""
    found: list[tuple[str, str | None, int]] = []
    index = 0
    while index < len(argv):
        word = argv[index]
        if word.startswith("--"):
            if "=" in word:
                found.append((flag_key(word), word.split("=", 1)[1], index))
            elif _takes_value(argv, index):
                found.append((flag_key(word), argv[index + 1], index))
                index += 1
            else:
                found.append((flag_key(word), None, index))
        elif word.startswith("-") and len(word) == 2 and _takes_value(argv, index):
            found.append((word, argv[index + 1], index))
            index += 1
        index += 1
    return found


def values(argv: Sequence[str], flag: str) -> list[str | None]:
    """The values given to ``flag`` (None for a flag given without one), in order."""
    key = flag_key(flag)
    return [value for name, value, _ in flags(argv) if name == key]


def last_value(argv: Sequence[str], flag: str) -> str | None:
    """The last value of ``flag`` (engines keep the last), or None."""
    found = values(argv, flag)
    return found[-1] if found else None


def has(argv: Sequence[str], flag: str) -> bool:
    """Whether ``flag`` is given, in any spelling."""
    return bool(values(argv, flag)) or any(flag_key(w) == flag_key(flag) for w in argv
                                           if w.startswith("--"))


def without(argv: Sequence[str], flag: str) -> list[str]:
    """``argv`` with every occurrence of ``flag`` (and its value) removed."""
    key = flag_key(flag)
    drop: set[int] = set()
    for name, value, index in flags(argv):
        if name == key:
            drop.add(index)
            if value is not None and "=" not in argv[index]:
                drop.add(index + 1)
    return [word for index, word in enumerate(argv) if index not in drop]


def with_flag(argv: Sequence[str], flag: str, value: str | None) -> list[str]:
    """``argv`` with ``flag`` set to ``value`` (replacing any earlier value)."""
    out = without(argv, flag)
    out.append(flag)
    if value is not None:
        out.append(value)
    return out
