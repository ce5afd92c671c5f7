"""Names and path patterns: normalizing paths and package names, how specific a regex is.

Pure helpers of the library table (:mod:`servewise.knowledge.libraries`): the path a
table matches (site-packages prefixes dropped), PEP 503 package names, the key names
are compared by, tails of a path, the literal prefix and the specificity of a path
regex, and edit-distance close matches.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Iterable, Iterator
from typing import Any

_PREFIX = re.compile(r"^.*(?:site|dist)-packages/")
_META = set(".^$*+?{}()|")


def normalize_path(path: str) -> str:
    """A library path as the table matches it.

    Backslashes become ``/``; everything up to and including the last
    ``site-packages/`` or ``dist-packages/`` is dropped; so are a leading
    ``./`` and ``/``.
    """
    text = path.replace("\\", "/")
    text = _PREFIX.sub("", text)
    while text.startswith("./"):
        text = text[2:]
    return text.lstrip("/")


def normalize_package(name: str) -> str:
    """A distribution name in PEP 503 form (``sgl_kernel`` → ``sgl-kernel``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def name_key(name: str) -> str:
    """How library names are compared: lower case, ``-``, ``_``, ``.`` and ``+`` dropped."""
    return re.sub(r"[-_.+\s]+", "", name).lower()


def tails(text: str, separator: str) -> Iterator[str]:
    """``a/b/c`` → ``a/b/c``, ``b/c``, ``c`` (longest first)."""
    while text:
        yield text
        cut = text.find(separator)
        if cut < 0:
            return
        text = text[cut + 1 :]


def module_folder(path: str) -> str:
    """The dotted Python package of a normalized path (``deep_gemm/_C.so`` → ``deep_gemm``)."""
    folder, _, _ = path.rpartition("/")
    return folder.replace("/", ".")


@functools.lru_cache(maxsize=1024)
def specificity(pattern: str) -> int:
    """How specific a path regex is: the least number of literal characters it requires.

    Character classes, ``.`` and escapes such as ``\\d`` count nothing; an
    escaped literal (``\\.``) counts one; an optional item (``?``, ``*``,
    ``{0,…}``) counts nothing; an alternation counts its least branch.
    """
    value, _ = _min_literals(pattern, 0)
    return value


def _min_literals(pattern: str, index: int) -> tuple[int, int]:
    """Least literal count of the sequence starting at ``index``, up to ``)`` or the end."""
    branches: list[int] = []
    total = 0
    while index < len(pattern):
        char = pattern[index]
        if char == ")":
            break
        if char == "|":
            branches.append(total)
            total = 0
            index += 1
            continue
        if char == "\\" and index + 1 < len(pattern):
            item = 0 if pattern[index + 1].isalnum() else 1
            index += 2
        elif char == "[":
            end = pattern.find("]", index + 2)
            index = len(pattern) if end < 0 else end + 1
            item = 0
        elif char == "(":
            index += 1
            if pattern.startswith("?:", index):
                index += 2
            item, index = _min_literals(pattern, index)
            index += 1  # the closing parenthesis
        else:
            item = 0 if char in _META else 1
            index += 1
        if index < len(pattern) and pattern[index] in "?*+{":
            quantifier = pattern[index]
            if quantifier == "{":
                end = pattern.find("}", index)
                end = len(pattern) - 1 if end < 0 else end
                if re.match(r"\{0*(,|\})", pattern[index:]) is not None:
                    item = 0
                index = end + 1
            else:
                if quantifier in "?*":
                    item = 0
                index += 1
            if index < len(pattern) and pattern[index] in "?+":
                index += 1  # lazy or possessive
        total += item
    branches.append(total)
    return min(branches), index


def literal_prefix(pattern: str) -> str:
    """The literal text every string a ``^``-anchored regex matches starts with (maybe empty).

    ``^vllm/_C\\.so$`` → ``vllm/_C``; ``^lib(64)?/x$`` → ``lib``; ``^ab?c$`` → ``a``;
    ``^(a|b)$`` → ``""``. Used to skip regexes that cannot match before running them.
    """
    if not pattern.startswith("^") or _top_level_alternation(pattern):
        return ""
    out: list[str] = []
    index = 1
    while index < len(pattern):
        char = pattern[index]
        if char == "\\" and index + 1 < len(pattern) and not pattern[index + 1].isalnum():
            literal, step = pattern[index + 1], 2
        elif char in _META or char in "[\\":
            break
        else:
            literal, step = char, 1
        following = pattern[index + step : index + step + 1]
        if following and following in "?*{":
            break  # optional: it need not be there
        out.append(literal)
        index += step
    return "".join(out)


def _top_level_alternation(pattern: str) -> bool:
    """Whether ``pattern`` has a ``|`` outside every group and class (``^a|b``)."""
    depth, index, in_class = 0, 0, False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            return True
        index += 1
    return False


def close_names(name: str, pool: Iterable[str], limit: int = 5) -> tuple[str, ...]:
    """Up to ``limit`` names of ``pool`` that look like ``name``, best first."""
    key = name_key(name)
    scored: dict[str, float] = {}
    for candidate in pool:
        other = name_key(candidate)
        if not other or not key:
            continue
        ratio = difflib.SequenceMatcher(None, key, other).ratio()
        if min(len(key), len(other)) >= 3 and (key in other or other in key):
            ratio = max(ratio, 0.8)
        if ratio >= 0.6:
            scored[candidate] = max(ratio, scored.get(candidate, 0.0))
    ranked = sorted(scored, key=lambda c: (-scored[c], c))
    return tuple(ranked[:limit])


def required_literal(pattern: str) -> str:
    """The longest run of literal text every match of ``pattern`` contains ('' when none is
    known): a regex that cannot match a text without it need not be tried on that text.

    Read from Python's own parse of the pattern: consecutive literal characters of the top
    level and of the groups it always goes through; a class, an escape such as ``\\d``, a
    repeat, an alternation or a case-insensitive flag ends a run. '' when the parse is not
    available (it is CPython's internal module) or fails.
    """
    try:
        from re import _constants, _parser  # type: ignore[attr-defined]

        parsed = _parser.parse(pattern)
        if parsed.state.flags & re.IGNORECASE:
            return ""
        runs: list[str] = [""]
        _literal_runs(list(parsed), runs, _constants)
    except Exception:  # an internal module: without it, no literal and no shortcut
        return ""
    return max(runs, key=len)


def required_literals(pattern: str) -> tuple[str, ...]:
    """Literal texts of which every match of ``pattern`` contains at least one (``()`` when
    none is known): the longest literal run every match holds, or, where that is short and
    the pattern is an alternation (``a|b|c``, at its top level or in a group every match goes
    through), one such literal per branch. A text that holds none of them cannot match.

    Read from Python's own parse of the pattern, like :func:`required_literal`.
    """
    try:
        from re import _constants, _parser  # type: ignore[attr-defined]

        parsed = _parser.parse(pattern)
        if parsed.state.flags & re.IGNORECASE:
            return ()
        return _needs(list(parsed), _constants)
    except Exception:  # an internal module: without it, no literal and no shortcut
        return ()


def compiled_literals(pattern: re.Pattern[str]) -> tuple[str, ...]:
    """:func:`required_literals` of a compiled pattern: () where it ignores case, by an inline
    flag or one given to ``re.compile``."""
    return () if pattern.flags & re.IGNORECASE else required_literals(pattern.pattern)


_ENOUGH = 4
"""A literal run this long is worth checking on its own, before looking into alternations."""


def _needs(items: list[Any], constants: Any) -> tuple[str, ...]:
    runs: list[str] = [""]
    _literal_runs(items, runs, constants)
    best = max(runs, key=len)
    if len(best) >= _ENOUGH:
        return (best,)
    for op, value in items:
        options: list[str] = []
        if op is constants.BRANCH:
            for branch in value[1]:
                need = _needs(list(branch), constants)
                if not need:
                    break
                options.extend(need)
            else:
                return tuple(dict.fromkeys(options))
        elif op is constants.SUBPATTERN and not value[1] & re.IGNORECASE:
            need = _needs(list(value[3]), constants)
            if len(need) > 1 or (need and len(need[0]) > len(best)):
                return need
    return (best,) if best else ()


def _literal_runs(items: list[Any], runs: list[str], constants: Any) -> None:
    for op, value in items:
        if op is constants.LITERAL:
            runs[-1] += chr(value)
        elif op is constants.SUBPATTERN:
            add_flags: int = value[1]
            sub: Any = value[3]
            if add_flags & re.IGNORECASE:
                runs.append("")
            else:
                _literal_runs(list(sub), runs, constants)
        else:
            runs.append("")
