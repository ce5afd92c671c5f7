"""Reading and validating the knowledge data files (TOML).

Each data file ships in ``servewise/knowledge/data/`` and holds one array of
tables (``[[gpu]]``, ``[[library]]``, ``[[model]]``); every entry has an ``id``
and a ``source``. A user folder adds to the shipped entries: the file of the
same name in ``$SERVEWISE_DATA_DIR`` (default ``~/.config/servewise/``) is read
too, and an entry there whose ``id`` matches a shipped one overrides it field
by field; other entries are added. A user entry without ``source`` gets the
user file's path as its source.

Every problem in a data file raises :class:`DataFileError`, naming the file,
the entry and the field.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import pickle
import re
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

from servewise.errors import ServewiseError, SourceError
from servewise.folders import cache_folder
from servewise.versions import EngineVersion

ENV_VAR = "SERVEWISE_DATA_DIR"
"""Environment variable naming the user data folder."""

SHIPPED_PACKAGE = "servewise.knowledge"
"""Package whose ``data/`` folder holds the shipped data files."""

_SOURCE_RE = re.compile(
    r"^(?:https?://[^\s/]+\.[^\s]+"  # a web URL
    r"|file://\S+"  # a local file (user entries)
    r"|[\w.-]+/[\w.-]+#\d+"  # owner/repo#123
    r"|(?:research|seeds|data)/[\w./-]+(?:\s+§[\w.]+)?"  # a project document
    r"|measured: .+"  # our own measurement, described
    r")$"
)


class DataFileError(SourceError):
    """A knowledge data file that cannot be used: bad TOML, a missing or wrong field."""

    kind = "data_file_error"

    def __init__(
        self,
        message: str,
        *,
        file: str,
        entry: str | None = None,
        field: str | None = None,
        expected: str | None = None,
        found: str | None = None,
    ) -> None:
        where = file
        if entry is not None:
            where += f": entry {entry}"
        if field is not None:
            where += f", field {field!r}"
        super().__init__(
            f"{where}: {message}",
            hint="fix the entry in that file (see the shipped files in servewise/knowledge/data/)",
            file=file,
            entry=entry,
            field=field,
            expected=expected,
            found=found,
        )


def user_data_dir() -> Path:
    """The user data folder: ``$SERVEWISE_DATA_DIR``, else ``~/.config/servewise``."""
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env).expanduser()
    return Path.home() / ".config" / "servewise"


_PROJECT_DOCUMENT = re.compile(r"^(?:research|seeds|data)/")


def public_sources(sources: Iterable[str]) -> tuple[str, ...]:
    """The sources a user of the package can open: URLs, ``owner/repo#N``, measurements.

    The project's own notes (``research/…``, ``seeds/…``, ``data/…``) stay in the data files
    as provenance for the team; output for users leaves them out.
    """
    return tuple(s for s in sources if _PROJECT_DOCUMENT.match(s.strip()) is None)


def looks_like_source(text: str) -> bool:
    """Whether ``text`` reads as a source: a URL, ``owner/repo#N``, a project document."""
    return _SOURCE_RE.match(text.strip()) is not None


@dataclass(frozen=True)
class RawEntry:
    """One table of a data file, with where it came from."""

    data: Mapping[str, Any]
    file: str
    index: int
    user: bool

    @property
    def label(self) -> str:
        """How errors name this entry: ``#3 (id 'h200')``."""
        ident = self.data.get("id")
        if isinstance(ident, str):
            return f"#{self.index + 1} (id {ident!r})"
        return f"#{self.index + 1}"


def parse_toml(text: str, file: str) -> dict[str, Any]:
    """The TOML document ``text``; invalid TOML is a :class:`DataFileError` naming ``file``."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise DataFileError(f"not valid TOML: {exc}", file=file) from exc


def _entries(document: Mapping[str, Any], table: str, file: str, user: bool) -> list[RawEntry]:
    unknown = sorted(set(document) - {table, "version"})
    if unknown:
        raise DataFileError(
            f"unknown top-level key(s) {', '.join(unknown)}; entries go in [[{table}]] tables",
            file=file,
            expected=f"[[{table}]]",
            found=", ".join(unknown),
        )
    items = document.get(table, [])
    if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
        raise DataFileError(
            f"{table!r} must be an array of tables ([[{table}]])",
            file=file,
            expected=f"[[{table}]]",
            found=type(items).__name__,
        )
    return [RawEntry(item, file, index, user) for index, item in enumerate(items)]


def _parsed(text: str, file: str) -> dict[str, Any]:
    """``parse_toml`` of a shipped file, kept in the cache folder by the text's digest:
    TOML is parsed in Python, and the tables are read by every command."""
    digest = hashlib.sha256(text.encode()).hexdigest()[:24]
    cached = cache_folder() / "knowledge" / f"{Path(file).stem}-{digest}.pickle"
    with contextlib.suppress(OSError, pickle.UnpicklingError, EOFError, ValueError,
                             TypeError, AttributeError):
        document = pickle.loads(cached.read_bytes())
        if isinstance(document, dict):
            return document
    document = parse_toml(text, file)
    with contextlib.suppress(OSError):
        cached.parent.mkdir(parents=True, exist_ok=True)
        partial = cached.with_suffix(f".{os.getpid()}.tmp")
        partial.write_bytes(pickle.dumps(document, protocol=pickle.HIGHEST_PROTOCOL))
        partial.replace(cached)
    return document


@functools.cache
def shipped_entries(filename: str, table: str) -> tuple[RawEntry, ...]:
    """The entries of a shipped data file (read once per process)."""
    resource = resources.files(SHIPPED_PACKAGE).joinpath("data", filename)
    file = f"servewise/knowledge/data/{filename}"
    return tuple(_entries(_parsed(resource.read_text("utf-8"), file), table, file, False))


def user_entries(filename: str, table: str, user_dir: Path | None) -> list[RawEntry]:
    """The entries of ``filename`` in the user folder; none when the file is absent."""
    folder = user_data_dir() if user_dir is None else user_dir
    path = folder / filename
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise DataFileError(f"cannot read: {exc}", file=str(path)) from exc
    entries = _entries(parse_toml(text, str(path)), table, str(path), True)
    with_source = []
    for entry in entries:
        if "source" not in entry.data:
            data = {**entry.data, "source": path.resolve().as_uri()}
            entry = RawEntry(data, entry.file, entry.index, entry.user)
        with_source.append(entry)
    return with_source


_Table = TypeVar("_Table")


def load_table(
    filename: str,
    table: str,
    user_dir: Path | None,
    shipped: Callable[[], _Table],
    build: Callable[[list[RawEntry]], _Table],
) -> _Table:
    """A table from its shipped file, merged with the user's file of that name when present.

    ``shipped`` returns the cached shipped-only table; ``build`` makes one from merged
    entries. With no user entries the shipped table is returned as it is.
    """
    extra = user_entries(filename, table, user_dir)
    if not extra:
        return shipped()
    return build(merge_by_id(shipped_entries(filename, table), extra))


def fingerprint(filename: str, user_dir: Path | None = None) -> str:
    """A digest of a table's shipped file and the user's file of that name (when present).

    Results derived from a table (a build's library identities) can be cached under it:
    editing either file gives a new fingerprint.
    """
    digest = hashlib.sha256(
        resources.files(SHIPPED_PACKAGE).joinpath("data", filename).read_bytes()
    )
    folder = user_data_dir() if user_dir is None else user_dir
    with contextlib.suppress(OSError):  # no user file: the shipped one alone
        digest.update(b"\0" + (folder / filename).read_bytes())
    return digest.hexdigest()


def merge_by_id(shipped: Iterable[RawEntry], user: Iterable[RawEntry]) -> list[RawEntry]:
    """Shipped entries with user entries applied: same ``id`` overrides field by field.

    User entries with a new id come first (a user's entry is more specific than
    the shipped ones when order decides a match), in the user file's order; the
    shipped entries keep their order, overridden ones in place.
    """
    merged: dict[str, RawEntry] = {}
    order: list[str] = []
    for entry in shipped:
        ident = _entry_id(entry)
        merged[ident] = entry
        order.append(ident)
    added: list[str] = []
    for entry in user:
        ident = _entry_id(entry)
        base = merged.get(ident)
        if base is None:
            if ident in added:
                raise DataFileError(
                    "duplicate id", file=entry.file, entry=entry.label, field="id", found=ident
                )
            added.append(ident)
            merged[ident] = entry
        else:
            merged[ident] = RawEntry({**base.data, **entry.data}, entry.file, entry.index, True)
    return [merged[ident] for ident in added + order]


def _entry_id(entry: RawEntry) -> str:
    ident = entry.data.get("id")
    if not isinstance(ident, str) or not ident.strip():
        raise DataFileError(
            "missing or empty id",
            file=entry.file,
            entry=entry.label,
            field="id",
            expected="a non-empty string",
            found=repr(ident),
        )
    return ident


def check_unique(entries: Iterable[RawEntry], what: str = "id") -> None:
    """Raise when two entries share an id."""
    seen: dict[str, RawEntry] = {}
    for entry in entries:
        ident = _entry_id(entry)
        if ident in seen:
            raise DataFileError(
                f"duplicate {what} {ident!r} (also {seen[ident].label} in {seen[ident].file})",
                file=entry.file,
                entry=entry.label,
                field="id",
                found=ident,
            )
        seen[ident] = entry


class EntryReader:
    """Typed access to one entry's fields; every mistake raises :class:`DataFileError`."""

    def __init__(self, entry: RawEntry, allowed: Iterable[str]) -> None:
        self.entry = entry
        unknown = sorted(set(entry.data) - set(allowed))
        if unknown:
            raise self.error(
                unknown[0],
                "unknown field",
                expected="one of " + ", ".join(sorted(allowed)),
                found=", ".join(unknown),
            )

    def error(
        self, field: str, message: str, *, expected: str | None = None, found: str | None = None
    ) -> DataFileError:
        """An error about ``field`` of this entry."""
        return DataFileError(
            message,
            file=self.entry.file,
            entry=self.entry.label,
            field=field,
            expected=expected,
            found=found,
        )

    def has(self, field: str) -> bool:
        """Whether the entry sets ``field``."""
        return field in self.entry.data

    def _get(self, field: str, expected: str) -> Any:
        if field not in self.entry.data:
            raise self.error(field, "missing required field", expected=expected)
        return self.entry.data[field]

    def string(self, field: str) -> str:
        """A required non-empty string."""
        value = self._get(field, "a non-empty string")
        if not isinstance(value, str) or not value.strip():
            raise self.error(field, "must be a non-empty string", found=repr(value))
        return value.strip()

    def optional_string(self, field: str, default: str = "") -> str:
        """An optional string (``default`` when absent)."""
        if field not in self.entry.data:
            return default
        value = self.entry.data[field]
        if not isinstance(value, str):
            raise self.error(field, "must be a string", found=repr(value))
        return value.strip()

    def strings(
        self, field: str, *, required: bool = True, non_empty: bool = False
    ) -> tuple[str, ...]:
        """A list of non-empty strings (absent → ``()`` unless ``required``)."""
        if field not in self.entry.data:
            if required:
                raise self.error(field, "missing required field", expected="a list of strings")
            return ()
        value = self.entry.data[field]
        if not isinstance(value, list) or not all(
            isinstance(item, str) and item.strip() for item in value
        ):
            raise self.error(field, "must be a list of non-empty strings", found=repr(value))
        if non_empty and not value:
            raise self.error(field, "must not be empty", expected="at least one string")
        return tuple(item.strip() for item in value)

    def boolean(self, field: str, default: bool | None = None) -> bool:
        """A boolean (required when ``default`` is None)."""
        if field not in self.entry.data and default is not None:
            return default
        value = self._get(field, "true or false")
        if not isinstance(value, bool):
            raise self.error(field, "must be true or false", found=repr(value))
        return value

    def optional_version(self, field: str) -> EngineVersion | None:
        """An engine version (``0.26.1rc1``), or None when the entry does not set ``field``."""
        if not self.has(field):
            return None
        text = self.string(field)
        try:
            return EngineVersion.parse(text)
        except ServewiseError:
            raise self.error(field, "not a version", expected="a PEP 440 version such as 0.19.0",
                             found=text) from None

    def positive_int(self, field: str) -> int:
        """A required integer above zero."""
        value = self._get(field, "a positive integer")
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise self.error(field, "must be a positive integer", found=repr(value))
        return value

    def positive_number(self, field: str) -> float:
        """A required number (integer or float) above zero."""
        value = self._get(field, "a positive number")
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise self.error(field, "must be a positive number", found=repr(value))
        return float(value)

    def sources(self) -> tuple[str, ...]:
        """``source``: one string or a list; each a URL, ``owner/repo#N`` or project document."""
        value = self._get("source", "a URL or a list of URLs")
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not items or not all(isinstance(i, str) for i in items):
            raise self.error("source", "must be a string or a non-empty list of strings")
        for item in items:
            if not looks_like_source(item):
                raise self.error(
                    "source",
                    "does not look like a source",
                    expected="https://…, owner/repo#N, research/…, seeds/… or 'measured: …'",
                    found=item,
                )
        return tuple(item.strip() for item in items)

    def regex(self, field: str, text: str, flags: int = 0) -> re.Pattern[str]:
        """``text`` (a value of ``field``) compiled; a bad expression is an error on ``field``."""
        try:
            return re.compile(text, flags)
        except re.error as exc:
            raise self.error(field, f"bad regular expression: {exc}", found=text) from exc

    def regexes(
        self, field: str, flags: int = 0, *, required: bool = True
    ) -> tuple[re.Pattern[str], ...]:
        """A list of regular expressions, each compiled (non-empty unless not ``required``)."""
        return tuple(self.regex(field, text, flags)
                     for text in self.strings(field, required=required, non_empty=required))
