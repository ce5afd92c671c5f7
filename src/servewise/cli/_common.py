"""What every command module shares: the Typer app, common options, output and errors.

stdout carries data (``--json`` prints JSON there); stderr carries progress,
warnings and errors. Exit codes: 0 fine, 1 the check failed, 2 bad usage or
unreadable input. A command module defines its commands on :data:`app`;
``servewise.cli`` imports every module so they register.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from servewise.errors import ServewiseError

if TYPE_CHECKING:
    from rich.console import Console

    from servewise.store import Store

app = typer.Typer(
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


def out() -> Console:
    """The console for data (stdout); wide when not a terminal, so tables do not wrap."""
    # rich is imported when something is rendered: ``--json`` output never needs it.
    from rich.console import Console

    return Console(file=sys.stdout, soft_wrap=False, width=None if sys.stdout.isatty() else 200)


def err() -> Console:
    """The console for progress, warnings and errors (stderr)."""
    from rich.console import Console

    # Not a terminal: no wrapping, so paths and commands stay whole for copy and paste.
    tty = sys.stderr.isatty()
    return Console(file=sys.stderr, stderr=True, soft_wrap=not tty,
                   width=None if tty else 100_000)


def emit_json(data: Any) -> None:
    """Print ``data`` as indented JSON on stdout."""
    sys.stdout.write(json.dumps(data, indent=2) + "\n")


def fail(error: ServewiseError, as_json: bool) -> NoReturn:
    """Render an error (JSON on stdout, or text on stderr) and exit with its code."""
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
    """One labelled line on stderr; the text is data, never read as markup."""
    from rich.text import Text

    err().print(Text.assemble((f"{label}:", style), " ", text), highlight=False)


__all__ = [
    "app", "emit_json", "err", "fail", "open_store", "out", "render_error", "say",
]
