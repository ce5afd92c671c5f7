"""``servewise plan`` and ``servewise model`` on the Typer app.

Both are parsed and run by :mod:`servewise.fastcli` (argparse, no rich), which the console
entry point calls directly for speed; these commands make them part of the app (help,
tests, ``python -m servewise``) by forwarding their arguments unchanged.
"""

from __future__ import annotations

import typer

from servewise.cli._common import app
from servewise.fastcli import MODEL_HELP, PLAN_HELP, run

_PASS_THROUGH = {"allow_extra_args": True, "ignore_unknown_options": True,
                 "help_option_names": []}


@app.command(context_settings=_PASS_THROUGH, help=PLAN_HELP, add_help_option=False)
def plan(ctx: typer.Context) -> None:
    """Memory plan for a model on GPUs (see ``servewise plan --help``)."""
    raise typer.Exit(run("plan", list(ctx.args)))


@app.command(context_settings=_PASS_THROUGH, help=MODEL_HELP, add_help_option=False)
def model(ctx: typer.Context) -> None:
    """A model's shape, weights and KV bytes per token (see ``servewise model --help``)."""
    raise typer.Exit(run("model", list(ctx.args)))
