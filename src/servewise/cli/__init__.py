"""The ``servewise`` command: parse arguments, call one library function, render.

Each command lives in its own module of this package and registers itself on the
shared Typer app of :mod:`servewise.cli._common`; importing a module is what puts its
commands on the command line. :func:`run` imports only the module of the command asked
for (:data:`COMMAND_MODULES`), so a command does not pay for building the other
twenty-odd; ``--help``, an unknown command and :data:`app` (for tests) load them all.
stdout carries data (``--json`` prints JSON there); stderr carries progress, warnings and
errors. Exit codes: 0 fine, 1 the check failed, 2 bad usage or unreadable input, 130
interrupted.

:func:`main` is the one boundary where exceptions become messages and exit codes: a
:class:`~servewise.errors.ServewiseError` is rendered with its hint (as JSON with
``--json``), a usage error of the parser too, Ctrl-C ends with 130, and anything else is
reported as an internal error in one line (``SERVEWISE_DEBUG=1`` shows the traceback, and
that of an error's cause, such as the network failure behind a Hub error).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

import typer

try:  # typer 0.2x carries its own copy of click
    from typer._click import exceptions as click_errors
except ImportError:  # pragma: no cover - typer with click as a dependency
    from click import exceptions as click_errors  # type: ignore[no-redef]

import importlib
from typing import Any

from servewise.cli import _common
from servewise.cli._common import render_error
from servewise.errors import ServewiseError, UsageError

__all__ = ["COMMAND_MODULES", "app", "load_commands", "main", "run"]

INTERRUPTED = 130

MODULES = ("bench", "build", "check", "diagnose", "images", "diff", "evidence", "launch",
           "plan", "recipe", "sweep", "version")
"""Every command module, in the order ``--help`` lists their commands."""
COMMAND_MODULES: dict[str, tuple[str, ...]] = {
    "bench": ("bench",), "runs": ("bench",),
    "inspect": ("build",), "gate": ("build",), "gpus": ("build",),
    "check": ("check",), "tags": ("images",), "bisect": ("images",), "diff": ("diff",),
    "plan": ("evidence",), "model": ("evidence",), "report": ("evidence",),
    "launch": ("launch",), "stop": ("launch",), "search": ("launch",),
    "sweep": ("sweep",), "version": ("version",), "diagnose": ("diagnose",),
    "recipe": ("recipe",),
}
"""The modules that define each command (``plan`` gets ``plan accuracy`` from evidence)."""


def load_commands(name: str | None = None) -> typer.Typer:
    """The app with the modules of command ``name`` loaded (every command's for None or a
    name no module defines)."""
    for module in COMMAND_MODULES.get(name or "", MODULES):
        importlib.import_module(f"servewise.cli.{module}")
    return _common.app


def __getattr__(name: str) -> Any:
    """``app``: the app with every command on it (what tests and ``--help`` see)."""
    if name == "app":
        return load_commands()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _command_name(args: Sequence[str]) -> str | None:
    """The command asked for: the first word that is not an option, before ``--``."""
    for word in args:
        if word == "--":
            return None
        if not word.startswith("-"):
            return word
    return None


def run(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (default ``sys.argv[1:]``) and return its exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    as_json = "--json" in (args[:args.index("--")] if "--" in args else args)
    try:
        name = _command_name(args)
        only_version = name is None and "--version" in args and "--help" not in args
        app = _common.app if only_version else load_commands(name)
        result = app(args=args, prog_name="servewise", standalone_mode=False)
    except ServewiseError as error:
        return render_error(error, as_json)
    except typer.Exit as done:
        return done.exit_code
    except (typer.Abort, KeyboardInterrupt):
        return _interrupted(as_json)
    except click_errors.NoArgsIsHelpError as error:
        sys.stdout.write(error.format_message() + "\n")
        return 0
    except click_errors.ClickException as error:
        context = getattr(error, "ctx", None)
        command = context.command_path if context is not None else "servewise"
        usage = UsageError(error.format_message(), hint=f"`{command} --help` lists the options")
        return render_error(usage, as_json)
    except Exception as error:
        if os.environ.get("SERVEWISE_DEBUG"):
            raise
        internal = ServewiseError(
            f"internal error: {type(error).__name__}: {error}",
            hint="this is a bug in servewise; run again with SERVEWISE_DEBUG=1 for the "
            "traceback and report it",
        )
        return render_error(internal, as_json)
    return result if isinstance(result, int) else 0


def _interrupted(as_json: bool) -> int:
    interrupted = ServewiseError("interrupted", hint="nothing was reported for this run")
    render_error(interrupted, as_json)
    return INTERRUPTED


def main() -> None:
    """Entry point of the ``servewise`` console script."""
    raise SystemExit(run())
