"""What a Kubernetes deployment of a model needs beside its LeaderWorkerSet.

:func:`serving_manifest` takes a rendered ``k8s`` launch (one LeaderWorkerSet, or the list a
prefill/decode recipe renders) and gives back a ``v1`` ``List`` with:

* a **model cache** on every pod, mounted at the Hugging Face cache of the official images
  (``/root/.cache/huggingface``: vLLM's and SGLang's images run as root): a
  PersistentVolumeClaim created with the manifest and sized for the checkpoint (the
  default), an existing claim, or a hostPath on the node (:class:`ModelCache`), so a
  restarted pod does not download the weights again;
* a **Service** in front of the server (the LeaderWorkerSet's leader pods, or the router of a
  prefill/decode launch) on the engine's port; LeaderWorkerSet's own headless Service
  (named after it) only gives pods DNS names, so this one is called ``NAME-api``;
* a **startup probe** on the leader sized to the model's load time
  (:func:`startup_seconds`), so the kubelet neither kills a pod that is still downloading
  and loading its weights nor waits forever for one that hangs.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import yaml

from servewise.errors import UsageError
from servewise.recipes.launches import Rendered

HF_CACHE_IN_IMAGE = "/root/.cache/huggingface"
"""Where the official images keep the Hugging Face cache (they run as root, no HF_HOME)."""

STARTUP_FIXED_S = 600
"""Seconds of start-up besides the weights: the engine's processes, ``torch.compile``, CUDA
graph capture, the KV cache profile (generous: a probe that is too short kills the pod)."""

DOWNLOAD_BYTES_PER_S = 100 * 10**6
"""The first start downloads the checkpoint into an empty cache; 100 MB/s is a conservative
rate for the Hub (a faster link only makes the probe's budget larger than needed)."""

LOAD_BYTES_PER_S = 0.4 * 2**30
"""Each GPU reads its share of the weights from the cache at this rate: the slowest rate in
the start-up logs the planner is checked against (google/gemma-3-27b-it on one H100: "Model
loading took 51.45 GiB and 122.713348 seconds", 0.42 GiB/s, llm-d-incubation/llm-d-planner
accuracy/results/v0.19.0/logs/google-gemma-3-27b-it--h100-80gb--tp1pp1dp1--8192.log; the
others load at 0.56 to 5.15 GiB/s)."""

PROBE_PERIOD_S = 10
CACHE_HEADROOM = 1.1
"""A created claim holds the checkpoint plus 10 % (the cache's own files, a revision)."""


@dataclass(frozen=True)
class ModelCache:
    """Where the pods keep the Hugging Face cache.

    ``kind`` is ``pvc`` (a claim: created with the manifest when ``create``), or
    ``hostPath`` (``path`` on each node)."""

    kind: str = "pvc"
    name: str | None = None
    """The claim's name (default ``NAME-hf-cache``)."""
    path: str | None = None
    create: bool = True

    @classmethod
    def parse(cls, text: str | None) -> ModelCache:
        """``pvc`` (default: a claim created and sized here), ``pvc:NAME`` (an existing
        claim) or ``hostpath:/PATH`` (a folder on each node)."""
        if text is None or text.strip().lower() == "pvc":
            return cls()
        kind, _, value = text.partition(":")
        if kind.lower() == "pvc" and value:
            return cls(kind="pvc", name=value, create=False)
        if kind.lower() == "hostpath" and value.startswith("/"):
            return cls(kind="hostPath", path=value, create=False)
        raise UsageError(f"model cache {text!r}",
                         expected="pvc, pvc:CLAIM or hostpath:/PATH", found=text,
                         hint="pvc creates a claim sized for the checkpoint; pvc:CLAIM uses "
                         "yours; hostpath:/data/hf-cache uses a folder on each node")


def startup_seconds(checkpoint_bytes: int, gpu_weight_bytes: int) -> int:
    """The longest a healthy first start takes: the fixed part, the download of the whole
    checkpoint into an empty cache, and each GPU's read of its share."""
    return math.ceil(STARTUP_FIXED_S + checkpoint_bytes / DOWNLOAD_BYTES_PER_S
                     + gpu_weight_bytes / LOAD_BYTES_PER_S)


def claim_size(checkpoint_bytes: int) -> str:
    """A claim size for the checkpoint, in whole GiB (``Gi``)."""
    return f"{max(1, math.ceil(checkpoint_bytes * CACHE_HEADROOM / 2**30))}Gi"


def serving_manifest(
    rendered: Rendered, *, name: str, port: int, checkpoint_bytes: int,
    gpu_weight_bytes: int, cache: ModelCache | None = None, multinode: bool = False,
    namespace: str | None = None,
) -> Rendered:
    """``rendered`` (``k8s``) with a model cache on every pod, a startup probe on each
    leader sized by :func:`startup_seconds`, a Service on ``port`` and, for a created
    claim, the claim: a ``v1`` ``List`` in ``manifest`` and every object in ``shell``."""
    if rendered.manifest is None:
        raise UsageError("only a k8s manifest gets a cache, a probe and a Service")
    cache = cache or ModelCache()
    claim = cache.name or f"{name}-hf-cache"
    source = rendered.manifest
    items = list(source["items"]) if source.get("kind") == "List" else [source]
    budget = startup_seconds(checkpoint_bytes, gpu_weight_bytes)
    out: list[dict[str, Any]] = []
    if cache.kind == "pvc" and cache.create:
        out.append(_claim(claim, checkpoint_bytes, multinode or len(items) > 1, namespace))
    router = None
    for item in items:
        if item.get("kind") == "LeaderWorkerSet":
            item = _with_cache_and_probe(item, cache, claim, budget)
        elif item.get("kind") == "Deployment":
            router = item
        out.append(item)
    out.append(_service(name, port, router, namespace))
    listing = {"apiVersion": "v1", "kind": "List", "items": out}
    text = "---\n".join(yaml.safe_dump(item, sort_keys=False, width=100) for item in out)
    return dataclasses.replace(rendered, shell=text, manifest=listing)


def _claim(name: str, checkpoint_bytes: int, shared: bool,
           namespace: str | None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    # pods on several nodes mount one claim: ReadWriteMany (a storage class that offers it)
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": metadata,
            "spec": {"accessModes": ["ReadWriteMany" if shared else "ReadWriteOnce"],
                     "resources": {"requests": {"storage": claim_size(checkpoint_bytes)}}}}


def _with_cache_and_probe(lws: dict[str, Any], cache: ModelCache, claim: str,
                          budget: int) -> dict[str, Any]:
    lws = copy.deepcopy(lws)
    group = lws["spec"]["leaderWorkerTemplate"]
    volume: dict[str, Any] = {"name": "hf-cache"}
    if cache.kind == "hostPath":
        volume["hostPath"] = {"path": cache.path, "type": "DirectoryOrCreate"}
    else:
        volume["persistentVolumeClaim"] = {"claimName": claim}
    for key in ("leaderTemplate", "workerTemplate"):
        template = group.get(key)
        if template is None:
            continue
        spec = template["spec"]
        spec["volumes"] = [*spec.get("volumes", []), copy.deepcopy(volume)]
        for container in spec["containers"]:
            container["volumeMounts"] = [*container.get("volumeMounts", []),
                                         {"name": "hf-cache", "mountPath": HF_CACHE_IN_IMAGE}]
            probe = container.get("readinessProbe")
            if key == "leaderTemplate" and probe is not None:
                container["startupProbe"] = {
                    "httpGet": dict(probe["httpGet"]), "periodSeconds": PROBE_PERIOD_S,
                    "failureThreshold": math.ceil(budget / PROBE_PERIOD_S)}
    return lws


def _service(name: str, port: int, router: dict[str, Any] | None,
             namespace: str | None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": f"{name}-api"}
    if namespace is not None:
        metadata["namespace"] = namespace
    if router is not None:
        selector = dict(router["spec"]["selector"]["matchLabels"])
        target: int = 8000  # the router's ROUTER_PORT
    else:
        selector = {"app.kubernetes.io/name": name, "role": "leader"}
        target = port
    return {"apiVersion": "v1", "kind": "Service", "metadata": metadata,
            "spec": {"selector": selector,
                     "ports": [{"name": "http", "port": target, "targetPort": target}]}}


__all__ = ["DOWNLOAD_BYTES_PER_S", "HF_CACHE_IN_IMAGE", "LOAD_BYTES_PER_S", "STARTUP_FIXED_S",
           "ModelCache", "claim_size", "serving_manifest", "startup_seconds"]
