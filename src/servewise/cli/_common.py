"""What every command module shares: the Typer app, common options, output and errors.

stdout carries data (``--json`` prints JSON there); stderr carries progress,
warnings and errors. Exit codes: 0 fine, 1 the check failed, 2 bad usage or
unreadable input. A command module defines its commands on :data:`app`;
``servewise.cli`` imports every module so they register.

Errors have one boundary: a command body raises a :class:`~servewise.errors.ServewiseError`
and never catches it to render it. The root group (:class:`_ErrorBoundary`) renders it with
:func:`fail`, as JSON when the command was asked for JSON (the ``--json`` option records that
through :func:`errors_as_json`); :func:`servewise.cli.run` renders whatever is raised
outside a command (an error of the root's own options, a command without ``--json``).
"""

from __future__ import annotations

import functools
import json
import os
import sys
import traceback
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TextIO, cast

import typer
from typer.core import TyperGroup

from servewise.errors import ServewiseError

if TYPE_CHECKING:
    from rich.console import Console
    from typer._click import Context as ClickContext

    from servewise.store import Store

JSON_ERRORS = "servewise.errors_as_json"
"""The key in the click context's ``meta`` (shared by a command and its parents) that says
whether the running command renders its errors as JSON."""


def errors_as_json(ctx: typer.Context, as_json: bool) -> bool:
    """Record that the running command's errors render as JSON (``as_json``) or as text.

    The callback of the shared ``--json`` option; a command with another way to ask for JSON
    (``--format json``) calls it again with the answer. Returns ``as_json``.
    """
    ctx.meta[JSON_ERRORS] = as_json
    return as_json


class _ErrorBoundary(TyperGroup):
    """The root group: renders a :class:`ServewiseError` of any command, once, for all.

    The error is rendered as :func:`fail` renders it (JSON on stdout with ``--json``, else
    text on stderr) and the command ends with its exit code. A command that never recorded
    how to render errors (it has no ``--json``) lets the error through to
    :func:`servewise.cli.run`, which renders it from the raw arguments.
    """

    def invoke(self, ctx: ClickContext) -> Any:
        try:
            return super().invoke(ctx)
        except ServewiseError as error:
            as_json = ctx.meta.get(JSON_ERRORS)
            if as_json is None:
                raise
            fail(error, bool(as_json))


app = typer.Typer(
    cls=_ErrorBoundary,
    name="servewise",
    help="Get a large language model serving on your GPUs with vLLM or SGLang, "
    "right the first time.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Help text is plain text: "os/arch[/variant]" is no markup to rich.
    rich_markup_mode=None,
)


def _version_callback(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            text = version("servewise")
        except PackageNotFoundError:  # running from a source tree without an install
            text = "unknown"
        sys.stdout.write(f"servewise {text}\n")
        raise typer.Exit(0)


@app.callback()
def _root(
    show_version: Annotated[bool, typer.Option(
        "--version", help="Print the servewise version and exit.", is_eager=True,
        callback=_version_callback)] = False,
) -> None:
    """Get a large language model serving on your GPUs with vLLM or SGLang, right the first time."""


class _Redacting:
    """A text stream that masks secrets (:func:`~servewise.formats.redact.redact_text`) in
    what is written to it; rich writes a whole rendering at once, so a URL is never cut."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        """Write ``text`` with its secrets masked."""
        from servewise.formats.redact import redact_text

        self._stream.write(redact_text(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@functools.cache
def _console_class() -> type[Console]:
    """A rich console whose text from outside (table cells, titles: every ``str`` it
    renders) loses escape sequences and control characters before rich styles it, so a
    model id or a file name cannot retitle the window or clear the screen."""
    from rich.console import Console
    from rich.text import Text

    from servewise.formats.redact import terminal_safe

    class SafeConsole(Console):
        def render_str(self, text: str, **options: Any) -> Text:
            return super().render_str(terminal_safe(text), **options)

    return SafeConsole


def out() -> Console:
    """The console for data (stdout); wide when not a terminal, so tables do not wrap.
    Secrets in what it prints are masked, escape sequences in its text removed."""
    # rich is imported when something is rendered: ``--json`` output never needs it.
    return _console_class()(file=cast(TextIO, _Redacting(sys.stdout)), soft_wrap=False,
                            width=None if sys.stdout.isatty() else 200)


def err() -> Console:
    """The console for progress, warnings and errors (stderr); secrets are masked."""
    # Not a terminal: no wrapping, so paths and commands stay whole for copy and paste.
    tty = sys.stderr.isatty()
    return _console_class()(file=cast(TextIO, _Redacting(sys.stderr)), stderr=True,
                            soft_wrap=not tty, width=None if tty else 100_000)


def emit_json(data: Any) -> None:
    """Print ``data`` as indented JSON on stdout, every secret masked
    (:func:`~servewise.formats.redact.redact_data`)."""
    from servewise.formats.redact import redact_data

    sys.stdout.write(json.dumps(redact_data(data), indent=2) + "\n")


def fail(error: ServewiseError, as_json: bool) -> NoReturn:
    """Render an error (JSON on stdout, or text on stderr) and exit with its code.

    With ``SERVEWISE_DEBUG=1`` an error raised from another one (a Hub or network failure,
    say) first prints its traceback, cause included, on stderr.
    """
    if os.environ.get("SERVEWISE_DEBUG") and error.__cause__ is not None:
        traceback.print_exception(error, file=sys.stderr)
    if as_json:
        emit_json(error.to_dict())
    else:
        say("error", "bold red", error.message)
        if error.hint:
            say("hint", "dim", error.hint)
    raise typer.Exit(error.exit_code)


def open_store(no_cache: bool, without: str = "scanning without it") -> Store | None:
    """The store, or ``None`` with ``--no-cache`` or when it cannot be opened (with a warning
    that ends with ``without``: what the command does instead)."""
    if no_cache:
        return None
    from servewise.store import Store

    try:
        return Store()
    except ServewiseError as error:
        say("warning", "yellow", f"{error.message}; {without}")
        return None


def render_error(error: ServewiseError, as_json: bool) -> int:
    """Render ``error`` as :func:`fail` does and return its exit code instead of exiting."""
    try:
        fail(error, as_json)
    except typer.Exit as done:
        return done.exit_code


def say(label: str, style: str, text: str) -> None:
    """One labelled line on stderr; the text is data, never read as markup, never a secret
    (masked) nor a terminal escape sequence (removed)."""
    from rich.text import Text

    from servewise.formats.redact import redact_text, terminal_safe

    text = terminal_safe(redact_text(text))
    err().print(Text.assemble((f"{label}:", style), " ", text), highlight=False)


__all__ = [
    "JSON_ERRORS", "app", "emit_json", "err", "errors_as_json", "fail", "open_store", "out",
    "render_error", "say",
]
