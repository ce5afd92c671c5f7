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
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servewise.errors import UsageError

__all__ = [
    "DEFAULT_PORTS", "EngineCommand", "docker_argv", "engine_args", "engine_of", "fill",
    "parse_check_document", "read_check_file", "with_port",
]

#: Where each engine listens unless told otherwise.
DEFAULT_PORTS = {"vllm": 8000, "sglang": 30000}
#: Module or program names that start each engine's OpenAI-compatible server.
_VLLM_ENTRIES = ("vllm.entrypoints.openai.api_server", "vllm.entrypoints.api_server")
_SGLANG_ENTRIES = ("sglang.launch_server",)
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


def engine_of(argv: Sequence[str]) -> str | None:
    """``vllm`` or ``sglang`` when ``argv`` starts one of them, else None."""
    for index, token in enumerate(argv):
        base = Path(token).name
        if base == "vllm" and index + 1 < len(argv) and argv[index + 1] == "serve":
            return "vllm"
        if token in _VLLM_ENTRIES:
            return "vllm"
        if token in _SGLANG_ENTRIES or base == "sglang":
            return "sglang"
    return None


def engine_args(argv: Sequence[str], engine: str | None) -> list[str]:
    """The arguments after the engine's entry point (the whole tail when it is unknown)."""
    for index, token in enumerate(argv):
        if engine == "vllm" and Path(token).name == "vllm" and argv[index + 1:index + 2] == [
                "serve"]:
            return list(argv[index + 2:])
        if token in _VLLM_ENTRIES or token in _SGLANG_ENTRIES:
            return list(argv[index + 1:])
        if engine == "sglang" and Path(token).name == "sglang" and argv[index + 1:index + 2] == [
                "serve"]:
            return list(argv[index + 2:])
    return list(argv[1:])


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


def _flag_value(args: Sequence[str], names: Sequence[str]) -> str | None:
    for index, token in enumerate(args):
        name, has_inline, inline = token.partition("=")
        if name in names:
            if has_inline:
                return inline
            return args[index + 1] if index + 1 < len(args) else None
    return None


def with_port(argv: Sequence[str], engine: str | None, port: int | None
              ) -> tuple[list[str], int]:
    """The command and the port its server will listen on.

    The command's own ``--port`` wins; ``port`` (``--port`` of ``launch``) must then agree.
    Without one in the command, ``port`` is added as the engine's ``--port`` flag; without
    either, the engine's default port is probed.
    """
    args = engine_args(argv, engine)
    given = _flag_value(args, ("--port",))
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
        return list(argv), DEFAULT_PORTS[engine]
    if engine is None:
        return list(argv), port  # servewise cannot add a flag a program it does not know reads
    return [*argv, "--port", str(port)], port


def docker_argv(image: str, argv: Sequence[str], engine: str | None, port: int, *,
                name: str, env: Mapping[str, str] | None = None, gpus: str | None = "all"
                ) -> list[str]:
    """The ``docker run`` command that runs the same engine in ``image``.

    vLLM's images (``vllm/vllm-openai``) start ``vllm serve``: the engine arguments follow
    the image. Other images get the whole command. A model given as a local folder is
    mounted read-only at the same path; the port is published on the host.
    """
    run = ["docker", "run", "--rm", "--name", name, "--ipc=host", "-p", f"{port}:{port}"]
    if gpus:
        run += ["--gpus", gpus]
    for key, value in (env or {}).items():
        run += ["-e", f"{key}={value}"]
    args = engine_args(argv, engine)
    for token in _model_paths(args, engine):
        run += ["-v", f"{token}:{token}:ro"]
    if engine == "vllm":
        return [*run, image, *args]
    return [*run, image, *argv]


def _model_paths(args: Sequence[str], engine: str | None) -> list[str]:
    """Local folders the engine arguments name as the model (to mount them)."""
    candidates = []
    named = _flag_value(args, ("--model", "--model-path"))
    if named is not None:
        candidates.append(named)
    elif engine == "vllm" and args and not args[0].startswith("-"):
        candidates.append(args[0])
    return [token for token in candidates if token.startswith("/")]


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
