"""``sweep --k8s``: the plan as Kubernetes Jobs, rendered from the LeaderWorkerSet pieces.

Every Job must load into the official Kubernetes client as a ``V1Job`` with nothing lost (a
field the API does not have would be dropped by the round trip), run the recipe's engine as
a native sidecar with its GPUs and ``/health`` probes, and one ``servewise bench`` per
workload whose command line the bench command itself accepts.
"""

from __future__ import annotations

import inspect
import json
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

from servewise.cli import run
from servewise.sweep.k8s import render_jobs
from servewise.sweep.plan import parse_plan

PLAN: dict[str, Any] = {
    "name": "k8s", "timeout": 1200,
    "configurations": [
        {"name": "vllm-tp2", "command": "vllm serve Qwen/Qwen3-8B --tensor-parallel-size 2 "
                                        "--port {port}", "env": {"VLLM_USE_V1": "1"}},
        {"name": "sglang-recipe", "recipe": "sglang/deepseek-v4-flash-0731/h200/fp4/"
                                            "balanced/single"},
        {"name": "two-nodes", "recipe": "sglang/deepseek-v4-pro/gb200/fp4/low-latency/"
                                        "multi-2"},
        {"name": "not-an-engine", "command": "python serve.py --port {port}"},
    ],
    "workloads": [{"isl": 1024, "osl": 128, "concurrency": [1, 16], "num_prompts": 32},
                  {"isl": 128, "osl": 16, "sla": "ttft_p99<=500ms", "sla_max": 64}],
}


class _Response:
    def __init__(self, data: Any) -> None:
        self.data = json.dumps(data)


def as_job(data: dict[str, Any]) -> Any:
    from kubernetes.client import ApiClient

    client = ApiClient()
    if "response_text" in inspect.signature(client.deserialize).parameters:
        return client, client.deserialize(json.dumps(data), "V1Job", "application/json")
    return client, client.deserialize(_Response(data), "V1Job")


def test_jobs_load_into_the_kubernetes_client() -> None:
    plan = parse_plan(PLAN)
    jobs, skipped = render_jobs(plan, image="lmsysorg/sglang:v0.5.15", namespace="bench")
    assert [s["configuration"] for s in skipped] == ["two-nodes", "not-an-engine"]
    assert "2 nodes" in skipped[0]["why"] and skipped[0]["hint"]
    assert [j["metadata"]["name"] for j in jobs] == ["sweep-k8s-vllm-tp2",
                                                     "sweep-k8s-sglang-recipe"]
    for manifest in jobs:
        client, job = as_job(manifest)
        assert client.sanitize_for_serialization(job) == manifest  # nothing unknown
        spec = job.spec.template.spec
        assert spec.restart_policy == "Never" and job.metadata.namespace == "bench"
        (engine,), (bench,) = spec.init_containers, spec.containers
        assert engine.restart_policy == "Always"  # a native sidecar
        assert engine.startup_probe.http_get.path == "/health"
        assert engine.startup_probe.failure_threshold == 120
        assert engine.image == "lmsysorg/sglang:v0.5.15"
        script = bench.command[-1].splitlines()
        benches = [shlex.split(line) for line in script if line.startswith("servewise bench")]
        assert len(benches) == 2
        assert benches[0][benches[0].index("--concurrency") + 1] == "1,16"
        assert "--sla" in benches[1] and "ttft_p99<=500ms" in benches[1]
        gpus = engine.resources.limits["nvidia.com/gpu"]
        assert benches[0][benches[0].index("--gpus") + 1] == gpus
    vllm = jobs[0]["spec"]["template"]["spec"]["initContainers"][0]
    assert vllm["resources"]["limits"]["nvidia.com/gpu"] == "2"
    assert {"name": "VLLM_USE_V1", "value": "1"} in vllm["env"]
    assert "vllm serve Qwen/Qwen3-8B --tensor-parallel-size 2 --port 8000" in vllm["command"][-1]


def test_the_rendered_bench_commands_parse(capsys: pytest.CaptureFixture[str]) -> None:
    """Each benchmark line is one the bench command accepts (checked up to the request)."""
    jobs, _ = render_jobs(parse_plan(PLAN), image="img")
    script = jobs[0]["spec"]["template"]["spec"]["containers"][0]["command"][-1]
    for line in script.splitlines():
        if not line.startswith("servewise bench"):
            continue
        words = shlex.split(line)[2:]
        words[0] = "http://127.0.0.1:9"  # nothing listens: the options were all accepted
        at = words.index("--output")
        del words[at:at + 2]
        code = run(["bench", *words, "--read-timeout", "1"])
        document = json.loads(capsys.readouterr().out)
        assert code == 2 and "cannot reach" in document["message"], document


def test_cli_writes_the_jobs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text(yaml.safe_dump({**PLAN, "configurations": PLAN["configurations"][:1]}))
    out = tmp_path / "jobs.yaml"
    code = run(["sweep", str(plan), "--k8s", str(out), "--image", "vllm/vllm-openai:v0.32.0"])
    assert code == 0
    (job,) = list(yaml.safe_load_all(out.read_text()))
    assert job["kind"] == "Job" and not (tmp_path / "plan.sweep.json").exists()
    capsys.readouterr()
    code = run(["sweep", str(plan), "--k8s", "-", "--json", "--image", "i"])
    assert code == 0 and json.loads(capsys.readouterr().out)["jobs"][0]["kind"] == "Job"
    code = run(["sweep", str(plan), "--k8s", "-", "--json"])  # a command names no image
    skipped = json.loads(capsys.readouterr().out)["skipped"]
    assert code == 1 and "no image" in skipped[0]["why"] and "--image" in skipped[0]["hint"]
