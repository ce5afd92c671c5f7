"""A Kubernetes LeaderWorkerSet manifest for a launch (one pod per node).

LeaderWorkerSet (kubernetes-sigs/lws, ``leaderworkerset.x-k8s.io/v1``) starts groups of
``size`` pods: a leader (worker index 0) and ``size - 1`` workers, and gives every pod
``LWS_LEADER_ADDRESS``, ``LWS_GROUP_SIZE`` and ``LWS_WORKER_INDEX``. The commands use them:

* vLLM (``mp``): every pod runs ``vllm serve … --nnodes $LWS_GROUP_SIZE --node-rank
  $LWS_WORKER_INDEX --master-addr $LWS_LEADER_ADDRESS``, workers with ``--headless``;
* vLLM (``ray``): the leader runs ``ray start --head`` then ``vllm serve …
  --distributed-executor-backend ray``, the workers ``ray start --address … --block``;
* SGLang: every pod runs ``launch_server … --nnodes $LWS_GROUP_SIZE --node-rank
  $LWS_WORKER_INDEX --dist-init-addr $LWS_LEADER_ADDRESS:20000``.

Each pod asks for the recipe's GPUs per node, mounts a memory-backed ``/dev/shm`` and
the weights (a hostPath when ``model_dir`` is given), and the leader is ready when the
server's ``/health`` answers.
"""

from __future__ import annotations

import shlex
from typing import Any

import yaml

from servewise.errors import UsageError
from servewise.recipes.launches import (
    CONTAINER_MODEL_DIR,
    RAY_PORT,
    Command,
    Launch,
    Rendered,
    at_head,
    node_flags,
    serve_argv,
    shell_quote,
    with_node_flags,
)

API_VERSION = "leaderworkerset.x-k8s.io/v1"
LEADER = "$(LWS_LEADER_ADDRESS)"


def _pod_script(launch: Launch, model: str, flags: list[str], leader: bool,
                multinode: str) -> str:
    served = shlex.join(serve_argv(launch, model, flags))
    if launch.nodes == 1:
        return "exec " + served
    if launch.engine == "vllm" and multinode == "ray":
        if leader:
            ray = shlex.join(node_flags(launch, 0, launch.nodes, multinode, ""))
            return f"ray start --head --port={RAY_PORT} && exec {served} {ray}"
        return f"exec ray start --address=\"$LWS_LEADER_ADDRESS:{RAY_PORT}\" --block"
    rank: int | str = 0 if leader else "$LWS_WORKER_INDEX"
    joined = node_flags(launch, rank, "$LWS_GROUP_SIZE", multinode, "$LWS_LEADER_ADDRESS")
    words = serve_argv(launch, model, at_head(with_node_flags(flags, joined),
                                              "$LWS_LEADER_ADDRESS"))
    return "exec " + " ".join(_sh(word) for word in words)


def _sh(word: str) -> str:
    """A word for ``sh -c``: the renderers' one quoting (:func:`shell_quote`), which leaves
    ``$LWS_LEADER_ADDRESS`` and ``$((LWS_WORKER_INDEX * 2))`` to the shell and quotes the
    rest, ``$(command)`` included. A bare ``$NAME`` is double-quoted here too, as the
    manifests have always written it."""
    quoted = shell_quote(word)
    return f'"{word}"' if quoted == word and word.startswith("$") else quoted


def _container(launch: Launch, script: str, port: int, leader: bool,
               model_dir: str | None) -> dict[str, Any]:
    assert launch.image is not None
    container: dict[str, Any] = {
        "name": launch.engine,
        "image": launch.image,
        "command": ["/bin/sh", "-c", script],
        "env": [{"name": name, "value": value} for name, value in launch.env],
        "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}],
    }
    if model_dir is not None:
        container["volumeMounts"].append({"name": "model", "mountPath": CONTAINER_MODEL_DIR,
                                          "readOnly": True})
    else:
        container["env"].append({"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {
            "name": "hf-token", "key": "token", "optional": True}}})
    if not container["env"]:
        del container["env"]
    if launch.gpus:
        container["resources"] = {"limits": {"nvidia.com/gpu": str(launch.gpus)}}
    if leader:
        container["ports"] = [{"containerPort": port, "name": "http"}]
        container["readinessProbe"] = {"httpGet": {"path": "/health", "port": port},
                                       "periodSeconds": 10, "failureThreshold": 3}
    return container


def _pod_template(launch: Launch, script: str, port: int, leader: bool,
                  model_dir: str | None) -> dict[str, Any]:
    volumes: list[dict[str, Any]] = [{"name": "dshm", "emptyDir": {"medium": "Memory"}}]
    if model_dir is not None:
        volumes.append({"name": "model", "hostPath": {"path": model_dir,
                                                      "type": "Directory"}})
    return {
        "metadata": {"labels": {"app.kubernetes.io/name": launch.name,
                                "role": "leader" if leader else "worker"}},
        "spec": {"containers": [_container(launch, script, port, leader, model_dir)],
                 "volumes": volumes},
    }


def render_lws(
    launch: Launch, flags: list[str], port: int, *, model_dir: str | None = None,
    multinode: str = "mp", namespace: str | None = None,
) -> Rendered:
    """The LeaderWorkerSet manifest of ``launch``: YAML text in ``shell``, the object too."""
    if launch.image is None:
        raise UsageError("the recipe names no image; a Kubernetes pod needs one",
                         hint="give one with --image (a pinned tag or digest)")
    if launch.engine == "sglang" and launch.flag("host") not in flags:
        flags = [*flags, launch.flag("host"), "0.0.0.0"]
    model = CONTAINER_MODEL_DIR if model_dir is not None else launch.model
    leader_script = _pod_script(launch, model, flags, True, multinode)
    worker_script = _pod_script(launch, model, flags, False, multinode)
    metadata: dict[str, Any] = {"name": launch.name}
    if namespace is not None:
        metadata["namespace"] = namespace
    template: dict[str, Any] = {
        "size": launch.nodes,
        "restartPolicy": "RecreateGroupOnPodRestart",
        "leaderTemplate": _pod_template(launch, leader_script, port, True, model_dir),
    }
    template["workerTemplate"] = _pod_template(launch, worker_script, port, False, model_dir)
    manifest = {
        "apiVersion": API_VERSION,
        "kind": "LeaderWorkerSet",
        "metadata": metadata,
        "spec": {"replicas": 1, "startupPolicy": "LeaderCreated",
                 "leaderWorkerTemplate": template},
    }
    text = yaml.safe_dump(manifest, sort_keys=False, width=100)
    commands = [Command("leader", ["/bin/sh", "-c", leader_script])]
    if launch.nodes > 1:
        commands.append(Command("workers", ["/bin/sh", "-c", worker_script]))
    return Rendered(format="k8s", argv=commands[0].argv, shell=text, commands=commands,
                    manifest=manifest)
