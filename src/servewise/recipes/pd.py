"""Prefill/decode (disaggregated) recipes as commands: each pool on its nodes, and the router.

A prefill/decode recipe (vLLM's ``pd_cluster`` strategy) has two pools, each an engine of its
own with its flags and environment, on half a node each (``nodes: 0``, ``CUDA_VISIBLE_DEVICES``
splitting the node) or on whole nodes of their own, and a ``vllm-router`` in front of them.
The pools name their nodes ``$PREFILL_NODE_1`` … and ``$DECODE_NODE_1`` …, as the recipe
site does: set them (and ``$ROUTER_HOST``/``$ROUTER_PORT``) before running the commands.

Formats: ``vllm`` (one command per pool node, then the router), ``docker`` (the same inside
``docker run``), ``k8s`` (one LeaderWorkerSet per pool and a Deployment for the router, as a
``List``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import yaml

from servewise.errors import UsageError
from servewise.recipes.launches import Command, Launch, Rendered
from servewise.recipes.model import Pool


def pool_launch(launch: Launch, pool: Pool) -> Launch:
    """One pool as a launch of its own (half the node's GPUs when it shares the node)."""
    gpus = launch.gpus if pool.nodes >= 1 or launch.gpus is None else max(1, launch.gpus // 2)
    return dataclasses.replace(launch, argv=pool.argv, env=pool.env, nodes=max(1, pool.nodes),
                               gpus=gpus, name=f"{launch.name}-{pool.role}",
                               multinode=pool.multinode, pools=(), router=())


def head_of(pool: Pool) -> str:
    """How a pool's commands name its first node."""
    return f"${pool.role.upper()}_NODE_1"


def render_pd(launch: Launch, format: str, render: Callable[..., Rendered], *,
              image: str | None, model_dir: str | None, hf_cache: str, head: str,
              namespace: str | None) -> Rendered:
    """Every command (or manifest) of a prefill/decode launch; ``render`` renders one pool
    (:func:`servewise.recipes.renderers.render`, which calls this)."""
    del head  # each pool has its own first node
    if format == "sglang":
        raise UsageError("a vLLM prefill/decode recipe cannot be rendered as sglang",
                         hint="use --format vllm, docker or k8s")
    commands: list[Command] = []
    manifests: list[dict[str, Any]] = []
    for pool in launch.pools:
        part = pool_launch(launch, pool)
        if format == "k8s":
            part = _in_cluster(part, pool)
        rendered = render(part, format, image=image, model_dir=model_dir, hf_cache=hf_cache,
                          head=head_of(pool), namespace=namespace)
        where = "half of a node" if pool.nodes == 0 else f"{pool.nodes} node(s)"
        for command in rendered.commands:
            commands.append(Command(f"{pool.role} pool ({where}): {command.role}",
                                    command.argv, command.env))
        if rendered.manifest is not None:
            manifests.append(rendered.manifest)
    router = list(launch.router)
    commands.append(Command("router", router))
    if format == "k8s":
        manifests.append(_router_deployment(launch, router, namespace))
        listing = {"apiVersion": "v1", "kind": "List", "items": manifests}
        text = "---\n".join(yaml.safe_dump(item, sort_keys=False, width=100)
                            for item in manifests)
        return Rendered(format="k8s", argv=commands[0].argv, shell=text, commands=commands,
                        manifest=listing)
    shell = "\n\n".join(f"# {command.role}\n{command.shell}" for command in commands) + "\n"
    return Rendered(format=format, argv=commands[0].argv, shell=shell, commands=commands)


def lws_node(launch: Launch, role: str, node: int) -> str:
    """The DNS name of a pool's node in Kubernetes: LeaderWorkerSet names the leader pod
    ``NAME-0`` and the workers ``NAME-0-INDEX`` behind a headless service ``NAME``."""
    name = f"{launch.name}-{role}"
    return f"{name}-0.{name}" if node == 1 else f"{name}-0-{node - 1}.{name}"


def _in_cluster(part: Launch, pool: Pool) -> Launch:
    """A pool's launch inside its LeaderWorkerSet: its first node is the group's leader, and
    environment values naming variables use Kubernetes' ``$(NAME)`` form."""
    first = pool.role.upper() + "_NODE_1"
    env = [(first, "$(LWS_LEADER_ADDRESS)")]
    for name, value in part.env:
        env.append((name, f"$({value[1:]})" if value.startswith("$") and value[1:].isidentifier()
                    else value))
    return dataclasses.replace(part, env=tuple(env))


def _router_deployment(launch: Launch, router: list[str],
                       namespace: str | None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": f"{launch.name}-router"}
    if namespace is not None:
        metadata["namespace"] = namespace
    script = " ".join(word if not word.startswith("$") else f'"{word}"' for word in router)
    return {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": metadata,
        "spec": {"replicas": 1,
                 "selector": {"matchLabels": {"app.kubernetes.io/name": metadata["name"]}},
                 "template": {
                     "metadata": {"labels": {"app.kubernetes.io/name": metadata["name"]}},
                     "spec": {"containers": [{
                         "name": "router", "image": launch.image or "vllm/vllm-openai:latest",
                         "command": ["/bin/sh", "-c",
                                     "pip install vllm-router && exec " + script],
                         "env": _router_env(launch, router)}]}}}}


def _router_env(launch: Launch, router: list[str]) -> list[dict[str, str]]:
    """The router's variables: each pool node it lists, by its Kubernetes name."""
    env = []
    for word in router:
        if "_NODE_" in word and word.startswith("http://$"):
            variable = word.removeprefix("http://$").split(":", 1)[0]
            role, _, number = variable.partition("_NODE_")
            env.append({"name": variable,
                        "value": lws_node(launch, role.lower(), int(number))})
    return [*env, {"name": "ROUTER_HOST", "value": "0.0.0.0"},
            {"name": "ROUTER_PORT", "value": "8000"}]


__all__ = ["pool_launch", "render_pd"]
