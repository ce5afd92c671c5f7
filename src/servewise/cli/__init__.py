"""The ``servewise`` command: parse arguments, call one library function, render.

Each command lives in its own module of this package and registers itself on the
shared Typer app of :mod:`servewise.cli._common`; importing them here is what puts
them on the command line. stdout carries data (``--json`` prints JSON there);
stderr carries progress, warnings and errors. Exit codes: 0 fine, 1 the check
failed, 2 bad usage or unreadable input.
"""

from __future__ import annotations

from servewise.cli import bench, build, diagnose, images
from servewise.cli import diff as diff_command
from servewise.cli import plan as plan_commands
from servewise.cli import recipe as recipe_commands
from servewise.cli import version as version_command
from servewise.cli._common import app

__all__ = [
    "app", "bench", "build", "diagnose", "diff_command", "images", "main", "plan_commands",
    "recipe_commands", "version_command",
]


def main() -> None:
    """Entry point of the ``servewise`` console script."""
    app()
