"""Checking a recipe file: every problem is collected, each with its file and field path.

:class:`Checker` walks a parsed YAML document and records a :class:`Problem` per
mistake instead of stopping at the first; :class:`RecipeDataError` carries them all.
Field paths read like ``recipes[3].match.hw`` or ``recipes[0].benchmarks[1].results[0].workload``.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from servewise.errors import ServewiseError
from servewise.knowledge._load import DataFileError, looks_like_source
from servewise.versions import EngineVersion


@dataclass(frozen=True)
class Problem:
    """One mistake in a data file: where (file and field path), what, what was expected."""

    file: str
    path: str
    message: str
    expected: str | None = None
    found: str | None = None

    def __str__(self) -> str:
        text = f"{self.file}: {self.path}: {self.message}"
        if self.expected is not None:
            text += f" (expected {self.expected}"
            text += f", found {self.found})" if self.found is not None else ")"
        elif self.found is not None:
            text += f" (found {self.found})"
        return text

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return {"file": self.file, "path": self.path, "message": self.message,
                "expected": self.expected, "found": self.found}


class RecipeDataError(DataFileError):
    """A recipe file (or a file to import) with one or more problems; all are in ``problems``."""

    kind = "recipe_data_error"

    def __init__(self, problems: list[Problem], *, hint: str | None = None) -> None:
        first = problems[0]
        more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
        super().__init__(
            f"{first.path}: {first.message}{more}",
            file=first.file,
            field=first.path,
            expected=first.expected,
            found=first.found,
        )
        self.problems = tuple(problems)
        self.fields["problems"] = [problem.to_dict() for problem in problems]
        self.message = "\n".join(str(problem) for problem in problems)
        if hint is not None:
            self.hint = hint
        else:
            self.hint = "fix each field named above; docs/recipes.md describes the format"

    def __str__(self) -> str:
        return self.message


def short(value: Any, limit: int = 80) -> str:
    """``repr(value)`` cut to ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Checker:
    """Typed reads of a parsed YAML document that record problems instead of raising."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.problems: list[Problem] = []

    def problem(
        self, path: str, message: str, *, expected: str | None = None, found: str | None = None
    ) -> None:
        """Record a problem at ``path``."""
        self.problems.append(Problem(self.file, path, message, expected, found))

    def raise_if_any(self, hint: str | None = None) -> None:
        """Raise :class:`RecipeDataError` with every problem recorded so far."""
        if self.problems:
            raise RecipeDataError(list(self.problems), hint=hint)

    def mapping(self, value: Any, path: str) -> Mapping[str, Any] | None:
        """``value`` when it is a mapping with string keys, else a problem and None."""
        if not isinstance(value, Mapping) or not all(isinstance(key, str) for key in value):
            self.problem(path, "must be a mapping", expected="key: value pairs",
                         found=type(value).__name__)
            return None
        return value

    def unknown_keys(self, data: Mapping[str, Any], path: str, allowed: set[str]) -> None:
        """A problem for every key of ``data`` not in ``allowed``."""
        for key in data:
            if key not in allowed:
                self.problem(_join(path, key), "unknown field",
                             expected="one of " + ", ".join(sorted(allowed)))

    def string(
        self, data: Mapping[str, Any], key: str, path: str, *, required: bool = True
    ) -> str | None:
        """A non-empty string (None when absent and not required, or wrong)."""
        where = _join(path, key)
        if key not in data or data[key] is None:
            if required:
                self.problem(where, "missing required field", expected="a non-empty string")
            return None
        value = data[key]
        if not isinstance(value, str) or not value.strip():
            self.problem(where, "must be a non-empty string (quote numbers and dates)",
                         found=short(value))
            return None
        return value.strip()

    def choice(
        self, data: Mapping[str, Any], key: str, path: str, choices: tuple[str, ...],
        *, required: bool = True,
    ) -> str | None:
        """A string among ``choices``."""
        value = self.string(data, key, path, required=required)
        if value is not None and value not in choices:
            self.problem(_join(path, key), "unknown value", expected=" | ".join(choices),
                         found=short(value))
            return None
        return value

    def positive_int(
        self, data: Mapping[str, Any], key: str, path: str, *, default: int | None = None
    ) -> int | None:
        """An integer above zero (``default`` when absent)."""
        where = _join(path, key)
        if key not in data or data[key] is None:
            if default is None:
                self.problem(where, "missing required field", expected="a positive integer")
            return default
        value = data[key]
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            self.problem(where, "must be a positive integer", found=short(value))
            return None
        return value

    def version(
        self, data: Mapping[str, Any], key: str, path: str, *, required: bool = False
    ) -> str | None:
        """A version string that ``packaging`` reads (``0.26.1rc1.dev77``)."""
        where = _join(path, key)
        if key in data and isinstance(data[key], int | float) and not isinstance(data[key], bool):
            self.problem(where, "must be a quoted string, not a number (YAML reads 0.20 as 0.2)",
                         found=short(data[key]))
            return None
        value = self.string(data, key, path, required=required)
        if value is None:
            return None
        try:
            EngineVersion.parse(value)
        except ServewiseError:
            self.problem(where, "not a version", expected="a PEP 440 version such as 0.26.1",
                         found=short(value))
            return None
        return value

    def date(self, data: Mapping[str, Any], key: str, path: str) -> str | None:
        """An ISO date (YAML's unquoted dates are accepted), or None when absent."""
        where = _join(path, key)
        value = data.get(key)
        if value is None:
            return None
        if isinstance(value, datetime.datetime):
            return value.date().isoformat()
        if isinstance(value, datetime.date):
            return value.isoformat()
        if isinstance(value, str):
            try:
                return datetime.date.fromisoformat(value.strip()).isoformat()
            except ValueError:
                pass
        self.problem(where, "not a date", expected="YYYY-MM-DD", found=short(value))
        return None

    def source(
        self, data: Mapping[str, Any], key: str, path: str, *, required: bool = True
    ) -> str | None:
        """A source: a URL, ``owner/repo#N``, a project document or ``measured: …``."""
        value = self.string(data, key, path, required=required)
        if value is not None and not looks_like_source(value):
            self.problem(_join(path, key), "does not look like a source",
                         expected="https://…, owner/repo#N, seeds/…, research/… or 'measured: …'",
                         found=short(value))
            return None
        return value

    def strings(
        self, data: Mapping[str, Any], key: str, path: str, *, required: bool = False
    ) -> tuple[str, ...] | None:
        """A list of strings (numbers must be quoted: an argv is text)."""
        where = _join(path, key)
        if key not in data or data[key] is None:
            if required:
                self.problem(where, "missing required field", expected="a list of strings")
            return ()
        value = data[key]
        if not isinstance(value, list):
            self.problem(where, "must be a list of strings", found=type(value).__name__)
            return None
        good = True
        for index, item in enumerate(value):
            if not isinstance(item, str) or not item:
                self.problem(f"{where}[{index}]", "must be a non-empty string (quote numbers)",
                             found=short(item))
                good = False
        return tuple(value) if good else None

    def env(self, data: Mapping[str, Any], key: str, path: str) -> tuple[tuple[str, str], ...]:
        """A mapping of environment variable names to string values."""
        where = _join(path, key)
        value = data.get(key)
        if value is None:
            return ()
        env = self.mapping(value, where)
        if env is None:
            return ()
        pairs = []
        for name, item in env.items():
            if not _env_name(name):
                self.problem(f"{where}.{name}", "not an environment variable name",
                             expected="letters, digits and _ (not starting with a digit)")
            elif not isinstance(item, str):
                self.problem(f"{where}.{name}", "must be a string (quote numbers)",
                             found=short(item))
            else:
                pairs.append((name, item))
        return tuple(pairs)


def _env_name(name: str) -> bool:
    return bool(name) and (name[0].isalpha() or name[0] == "_") and all(
        ch.isalnum() or ch == "_" for ch in name
    ) and name.isascii()


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key
