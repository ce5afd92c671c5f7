"""The one error tree of servewise.

Every error the library raises on purpose derives from :class:`ServewiseError`
and carries structured fields plus a ``hint`` (the next thing to try)::

    ServewiseError                  exit code 2 unless said otherwise
    ├── FormatError                 malformed bytes: offset, expected, found
    ├── SourceError                 a file, folder or archive could not be read
    │   ├── ArchiveLimitError       an archive exceeds a safety limit (zip bomb, huge directory)
    │   ├── IntegrityError          bytes that do not match their declared size or digest
    │   └── RegistryError           a registry or web server refused or failed a request
    │       ├── RateLimitError      HTTP 429: when to retry is in ``retry_after_s``
    │       └── DeadlineError       a network wait ran past the command's deadline
    ├── UsageError                  bad arguments (unknown GPU, unknown library, ...)
    │   └── UnsupportedModelError   a model architecture servewise does not know
    ├── LogInputError               a log that cannot be diagnosed (empty, binary, unreadable)
    └── StoreError                  the local SQLite store could not be used

The CLI renders ``message``, the fields and the hint; ``--json`` renders
:meth:`ServewiseError.to_dict`.
"""

from __future__ import annotations

from typing import Any


class ServewiseError(Exception):
    """Base class: a message, named fields and a hint for the next step."""

    exit_code: int = 2
    kind: str = "error"

    def __init__(self, message: str, *, hint: str | None = None, **fields: Any) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.fields: dict[str, Any] = fields

    def to_dict(self) -> dict[str, Any]:
        """The error as JSON-ready data: kind, message, fields and hint."""
        return {
            "error": self.kind,
            "message": self.message,
            **{key: value for key, value in self.fields.items() if value is not None},
            "hint": self.hint,
        }

    def __str__(self) -> str:
        return self.message


class FormatError(ServewiseError):
    """Bytes that do not follow the format: where, what was expected, what was found."""

    kind = "format_error"

    def __init__(
        self,
        what: str,
        *,
        offset: int,
        expected: str,
        found: str,
        source: str | None = None,
        hint: str | None = None,
    ) -> None:
        where = f"{source}: " if source else ""
        super().__init__(
            f"{where}malformed {what} at offset {offset:#x}: expected {expected}, found {found}",
            hint=hint,
            what=what,
            offset=offset,
            expected=expected,
            found=found,
            source=source,
        )
        self.what = what
        self.offset = offset
        self.expected = expected
        self.found = found
        self.source = source

    def located(self, source: str) -> FormatError:
        """The same error, naming the file (or archive member) it came from."""
        if self.source is not None:
            return self
        return FormatError(
            self.what,
            offset=self.offset,
            expected=self.expected,
            found=self.found,
            source=source,
            hint=self.hint,
        )


class SourceError(ServewiseError):
    """A file, folder or archive that could not be read."""

    kind = "source_error"


class ArchiveLimitError(SourceError):
    """An archive beyond a safety limit: too many entries, too large, or a zip bomb."""

    kind = "archive_limit"


class IntegrityError(SourceError):
    """A blob or download whose size or digest is not the one declared for it."""

    kind = "integrity_error"


class RegistryError(SourceError):
    """A registry, index or web server answered with an error (unknown repository, 401, 403...)."""

    kind = "registry_error"


class RateLimitError(RegistryError):
    """HTTP 429 Too Many Requests; ``retry_after_s`` says when to try again, when known."""

    kind = "rate_limited"


class UsageError(ServewiseError):
    """Arguments that cannot be used: an unknown GPU, library or model name."""

    kind = "usage_error"


class StoreError(ServewiseError):
    """The local store (SQLite) could not be opened or written."""

    kind = "store_error"


class LogInputError(ServewiseError):
    """A log that cannot be diagnosed: empty, binary, or not readable."""

    kind = "log_input_error"
class UnsupportedModelError(UsageError):
    """A model whose architecture servewise does not know: reported with what is known."""

    kind = "unsupported_model"


class DeadlineError(RegistryError):
    """A network wait ran past the command's deadline (``--timeout``): ``host``, ``waited_for``."""

    kind = "deadline"
