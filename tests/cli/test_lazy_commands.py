"""The command line loads only the module of the command asked for, and the map is whole."""

from __future__ import annotations

import subprocess
import sys

from typer.main import get_command

import servewise.cli as cli


def test_every_command_is_in_the_map_with_the_module_that_defines_it() -> None:
    group = get_command(cli.app)
    assert set(cli.COMMAND_MODULES) == set(group.commands)  # type: ignore[attr-defined]
    assert {m for mods in cli.COMMAND_MODULES.values() for m in mods} <= set(cli.MODULES)


def test_a_command_loads_only_its_modules() -> None:
    probe = ("import sys; from servewise.cli import load_commands; "
             "from typer.main import get_command; "
             "app = load_commands('{name}'); "
             "print(' '.join(sorted(get_command(app).commands)))")
    for name in ("plan", "check", "diagnose", "version"):
        done = subprocess.run([sys.executable, "-c", probe.format(name=name)],
                              capture_output=True, text=True, check=True, timeout=60)
        loaded = set(done.stdout.split())
        assert name in loaded, (name, loaded)
        assert "sweep" not in loaded and "bench" not in loaded, (name, loaded)


def test_unknown_commands_and_help_see_every_command(capsys: object) -> None:
    assert cli.run(["--help"]) == 0
    assert cli.run(["no-such-command"]) == 2


def test_version_needs_no_command_module(capsys: object) -> None:
    probe = ("import sys; from servewise.cli import run; code = run(['--version']); "
             "print(code, 'servewise.cli.bench' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True, timeout=60)
    assert done.stdout.split()[-2:] == ["0", "False"]
