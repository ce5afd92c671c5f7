"""What a launch is and how one engine command is written: the pieces every renderer shares.

:class:`Launch` (engine, model, flags, environment, image, nodes and how they join, prefill/decode
pools), :class:`Command` and :class:`Rendered`, shell quoting that leaves ``$VARIABLE`` words
to the shell, the engine's server command and the flags that make a node join the first one.
:mod:`servewise.recipes.renderers` (vllm, sglang, docker), :mod:`servewise.recipes.k8s` and
:mod:`servewise.recipes.pd` build on them.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from servewise.errors import UsageError
from servewise.knowledge import argv as argv_tools
from servewise.knowledge.engines import default_port, serving_engines
from servewise.knowledge.flags import EngineSettings, flag_for, to_argv
from servewise.recipes.model import Pool, Recipe

DEFAULT_PORT = {engine: default_port(engine) for engine in serving_engines()}
"""Where each engine listens unless told otherwise (``port`` in ``engines.toml``)."""
HEAD = "$HEAD_IP"
"""How commands name the first node's address (set HEAD_IP on every node)."""
SGLANG_DIST_PORT = 20000
RAY_PORT = 6379
CONTAINER_MODEL_DIR = "/model"
HF_CACHE = "$HOME/.cache/huggingface"


@dataclass(frozen=True)
class Launch:
    """What to start: an engine, the model (Hugging Face id or path), flags and environment."""

    engine: str
    model: str
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()
    image: str | None = None
    nodes: int = 1
    gpus: int | None = None
    """GPUs per node (Kubernetes asks for this many; None: ask for none)."""
    name: str = "servewise"
    version: str | None = None
    """The engine version the flags are spelled for (None: the current spelling)."""
    multinode: str | None = None
    """How several nodes join (``mp``, ``dp``, ``ray``; None: ``mp``)."""
    pools: tuple[Pool, ...] = ()
    """Prefill/decode pools (each rendered on its own nodes), with the router's command."""
    router: tuple[str, ...] = ()

    def flag(self, setting: str) -> str:
        """How this engine (at this version) spells a setting of the shared flag table."""
        return flag_for(self.engine, setting, self.version)

    @classmethod
    def from_settings(
        cls, engine: str, settings: EngineSettings, *, version: str | None = None,
        env: Mapping[str, str] | None = None, image: str | None = None, nodes: int = 1,
        gpus: int | None = None, name: str = "servewise",
    ) -> Launch:
        """The launch of shared-vocabulary settings (``settings.model`` is the model)."""
        if not settings.model:
            raise UsageError("the settings name no model", hint="set EngineSettings.model")
        argv = to_argv(engine, settings.replace(model=None), version)
        return cls(engine=engine, model=settings.model, argv=tuple(argv),
                   env=tuple((env or {}).items()), image=image, nodes=nodes, gpus=gpus,
                   name=name, version=version)

    @classmethod
    def from_recipe(cls, recipe: Recipe) -> Launch:
        """The launch a recipe describes."""
        slug = recipe.match.model.rsplit("/", 1)[-1].lower().replace(".", "-").replace("_", "-")
        return cls(engine=recipe.engine, model=recipe.checkpoint, argv=recipe.argv,
                   env=recipe.env, image=recipe.image, nodes=recipe.match.nodes,
                   gpus=recipe.match.gpus, name=f"{slug}-{recipe.engine}",
                   version=recipe.min_version, multinode=recipe.multinode, pools=recipe.pools,
                   router=recipe.router)


@dataclass(frozen=True)
class Command:
    """One command to run: where (``node 0``, ``head``, ``worker 1``…), its argv and env."""

    role: str
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)

    @property
    def shell(self) -> str:
        """The command as shell text, one flag per line."""
        return shell_text(self.argv, self.env)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return {"role": self.role, "argv": self.argv, "env": self.env, "shell": self.shell}


@dataclass(frozen=True)
class Rendered:
    """A rendered launch: the first command's argv, all of it as shell text, each command."""

    format: str
    argv: list[str]
    shell: str
    commands: list[Command]
    manifest: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        data: dict[str, Any] = {"format": self.format, "argv": self.argv, "shell": self.shell,
                                "commands": [command.to_dict() for command in self.commands]}
        if self.manifest is not None:
            data["manifest"] = self.manifest
        return data


def shell_text(argv: Sequence[str], env: Mapping[str, str] | None = None) -> str:
    """``argv`` as shell text: the program words on the first line, then one flag per line.

    ``$VARIABLE`` words (``$HEAD_IP``, ``$HOME/.cache``) are left for the shell to expand;
    everything else is quoted (:func:`shell_quote`), so a shell given the text runs ``argv``
    and nothing else, whatever its words hold. A NUL byte, which no argv can carry, is refused.
    """
    for word in (*argv, *(env or {}).values()):
        _refuse_nul(word)
    lines: list[list[str]] = [[f"{name}={shell_quote(value)}"
                               for name, value in (env or {}).items()]]
    for index, raw in enumerate(argv):
        current = lines[-1]
        first_line = len(lines) == 1
        flag_line = bool(current) and current[0].startswith("-")
        after_python = index > 0 and argv[index - 1] in ("python", "python3")
        starts = (raw.startswith("-") and not (raw == "-m" and after_python)) or (
            flag_line and len(current) >= 2)
        if starts and (not first_line or any(not w.partition("=")[1] or w.startswith("-")
                                             for w in current)):
            lines.append([])
        lines[-1].append(shell_quote(raw))
    return " \\\n  ".join(" ".join(line) for line in lines if line)


_VARIABLE = re.compile(r"\$[A-Za-z_][A-Za-z0-9_]*(?::\d+)?")
_EXPANDABLE = re.compile(
    r"[A-Za-z0-9_./:@%+,=-]*\$[A-Za-z_][A-Za-z0-9_]*[A-Za-z0-9_./:@%+,=-]*")
_ARITHMETIC = re.compile(r"\$\(\([A-Za-z_][A-Za-z0-9_]* \* \d+\)\)")
"""``$((RANK * 2))``: the one shell arithmetic the renderers write (a node's first rank)."""


def _refuse_nul(word: str) -> None:
    if "\0" in word:
        raise UsageError("an argument holds a NUL byte, which no command line can carry",
                         expected="text without NUL bytes", found=repr(word[:60]),
                         hint="remove the NUL byte from the recipe or the flags")


def shell_quote(word: str) -> str:
    """One word for a POSIX shell: quoted, except that one ``$NAME`` in a word made only of
    plain characters (``$HEAD_IP``, ``$HOME/x``, ``--a=$IP:1``) is left to the shell to
    expand. The whole word must match (``fullmatch``): a newline or a quote anywhere, even
    last, gets the word quoted."""
    _refuse_nul(word)
    if _VARIABLE.fullmatch(word):
        return word
    if _EXPANDABLE.fullmatch(word) or _ARITHMETIC.fullmatch(word):
        return f'"{word}"'
    return shlex.quote(word)


def shell_join(argv: Sequence[str]) -> str:
    """``argv`` as one line of shell text that runs exactly ``argv`` (no word expanded)."""
    for word in argv:
        _refuse_nul(word)
    return shlex.join(argv)


def serve_argv(launch: Launch, model: str, flags: Sequence[str]) -> list[str]:
    """The engine's server command: ``vllm serve MODEL …`` or SGLang's ``launch_server``."""
    if launch.engine == "vllm":
        return ["vllm", "serve", model, *flags]
    return ["python3", "-m", "sglang.launch_server", launch.flag("model"), model, *flags]


def node_flags(launch: Launch, rank: int | str, nodes: int | str, multinode: str,
               head: str) -> list[str]:
    """The flags that make node ``rank`` of ``nodes`` join the first node at ``head``.

    ``dp`` (vLLM data parallel across nodes): every node runs its own engines, the first
    node's address is already in the flags (``--data-parallel-address``); node ``rank``
    starts at data-parallel rank ``rank x --data-parallel-size-local``."""
    if launch.engine == "vllm" and multinode == "dp":
        if rank in (0, "0"):
            return []
        local = argv_tools.last_value(launch.argv, "--data-parallel-size-local") or "1"
        start = str(int(rank) * int(local)) if isinstance(rank, int) or rank.isdigit() \
            else f"$(({rank.lstrip('$')} * {int(local)}))"
        return ["--data-parallel-start-rank", start]
    if launch.engine == "vllm" and multinode == "ray":
        return [launch.flag("distributed_executor_backend"), "ray"] if rank in (0, "0") else []
    address = f"{head}:{SGLANG_DIST_PORT}" if launch.engine == "sglang" else head
    flags = [launch.flag("nnodes"), str(nodes), launch.flag("node_rank"), str(rank),
             launch.flag("dist_init_addr"), address]
    if launch.engine == "vllm" and rank not in (0, "0"):
        flags.append(launch.flag("headless"))
    return flags


def with_node_flags(flags: Sequence[str], node: Sequence[str]) -> list[str]:
    """``flags`` with a node's own flags set (replacing a value the flags already have)."""
    out = list(flags)
    for name, value, _ in argv_tools.flags(node):
        out = argv_tools.with_flag(out, name, value)
    return out


def at_head(words: Sequence[str], head: str) -> list[str]:
    """``words`` with the first node's address (``$HEAD_IP`` in recipes) set to ``head``."""
    return [word.replace(HEAD, head) if HEAD in word else word for word in words]


__all__ = [
    "CONTAINER_MODEL_DIR", "DEFAULT_PORT", "HEAD", "HF_CACHE", "RAY_PORT", "SGLANG_DIST_PORT",
    "Command", "Launch", "Rendered", "at_head", "node_flags", "serve_argv", "shell_join",
    "shell_quote", "shell_text", "with_node_flags",
]
