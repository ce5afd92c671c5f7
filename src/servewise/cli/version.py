"""The ``version`` command: what an engine version string or image tag says about a build."""

from __future__ import annotations

from typing import Annotated

import typer

from servewise.cli._common import app, emit_json, out
from servewise.cli.options import JsonOption


@app.command("version")
def version(
    text: Annotated[str, typer.Argument(
        metavar="STRING",
        help="A version (0.26.1rc1.dev229+g6f91edf96.d20260731), an image tag "
        "(nightly-<commit>, v0.5.2-cu126), an image reference (vllm/vllm-openai:nightly), "
        "a wheel file name or NAME==VERSION.", show_default=False)],
    as_json: JsonOption = False,
) -> None:
    """Read an engine version string or image tag: release, pre/dev, commit, build date."""
    from servewise.knowledge.version_reading import read_version

    reading = read_version(text)
    if as_json:
        emit_json(reading.to_dict())
        return
    from servewise.render.builds import version_table

    out().print(version_table(reading))
