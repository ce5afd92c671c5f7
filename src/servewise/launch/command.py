"""The command a launch runs: which engine it is, its engine settings, its port, placeholders.

Pure functions over argv (no I/O but :func:`read_check_file`): :func:`engine_of` tells
vLLM from SGLang by the program, :func:`engine_args` cuts the engine's own arguments out
of a command line (``vllm serve MODEL ...``, ``python -m sglang.launch_server ...``),
:func:`fill` puts a value and a port into ``{value}`` and ``{port}``, :func:`with_port`
makes sure the engine listens where the readiness probe looks, and :func:`docker_argv`
renders the same engine arguments as a ``docker run`` command line.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servewise.errors import UsageError
from servewise.formats.redact import is_secret_name
from servewise.knowledge import argv as argv_tools
from servewise.knowledge.engines import default_port, engine_args, engine_of

__all__ = [
    "EngineCommand", "docker_argv", "engine_args", "engine_of", "fill",
    "parse_check_document", "read_check_file", "with_port",
]

PLACEHOLDERS = ("{value}", "{port}")


@dataclass(frozen=True)
class EngineCommand:
    """A command line and what servewise knows about it."""

    argv: tuple[str, ...]
    """The program and its arguments, placeholders filled."""
    engine: str | None
    """``vllm``, ``sglang`` or None (another program: probed like an OpenAI server)."""
    port: int
    """Where the server listens (and the readiness probe looks)."""
    host: str = "127.0.0.1"
    """Where the probe connects."""

    @property
    def args(self) -> list[str]:
        """The engine's own arguments (after ``serve`` or the module name)."""
        return engine_args(self.argv, self.engine)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data."""
        return {"argv": list(self.argv), "engine": self.engine, "port": self.port,
                "host": self.host, "shell": shlex.join(self.argv)}


def fill(argv: Sequence[str], *, value: str | None = None, port: int | None = None
         ) -> list[str]:
    """``argv`` with ``{value}`` and ``{port}`` replaced wherever they appear."""
    out = []
    for token in argv:
        if value is not None:
            token = token.replace("{value}", value)
        if port is not None:
            token = token.replace("{port}", str(port))
        out.append(token)
    return out


def with_port(argv: Sequence[str], engine: str | None, port: int | None
              ) -> tuple[list[str], int]:
    """The command and the port its server will listen on.

    The command's own ``--port`` wins; ``port`` (``--port`` of ``launch``) must then agree.
    Without one in the command, ``port`` is added as the engine's ``--port`` flag; without
    either, the engine's default port is probed.
    """
    args = engine_args(argv, engine)
    given = argv_tools.last_value(args, "--port")
    if given is not None:
        try:
            own = int(given)
        except ValueError:
            raise UsageError(f"the command's --port {given!r} is not a port number",
                             hint="write --port 8000, or --port {port} to let servewise "
                             "choose", found=given) from None
        if port is not None and own != port:
            raise UsageError(
                f"--port {port} differs from the command's own --port {own}",
                hint="give the port once: in the command, or with servewise's --port",
                found=own)
        return list(argv), own
    if port is None:
        if engine is None:
            raise UsageError(
                "cannot tell which port this command listens on",
                hint="pass --port P (servewise probes it), or put --port in the command")
        return list(argv), default_port(engine)
    if engine is None:
        return list(argv), port  # servewise cannot add a flag a program it does not know reads
    return [*argv, "--port", str(port)], port


def docker_argv(image: str, argv: Sequence[str], engine: str | None, port: int, *,
                name: str, env: Mapping[str, str] | None = None, gpus: str | None = "all"
                ) -> list[str]:
    """The ``docker run`` command that runs the same engine in ``image``.

    vLLM and SGLang commands are rendered by the one docker renderer
    (:func:`servewise.recipes.renderers.render`, as ``check --format docker`` and ``recipe
    render`` do): SGLang listens on ``0.0.0.0``, the Hugging Face cache is mounted and
    ``HF_TOKEN`` passed, a local model folder is mounted read-only at its own path. Another
    program gets a plain ``docker run`` with the whole command. Secret values (``HF_TOKEN``,
    ``*_API_KEY``) are passed by name: docker reads them from its own environment, which the
    launch sets.
    """
    if engine is not None:
        from servewise.recipes.renderers import launch_from_argv, render

        launch = launch_from_argv(argv, image=image, env=env)
        # the command runs without a shell: the cache folder is written out, not $HOME/...
        home = (env or {}).get("HF_HOME") or os.environ.get("HF_HOME") or str(
            Path("~/.cache/huggingface").expanduser())
        own = argv_tools.last_value(launch.argv, "--port")
        # the engine's default port needs no flag (the renderer publishes it all the same)
        wanted = None if own is None and port == default_port(engine) else port
        return render(launch, "docker", port=wanted, container=name, hf_cache=home).argv
    run = ["docker", "run", "--rm", "--name", name, "--ipc=host", "-p", f"{port}:{port}"]
    if gpus:
        run += ["--gpus", gpus]
    for key, value in (env or {}).items():
        run += ["-e", key if is_secret_name(key) else f"{key}={value}"]
    return [*run, image, *argv]


def parse_check_document(text: str, source: str) -> tuple[list[str], dict[str, str]]:
    """The argv and environment of a ``servewise check --json`` document.

    The contract is ``{"command": {"argv": [...], "env": {...}}}`` (``env`` optional).
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise UsageError(f"{source} is not JSON: {error}",
                         hint="write it with `servewise check MODEL --gpu NAME --json > FILE`",
                         expected="a JSON object", found=text[:60]) from None
    command = data.get("command") if isinstance(data, dict) else None
    argv = command.get("argv") if isinstance(command, dict) else None
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
        raise UsageError(
            f"{source} has no command to launch",
            hint="`servewise check ... --json` writes it as {\"command\": {\"argv\": [...]}}",
            expected='{"command": {"argv": ["vllm", "serve", ...]}}',
            found=type(argv).__name__ if argv is not None else "no command.argv")
    assert isinstance(command, dict)
    env = command.get("env") or {}
    if not isinstance(env, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        raise UsageError(f"{source}: command.env is not an object of strings",
                         expected='{"KEY": "VALUE"}', found=type(env).__name__,
                         hint="write it with `servewise check MODEL --gpu NAME --json > FILE`")
    return list(argv), dict(env)


def read_check_file(path: Path) -> tuple[list[str], dict[str, str]]:
    """The argv and environment of a saved ``servewise check --json`` result."""
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"cannot read {path}: {error}",
                         hint="give the file `servewise check ... --json > FILE` wrote",
                         path=str(path)) from None
    return parse_check_document(text, str(path))
