"""Launch commands from one argv: ``vllm serve``, ``docker run``, SGLang, multi-node, Kubernetes.

Every format starts from a :class:`Launch` (engine, model, flags, environment, image,
nodes) or a :class:`~servewise.recipes.model.Recipe`, and returns a :class:`Rendered`:
the command as an argv list (the first node's, or the leader's), the same as shell text
for every node, and one :class:`Command` per node or step. Formats:

``vllm``     ``vllm serve MODEL FLAGS``; on several nodes vLLM's own multi-node flags
             (``--nnodes/--node-rank/--master-addr``, ``--headless`` on the others), or
             Ray with ``multinode="ray"`` (``ray start`` on each node, then one
             ``vllm serve … --distributed-executor-backend ray``)
``sglang``   ``python -m sglang.launch_server --model-path MODEL FLAGS``; on several
             nodes ``--nnodes/--node-rank/--dist-init-addr`` on each
``docker``   ``docker run --gpus all --ipc=host -p PORT:PORT -v … IMAGE …`` for either
             engine (one per node, with ``--network host``, on several nodes)
``k8s``      a LeaderWorkerSet manifest (YAML text in ``shell``, the object in ``manifest``)
"""

from __future__ import annotations

import dataclasses
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from servewise.errors import UsageError
from servewise.knowledge.flags import EngineSettings, flag_for, to_argv
from servewise.recipes import argv as argv_tools
from servewise.recipes.model import MULTINODE_MODES, Pool, Recipe

FORMATS = ("vllm", "docker", "sglang", "k8s")
"""The formats :func:`render` writes."""

DEFAULT_PORT = {"vllm": 8000, "sglang": 30000}
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

    ``$VARIABLE`` words (``$HEAD_IP``) are left for the shell to expand; everything else is
    quoted. ``shlex.split`` of the result (without the ``NAME=value`` prefix) gives ``argv``.
    """
    lines: list[list[str]] = [[f"{name}={_quote(value)}" for name, value in (env or {}).items()]]
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
        lines[-1].append(_quote(raw))
    return " \\\n  ".join(" ".join(line) for line in lines if line)


_VARIABLE = re.compile(r"^\$[A-Za-z_][A-Za-z0-9_]*(?::\d+)?$")
_EXPANDABLE = re.compile(
    r"^[A-Za-z0-9_./:@%+,=-]*\$[A-Za-z_][A-Za-z0-9_]*[A-Za-z0-9_./:@%+,=-]*$")


def _quote(word: str) -> str:
    """Shell quoting that leaves one ``$NAME`` in a word (``$HOME/x``, ``--a=$IP:1``) to the
    shell to expand."""
    if _VARIABLE.match(word):
        return word
    if _EXPANDABLE.match(word):
        return f'"{word}"'
    return shlex.quote(word)


def _port(launch: Launch, port: int | None) -> tuple[list[str], int]:
    flags = list(launch.argv)
    given = argv_tools.last_value(flags, launch.flag("port"))
    if port is not None:
        flags = argv_tools.with_flag(flags, launch.flag("port"), str(port))
        return flags, port
    if given is not None and given.isdigit():
        return flags, int(given)
    return flags, DEFAULT_PORT[launch.engine]


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


def _node_flags(launch: Launch, rank: int, multinode: str, head: str) -> list[str]:
    if launch.nodes == 1:
        return []
    return node_flags(launch, rank, launch.nodes, multinode, head)


def with_node_flags(flags: Sequence[str], node: Sequence[str]) -> list[str]:
    """``flags`` with a node's own flags set (replacing a value the flags already have)."""
    out = list(flags)
    for name, value, _ in argv_tools.flags(node):
        out = argv_tools.with_flag(out, name, value)
    return out


def at_head(words: Sequence[str], head: str) -> list[str]:
    """``words`` with the first node's address (``$HEAD_IP`` in recipes) set to ``head``."""
    return [word.replace(HEAD, head) if HEAD in word else word for word in words]


def render(
    what: Recipe | Launch | Sequence[str], format: str = "vllm", *,
    port: int | None = None, host: str | None = None, image: str | None = None,
    model_dir: str | None = None,
    hf_cache: str = HF_CACHE, multinode: str | None = None, head: str = HEAD,
    name: str | None = None, namespace: str | None = None,
) -> Rendered:
    """The launch of ``what`` in ``format`` (``vllm``, ``docker``, ``sglang`` or ``k8s``).

    ``what`` is a recipe, a :class:`Launch` (:meth:`Launch.from_settings` makes one from
    :class:`~servewise.knowledge.flags.EngineSettings`), or a server argv
    (``["vllm", "serve", MODEL, …]`` or ``["python3", "-m", "sglang.launch_server", …]``).

    ``port`` and ``host`` set ``--port``/``--host``; ``image`` replaces the recipe's image;
    ``model_dir`` is a local folder of weights (docker mounts it read-only at ``/model``);
    ``multinode`` is ``mp`` (vLLM's own flags), ``ray``, or ``dp`` (data-parallel ranks per
    node; default: the recipe's own, else ``mp``); ``head`` is how the other nodes reach the
    first one. A prefill/decode recipe renders each pool on its nodes and the router.
    """
    if isinstance(what, Recipe):
        launch = Launch.from_recipe(what)
    elif isinstance(what, Launch):
        launch = what
    else:
        launch = launch_from_argv(what, image=image)
    multinode = _mode(launch, multinode)
    if format not in FORMATS:
        raise UsageError(f"unknown format {format!r}", expected=" | ".join(FORMATS),
                         hint="choose one of " + ", ".join(FORMATS))

    if format in ("vllm", "sglang") and format != launch.engine:
        raise UsageError(
            f"a {launch.engine} launch cannot be rendered as {format}",
            hint=f"use --format {launch.engine}, docker or k8s", found=format)
    if image is not None:
        launch = dataclasses.replace(launch, image=image)
    if name is not None:
        launch = dataclasses.replace(launch, name=name)
    flags, the_port = _port(launch, port)
    if host is not None:
        flags = argv_tools.with_flag(flags, launch.flag("host"), host)
    if launch.pools:
        from servewise.recipes.pd import render_pd

        return render_pd(launch, format, image=launch.image, model_dir=model_dir,
                         hf_cache=hf_cache, head=head, namespace=namespace)
    if format == "k8s":
        from servewise.recipes.k8s import render_lws

        return render_lws(launch, flags, the_port, model_dir=model_dir, multinode=multinode,
                          namespace=namespace)
    if format == "docker":
        return _docker(launch, flags, the_port, model_dir, hf_cache, multinode, head)
    model = model_dir if model_dir is not None else launch.model
    commands = _bare(launch, model, flags, multinode, head)
    return Rendered(format=format, argv=commands[-1].argv if multinode == "ray" and
                    launch.engine == "vllm" and launch.nodes > 1 else commands[0].argv,
                    shell=_script(commands), commands=commands)


def _mode(launch: Launch, asked: str | None) -> str:
    """The multi-node mode: the one asked for, else the launch's own, else ``mp``."""
    own = launch.multinode or "mp"
    mode = asked or own
    if mode not in MULTINODE_MODES:
        raise UsageError(f"unknown multi-node mode {mode!r}", expected=" | ".join(MULTINODE_MODES),
                         hint="mp uses vLLM's --nnodes/--node-rank; ray starts a Ray cluster; "
                              "dp starts data-parallel ranks on each node")
    if launch.nodes > 1 and (own == "dp") != (mode == "dp"):
        raise UsageError(f"this launch joins its nodes by {own}, not {mode}",
                         hint=f"leave --multinode out (or give {own}): the recipe's flags are "
                              "written for it", found=mode)
    return mode


def launch_from_argv(argv: Sequence[str], *, image: str | None = None) -> Launch:
    """A :class:`Launch` from a server command line: ``vllm serve MODEL FLAGS`` or
    ``python3 -m sglang.launch_server --model-path MODEL FLAGS``."""
    words = list(argv)
    if words[:2] == ["vllm", "serve"] and len(words) > 2 and not words[2].startswith("-"):
        return Launch("vllm", words[2], tuple(words[3:]), image=image)
    if "sglang.launch_server" in words:
        flags = words[words.index("sglang.launch_server") + 1:]
        model = argv_tools.last_value(flags, "--model-path") or argv_tools.last_value(
            flags, "--model")
        if model is not None:
            flags = argv_tools.without(argv_tools.without(flags, "--model-path"), "--model")
            return Launch("sglang", model, tuple(flags), image=image)
    raise UsageError("not a server command line",
                     expected="vllm serve MODEL … or python3 -m sglang.launch_server "
                     "--model-path MODEL …", found=" ".join(words[:4]),
                     hint="pass a Launch (Launch.from_settings) or a recipe instead")


def _bare(
    launch: Launch, model: str, flags: list[str], multinode: str, head: str
) -> list[Command]:
    env = dict(launch.env)
    if launch.nodes == 1:
        return [Command("node 0", serve_argv(launch, model, flags), env)]
    if launch.engine == "vllm" and multinode == "ray":
        commands = [Command("head (node 0)", ["ray", "start", "--head", f"--port={RAY_PORT}"],
                            env)]
        commands += [Command(f"worker (node {rank})",
                             ["ray", "start", f"--address={head}:{RAY_PORT}", "--block"], env)
                     for rank in range(1, launch.nodes)]
        serve = serve_argv(launch, model, flags + _node_flags(launch, 0, multinode, head))
        commands.append(Command("head (node 0), once every node has joined", serve, env))
        return commands
    return [Command(f"node {rank}", serve_argv(launch, model, at_head(with_node_flags(
        flags, _node_flags(launch, rank, multinode, head)), head)), env)
        for rank in range(launch.nodes)]


def _docker(
    launch: Launch, flags: list[str], port: int, model_dir: str | None, hf_cache: str,
    multinode: str, head: str,
) -> Rendered:
    if launch.image is None:
        raise UsageError(
            "the recipe names no image",
            hint="give one with --image (a pinned tag or digest, e.g. lmsysorg/sglang:v0.5.16)")
    if launch.engine == "sglang" and argv_tools.last_value(flags, launch.flag("host")) is None:
        flags = [*flags, launch.flag("host"), "0.0.0.0"]
    volume = (f"{model_dir}:{CONTAINER_MODEL_DIR}:ro" if model_dir is not None
              else f"{hf_cache}:/root/.cache/huggingface")
    model = CONTAINER_MODEL_DIR if model_dir is not None else launch.model
    commands = []
    nodes = 1 if (launch.engine == "vllm" and multinode == "ray") else launch.nodes
    for rank in range(nodes):
        docker = ["docker", "run", "--gpus", "all", "--ipc=host"]
        if launch.engine == "sglang":
            docker += ["--shm-size", "32g"]
        docker += ["--network", "host"] if launch.nodes > 1 else ["-p", f"{port}:{port}"]
        docker += ["-v", volume]
        if model_dir is None:
            docker += ["-e", "HF_TOKEN"]
        for env_name, value in launch.env:
            docker += ["-e", f"{env_name}={value}"]
        docker.append(launch.image)
        node = at_head(with_node_flags(flags, _node_flags(launch, rank, multinode, head)), head)
        if launch.engine == "vllm":
            docker += [model, *node]
        else:
            docker += serve_argv(launch, model, node)
        commands.append(Command(f"node {rank}", docker))
    if launch.engine == "vllm" and multinode == "ray" and launch.nodes > 1:
        raise UsageError(
            "docker with Ray needs vLLM's run_cluster.sh on every node",
            hint="render --format docker with multinode mp (the default), or --format vllm "
                 "with --multinode ray inside containers you start yourself")
    return Rendered(format="docker", argv=commands[0].argv, shell=_script(commands),
                    commands=commands)


def _script(commands: list[Command]) -> str:
    if len(commands) == 1:
        return commands[0].shell + "\n"
    return "\n\n".join(f"# {command.role}\n{command.shell}" for command in commands) + "\n"
