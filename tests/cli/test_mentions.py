"""Every option and command that servewise's own messages name exists on its command line.

Hints once said ``raise it with --max-header-bytes`` and ``servewise model --list``, neither
of which exists. This test reads every string literal of the package (not docstrings, which
are for developers; command help is read from the command line itself) and every shipped
data file, and checks:

* each ``servewise COMMAND …`` mention written for a user to type (in backticks, or after
  ``e.g.``, ``run``, ``: `` or a pipe) names a command, and each ``--option`` in it is one
  of that command's options;
* each bare ``--option`` in a message of the package is a servewise option, or an engine
  flag of the shared flag table (``knowledge/data/engine_flags.toml``), or one of the few
  listed below with the reason it is not.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer

from servewise.cli import app
from servewise.knowledge.flags import load_flag_table

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "servewise"
OPTION_RE = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
MENTION_RE = re.compile(r"(?:`|e\.g\. |run |\| |: (?=servewise [a-z][\w-]*(?: [A-Z{$<-]|$)))"
                        r"servewise ([a-z][\w-]*)([^`\"\n;)]*)")

#: Options named in messages that are neither servewise's nor in the engine flag table.
NOT_OURS = {
    "--help": "every command's help option (click adds it)",
    "--flag-name": "a placeholder in the flag table's own validation message",
    "--head": "`ray start --head`, named in sweep's hint for a Ray address",
}

#: Commands that data files already name and that another branch adds (delete on merge).
def _commands() -> dict[str, set[str]]:
    root: Any = typer.main.get_command(app)  # typer's own click: a group with .commands
    found: dict[str, set[str]] = {"": {o for p in root.params for o in (*p.opts,
                                                                        *p.secondary_opts)}}
    for name, command in root.commands.items():
        found[name] = _options(command) | {"--help"}
    from servewise.cli.evidence import accuracy_app  # `plan accuracy`, handed on by `plan`

    found["plan"] |= _options(typer.main.get_command(accuracy_app))
    return found


def _options(command: Any) -> set[str]:
    """A command's options; for a group (``diagnose``), its subcommands' too."""
    found = {o for p in command.params for o in (*p.opts, *p.secondary_opts)}
    for sub in getattr(command, "commands", {}).values():
        found |= _options(sub)
    return found


COMMANDS = _commands()
OURS = set().union(*COMMANDS.values())
ENGINE_FLAGS = {name for setting in load_flag_table() for spelling in setting.spellings
                for name in spelling.names}


#: Keyword arguments and variables that hold text for a user.
MESSAGE_NAMES = ("hint", "help", "note", "reason", "message", "why")


def _strings(node: ast.AST) -> Iterator[str]:
    """The literal text inside an expression: constants and the fixed parts of f-strings."""
    for inner in ast.walk(node):
        if isinstance(inner, ast.Constant) and isinstance(inner.value, str):
            yield inner.value


def _is_message_call(call: ast.Call) -> bool:
    """An error raised for a user (``SomethingError(...)``), or a line said to one."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name.endswith(("Error", "Warning")) or name in ("say", "fail")


def _messages() -> Iterator[tuple[str, str]]:
    """``(where, text)`` of every message and hint the package gives a user.

    Errors' messages and every ``hint=``, ``help=``, ``note=`` and ``reason=`` argument, and
    lines given to ``say``; not docstrings, and not the command lines recipes write for other
    tools (``ray start --address``), which name those tools' options.
    """
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id in MESSAGE_NAMES for t in node.targets):
                for text in _strings(node.value):  # hint = ("…" "…") built before the raise
                    yield f"{path.relative_to(PACKAGE)}:{node.lineno}", text
            if not isinstance(node, ast.Call):
                continue
            where = f"{path.relative_to(PACKAGE)}:{node.lineno}"
            parts: list[ast.AST] = []
            if _is_message_call(node):
                parts.extend(node.args)
            parts.extend(k.value for k in node.keywords
                         if k.arg in MESSAGE_NAMES)
            for part in parts:
                for text in _strings(part):
                    yield where, text


def _help_texts() -> Iterator[tuple[str, str]]:
    """The help users read: each command's and each option's."""
    root: Any = typer.main.get_command(app)
    for name, command in root.commands.items():
        yield f"servewise {name} --help", command.help or ""
        for sub in [command, *getattr(command, "commands", {}).values()]:
            for param in sub.params:
                yield f"servewise {name} {param.name}", getattr(param, "help", None) or ""


def _data_files() -> Iterator[tuple[str, str]]:
    for path in sorted((PACKAGE / "knowledge" / "data").rglob("*.toml")):
        yield str(path.relative_to(PACKAGE)), path.read_text(encoding="utf-8")


def _bad_mentions(texts: Iterator[tuple[str, str]]) -> list[str]:
    bad = []
    for where, text in texts:
        for match in MENTION_RE.finditer(text):
            command, rest = match.group(1), match.group(2)
            if command not in COMMANDS:
                bad.append(f"{where}: `servewise {command}` is no command")
                continue
            for option in OPTION_RE.findall(rest):
                if option not in COMMANDS[command] | COMMANDS[""]:
                    bad.append(f"{where}: `servewise {command}` has no {option}")
    return bad


def test_every_servewise_command_a_message_names_exists() -> None:
    assert _bad_mentions(_messages()) == []


def test_every_servewise_command_the_help_and_data_name_exists() -> None:
    assert _bad_mentions(_help_texts()) == []
    assert _bad_mentions(_data_files()) == []


def test_every_option_a_message_names_exists() -> None:
    bad = [f"{where}: {option}" for where, text in [*_messages(), *_help_texts()]
           for option in OPTION_RE.findall(text)
           if option not in OURS | ENGINE_FLAGS | NOT_OURS.keys()]
    assert bad == []


@pytest.mark.parametrize("text", ["raise it with `servewise model --max-header-bytes`",
                                  "see `servewise model --list`", "e.g. servewise cards"])
def test_the_check_catches_what_was_wrong(text: str) -> None:
    assert _bad_mentions(iter([("example", text)])) != []
