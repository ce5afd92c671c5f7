"""A sweep plan as Kubernetes Jobs, rendered from the recipes' LeaderWorkerSet pieces (not run).

For each single-node configuration, the launch is rendered as the recipes render it for
Kubernetes (:func:`servewise.recipes.render` with ``format="k8s"``: the LeaderWorkerSet's
leader pod -- the engine container with its GPUs, ``/dev/shm``, the model's token, the port
and the ``/health`` probe). The Job runs that pod with the engine as a native sidecar (an init
container with ``restartPolicy: Always``, Kubernetes 1.29+; a ``startupProbe`` gives it the
plan's start-up timeout) and one main container that runs ``servewise bench`` for each
workload against ``127.0.0.1`` in the same pod; when the benchmarks end, the Job ends and the
sidecar is stopped. Each run prints its JSON to the log (``kubectl logs job/NAME``) and writes
it under ``/results``.

A configuration on several nodes needs the LeaderWorkerSet itself (``servewise recipe render
ID --format k8s``) and is listed as skipped, as is one whose command is neither vLLM's nor
SGLang's (there is no recipe piece to render it from).
"""

from __future__ import annotations

import copy
import re
import shlex
from typing import Any

from servewise.errors import ServewiseError, UsageError
from servewise.launch.command import engine_of, fill
from servewise.sweep.plan import Configuration, SweepPlan, Workload, gpus_of

__all__ = ["bench_script", "render_jobs"]

PORT = 8000
RESULTS = "/results"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")[:40] or "config"


def bench_script(workloads: list[Workload], model: str, gpus: int, port: int = PORT) -> str:
    """The main container's script: one ``servewise bench`` per workload, each run's JSON kept."""
    lines = ["set -e", f"mkdir -p {RESULTS}"]
    for workload in workloads:
        levels = ",".join(f"{v:g}" for v in workload.levels)
        words = ["servewise", "bench", f"http://127.0.0.1:{port}", "--model", model, "--isl",
                 str(workload.isl), "--osl", str(workload.osl), f"--{workload.kind}", levels,
                 "--gpus", str(gpus), "--json", "--output", f"{RESULTS}/{workload.key}.json"]
        if workload.num_prompts is not None:
            words += ["--num-prompts", str(workload.num_prompts)]
        if workload.warmup is not None:
            words += ["--warmup", str(workload.warmup)]
        if workload.sla is not None:
            words += ["--sla", workload.sla, "--sla-runs", str(workload.sla_runs)]
            if workload.sla_max is not None:
                words += ["--sla-max", f"{workload.sla_max:g}"]
        lines.append(shlex.join(words))
    return "\n".join(lines)


def _launch(config: Configuration, image: str | None, name: str,
            namespace: str | None) -> tuple[Any, int]:
    """The rendered LeaderWorkerSet of a configuration, and its GPUs."""
    from servewise.recipes import load_recipes, render

    if config.recipe is not None:
        recipe = load_recipes().get(config.recipe)
        if recipe is None:
            raise UsageError(f"no recipe {config.recipe!r}", found=config.recipe,
                             hint="`servewise recipe list` lists the ids")
        rendered = render(recipe, "k8s", image=image, port=PORT, name=name,
                          namespace=namespace)
        return rendered, config.gpus or recipe.match.gpus or 1
    argv = fill(config.argv, port=PORT)
    if engine_of(argv) is None:
        raise UsageError(f"{config.name}: only vLLM and SGLang commands render for "
                         "Kubernetes", hint="give the configuration as `vllm serve ...`, "
                         "`python -m sglang.launch_server ...` or a recipe id")
    gpus = config.gpus or gpus_of(argv)
    rendered = render(argv, "k8s", image=image, port=PORT, name=name, namespace=namespace)
    return rendered, gpus


def _job(plan: SweepPlan, config: Configuration, image: str | None, bench_image: str,
         namespace: str | None) -> dict[str, Any]:
    name = _slug(f"sweep-{plan.name}-{config.name}")
    rendered, gpus = _launch(config, image, name, namespace)
    manifest = rendered.manifest
    assert manifest is not None
    group = manifest["spec"]["leaderWorkerTemplate"]
    if group["size"] > 1:
        raise UsageError(f"{config.name} runs on {group['size']} nodes: a Job is one pod",
                         hint="deploy its LeaderWorkerSet (`servewise recipe render ID "
                         "--format k8s`) and run `servewise bench` against its service")
    pod = copy.deepcopy(group["leaderTemplate"])
    engine = pod["spec"]["containers"][0]
    engine["restartPolicy"] = "Always"  # a native sidecar: stopped when the benchmarks end
    engine.setdefault("resources", {}).setdefault("limits", {})["nvidia.com/gpu"] = str(gpus)
    engine["startupProbe"] = {"httpGet": {"path": "/health", "port": PORT},
                              "periodSeconds": 10,
                              "failureThreshold": max(1, int(plan.timeout_s // 10))}
    for key, value in config.env.items():
        engine.setdefault("env", []).append({"name": key, "value": value})
    model = config.model or _served_model(rendered.argv)
    bench = {"name": "bench", "image": bench_image,
             "command": ["/bin/sh", "-c", bench_script(list(plan.workloads), model, gpus)],
             "volumeMounts": [{"name": "results", "mountPath": RESULTS}]}
    pod["spec"]["volumes"].append({"name": "results", "emptyDir": {}})
    labels = {"app.kubernetes.io/part-of": "servewise-sweep",
              "servewise/sweep": _slug(plan.name), "servewise/configuration": _slug(config.name)}
    metadata: dict[str, Any] = {"name": name, "labels": labels}
    if namespace is not None:
        metadata["namespace"] = namespace
    pod["metadata"]["labels"].update(labels)
    pod["spec"].update({"restartPolicy": "Never", "initContainers": [engine],
                        "containers": [bench]})
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": metadata,
            "spec": {"backoffLimit": 0, "ttlSecondsAfterFinished": 7 * 86400,
                     "template": pod}}


def _served_model(argv: list[str]) -> str:
    """The model the rendered command serves (``--served-model-name`` wins)."""
    joined = " ".join(argv)
    for flag in ("--served-model-name", "--model-path", "--model"):
        found = re.search(rf"{flag}[= ]+(\S+)", joined)
        if found:
            return found.group(1).strip("'\"")
    serve = re.search(r"\bserve\s+(\S+)", joined)
    return serve.group(1).strip("'\"") if serve else "model"


def render_jobs(plan: SweepPlan, *, image: str | None = None,
                bench_image: str = "servewise:latest", namespace: str | None = None
                ) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """One Job per configuration, and the configurations skipped with why."""
    jobs, skipped = [], []
    for config in plan.configurations:
        try:
            jobs.append(_job(plan, config, image, bench_image, namespace))
        except ServewiseError as error:
            skipped.append({"configuration": config.name, "why": error.message,
                            "hint": error.hint or ""})
    return jobs, skipped
