"""``servewise diagnose FILE|-``, ``diagnose explain RULE`` and ``diagnose rules``.

``diagnose`` is a command group whose default command reads a log: a first
argument that is not a subcommand (``explain``, ``rules``) is taken as the log
file, with the options before or after it (``diagnose --json engine.log``,
``diagnose engine.log --gpu h200``); ``diagnose FILE`` is short for the hidden
``diagnose log FILE``. A log file literally named ``rules`` is ``./rules``.
"""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from servewise.cli._common import app, emit_json, errors_as_json, out, say
from servewise.cli.options import JsonOption, OptionalGpuOption, gpu_spec
from servewise.errors import UsageError

LOG_COMMAND = "log"


class _DiagnoseGroup(TyperGroup):
    """A group whose unknown first word is the log file of its hidden default command."""

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        if args and args[0] not in self.commands:
            return LOG_COMMAND, self.commands[LOG_COMMAND], args
        return super().resolve_command(ctx, args)


diagnose_app = typer.Typer(
    cls=_DiagnoseGroup,
    no_args_is_help=True,
    context_settings={"ignore_unknown_options": True},
    help="Find the root cause of a failed engine log: the library and layer, and the fix. "
    "`servewise diagnose FILE|- [--json] [--gpu NAME] [--follow]` reads a log (`-` is "
    "standard input, e.g. `docker logs CONTAINER 2>&1 | servewise diagnose -`); exit 1 when "
    "it shows a failure, 0 when it shows none, 2 for bad input. "
    "`servewise diagnose FILE --help` lists its options.",
)
app.add_typer(diagnose_app, name="diagnose")


@diagnose_app.command(LOG_COMMAND, hidden=True)
def diagnose_log(
    ctx: typer.Context,
    file: Annotated[str, typer.Argument(metavar="FILE|-", show_default=False,
                                        help="The engine's log, or - for standard input.")],
    as_json: JsonOption = False,
    output: Annotated[str, typer.Option(
        "--format", help="text, json (as --json) or markdown (the triage contract for an "
        "issue or a ticket).", show_default=False)] = "text",
    gpu: OptionalGpuOption = None,
    follow: Annotated[bool, typer.Option(
        "--follow", "-f", help="Keep reading as the log grows; report once a failure has been "
        "followed by --settle seconds of quiet.")] = False,
    settle: Annotated[float, typer.Option(
        "--settle", help="With --follow: seconds of quiet after a failure before reporting.",
        min=0.0)] = 2.0,
    idle_timeout: Annotated[float | None, typer.Option(
        "--idle-timeout", help="With --follow: stop after this many seconds without new "
        "lines (default: keep waiting).", min=0.0, show_default=False)] = None,
) -> None:
    """Diagnose one log: the root cause, its evidence, the fix."""
    from servewise.diagnose import new_scanner
    from servewise.diagnose.pipeline import feed_log
    from servewise.sources.logs import follow_chunks, log_chunks, log_size

    as_json = errors_as_json(ctx, as_json or output == "json")
    if output not in ("text", "json", "markdown"):
        raise UsageError(f"unknown --format {output!r}", hint="use text, json or markdown",
                         found=output)
    # The GPU the engine ran on: its memory completes the advice when the log does not
    # say it (the count is accepted, as everywhere, and not needed here).
    device = gpu_spec(gpu) if gpu is not None else None
    scanner = new_scanner(gpu=device)
    if follow:
        def should_stop(idle: float) -> bool:
            if scanner.failure_seen and idle >= settle:
                return True
            return idle_timeout is not None and idle >= idle_timeout

        chunks = follow_chunks(file, should_stop)
        size = None
    else:
        chunks = log_chunks(file)
        size = log_size(file)
    try:
        feed_log(scanner, chunks, size)  # a large file is read on a second core
    except KeyboardInterrupt:
        say("note", "dim", "interrupted: diagnosing what was read so far")
    finally:
        close = getattr(chunks, "close", None)
        if close is not None:
            close()  # the file is closed even when the input is refused mid-way
    diagnosis = scanner.finish()
    source = "standard input" if file == "-" else file
    if as_json:
        emit_json(diagnosis.to_dict())
    elif output == "markdown":
        from servewise.formats.redact import redact_text
        from servewise.render.diagnose import diagnosis_markdown

        sys.stdout.write(redact_text(diagnosis_markdown(diagnosis, source)))
    else:
        from servewise.render.diagnose import diagnosis_view

        out().print(diagnosis_view(diagnosis, source), highlight=False)
    raise typer.Exit(diagnosis.exit_code)


@diagnose_app.command("explain")
def explain(
    rule: Annotated[str, typer.Argument(help="A rule id (MEM004), name or category.",
                                        show_default=False)],
    as_json: JsonOption = False,
) -> None:
    """What a rule recognises, why it happens and what to do."""
    from servewise.diagnose.docs import rule_page, rule_to_dict
    from servewise.diagnose.ruleset import load_rules

    rules = load_rules()
    found = rules.find(rule)
    if as_json:
        emit_json(rule_to_dict(found))
        return
    page = rule_page(found, rules)
    if sys.stdout.isatty():
        from rich.markdown import Markdown

        out().print(Markdown(page))
    else:
        sys.stdout.write(page)


@diagnose_app.command("rules")
def rules_command(as_json: JsonOption = False) -> None:
    """Every diagnose rule: id, name, kind, category, layer, status."""
    from servewise.diagnose.docs import rule_summary
    from servewise.diagnose.ruleset import load_rules

    rules = load_rules()
    if as_json:
        emit_json([rule_summary(rule) for rule in rules.rules])
        return
    from servewise.render.diagnose import rules_table

    out().print(rules_table(rules))
