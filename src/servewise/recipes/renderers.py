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
from collections.abc import Mapping, Sequence

from servewise.errors import UsageError
from servewise.formats.redact import is_secret_name
from servewise.knowledge import argv as argv_tools
from servewise.knowledge.engines import engine_args, engine_of, serving_engines
from servewise.recipes.k8s import render_lws
from servewise.recipes.launches import (
    CONTAINER_MODEL_DIR,
    DEFAULT_PORT,
    HEAD,
    HF_CACHE,
    RAY_PORT,
    SGLANG_DIST_PORT,
    Command,
    Launch,
    Rendered,
    at_head,
    node_flags,
    serve_argv,
    shell_text,
    with_node_flags,
)
from servewise.recipes.model import MULTINODE_MODES, Recipe
from servewise.recipes.pd import render_pd

FORMATS = ("vllm", "docker", "sglang", "k8s")
"""The formats :func:`render` writes."""

def _port(launch: Launch, port: int | None) -> tuple[list[str], int]:
    flags = list(launch.argv)
    given = argv_tools.last_value(flags, launch.flag("port"))
    if port is not None:
        flags = argv_tools.with_flag(flags, launch.flag("port"), str(port))
        return flags, port
    if given is not None and given.isdigit():
        return flags, int(given)
    return flags, DEFAULT_PORT[launch.engine]


def _node_flags(launch: Launch, rank: int, multinode: str, head: str) -> list[str]:
    if launch.nodes == 1:
        return []
    return node_flags(launch, rank, launch.nodes, multinode, head)


def render(
    what: Recipe | Launch | Sequence[str], format: str = "vllm", *,
    port: int | None = None, host: str | None = None, image: str | None = None,
    model_dir: str | None = None,
    hf_cache: str = HF_CACHE, multinode: str | None = None, head: str = HEAD,
    name: str | None = None, namespace: str | None = None, container: str | None = None,
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
    ``container`` names the docker container (``--rm --name``, so it can be stopped by name).
    Environment values whose name says they are secret (``HF_TOKEN``, ``*_API_KEY``) are
    passed by name (``-e HF_TOKEN``): docker takes them from the caller's environment, and the
    value is never written into the command.
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

    if format in serving_engines() and format != launch.engine:
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
        return render_pd(launch, format, render, image=launch.image, model_dir=model_dir,
                         hf_cache=hf_cache, head=head, namespace=namespace)
    if format == "k8s":
        return render_lws(launch, flags, the_port, model_dir=model_dir, multinode=multinode,
                          namespace=namespace)
    if format == "docker":
        return _docker(launch, flags, the_port, model_dir, hf_cache, multinode, head,
                       container)
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


def launch_from_argv(argv: Sequence[str], *, image: str | None = None,
                     env: Mapping[str, str] | None = None) -> Launch:
    """A :class:`Launch` from a server command line: ``vllm serve MODEL FLAGS``,
    ``python3 -m vllm.entrypoints.openai.api_server --model MODEL FLAGS`` or
    ``python3 -m sglang.launch_server --model-path MODEL FLAGS`` (the entry points of
    ``engines.toml``)."""
    words = list(argv)
    engine = engine_of(words)
    if engine is not None:
        flags = engine_args(words, engine)
        if flags and not flags[0].startswith("-"):
            return Launch(engine, flags[0], tuple(flags[1:]), image=image,
                          env=tuple((env or {}).items()))
        model = argv_tools.last_value(flags, "--model-path") or argv_tools.last_value(
            flags, "--model")
        if model is not None:
            flags = argv_tools.without(argv_tools.without(flags, "--model-path"), "--model")
            return Launch(engine, model, tuple(flags), image=image,
                          env=tuple((env or {}).items()))
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


def _env_words(env: Sequence[tuple[str, str]], given: set[str]) -> list[str]:
    words: list[str] = []
    for env_name, value in env:
        if env_name in given:
            continue
        given.add(env_name)
        words += ["-e", env_name if is_secret_name(env_name) else f"{env_name}={value}"]
    return words


def _docker(
    launch: Launch, flags: list[str], port: int, model_dir: str | None, hf_cache: str,
    multinode: str, head: str, container: str | None = None,
) -> Rendered:
    if launch.image is None:
        raise UsageError(
            "the recipe names no image",
            hint="give one with --image (a pinned tag or digest, e.g. lmsysorg/sglang:v0.5.16)")
    if launch.engine == "sglang" and argv_tools.last_value(flags, launch.flag("host")) is None:
        flags = [*flags, launch.flag("host"), "0.0.0.0"]
    volumes = [f"{model_dir}:{CONTAINER_MODEL_DIR}:ro" if model_dir is not None
               else f"{hf_cache}:/root/.cache/huggingface"]
    if model_dir is None and launch.model.startswith("/"):
        volumes.append(f"{launch.model}:{launch.model}:ro")  # a local folder, at its own path
    model = CONTAINER_MODEL_DIR if model_dir is not None else launch.model
    commands = []
    nodes = 1 if (launch.engine == "vllm" and multinode == "ray") else launch.nodes
    for rank in range(nodes):
        docker = ["docker", "run"]
        if container is not None:
            docker += ["--rm", "--name", container if nodes == 1 else f"{container}-{rank}"]
        docker += ["--gpus", "all", "--ipc=host"]
        if launch.engine == "sglang":
            docker += ["--shm-size", "32g"]
        docker += ["--network", "host"] if launch.nodes > 1 else ["-p", f"{port}:{port}"]
        for volume in volumes:
            docker += ["-v", volume]
        given: set[str] = set()
        if model_dir is None:
            docker += ["-e", "HF_TOKEN"]
            given.add("HF_TOKEN")
        docker += _env_words(launch.env, given)
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


__all__ = [  # the shared pieces live in launches.py; they are named here too, as before
    "CONTAINER_MODEL_DIR", "DEFAULT_PORT", "FORMATS", "HEAD", "HF_CACHE", "RAY_PORT",
    "SGLANG_DIST_PORT", "Command", "Launch", "Rendered", "at_head", "launch_from_argv",
    "node_flags", "render", "serve_argv", "shell_text", "with_node_flags",
]
