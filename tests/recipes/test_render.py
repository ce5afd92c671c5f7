"""Renderers: golden files per format, shell text that parses back, and a LeaderWorkerSet
manifest that the LWS CRD schema and the kubernetes client both accept.

Golden files live in ``tests/data/recipes/golden/``; after a deliberate change, rewrite them
with ``SERVEWISE_UPDATE_GOLDEN=1 pytest tests/recipes/test_render.py`` and review the diff.
"""

from __future__ import annotations

import inspect
import json
import os
import shlex
from typing import Any

import jsonschema
import pytest
import yaml

from servewise.errors import UsageError
from servewise.recipes import Launch, load_recipes, render
from servewise.recipes.renderers import shell_text
from support.paths import ROOT

GOLDEN = ROOT / "tests" / "data" / "recipes" / "golden"
CRD = ROOT / "tests" / "data" / "recipes" / "lws" / "leaderworkerset-crd.yaml"
UPDATE = os.environ.get("SERVEWISE_UPDATE_GOLDEN") == "1"

SEED = "vllm/deepseek-v4-flash-0731-nvfp4/rtx-pro-6000-max-q/tp2"
H200 = "sglang/deepseek-v4-flash-0731/h200/fp4/balanced/single"
PRO = "sglang/deepseek-v4-pro/h200/fp8/balanced/multi-2"
VLLM_2_NODES = Launch(engine="vllm", model="deepseek-ai/DeepSeek-V4-Pro",
                      argv=("--trust-remote-code", "--kv-cache-dtype", "fp8", "--block-size",
                            "256", "--tensor-parallel-size", "8", "--pipeline-parallel-size", "2"),
                      env=(("NCCL_SOCKET_IFNAME", "eth0"),), image="vllm/vllm-openai:v0.25.0",
                      nodes=2, gpus=8, name="dsv4-pro")

CASES: dict[str, tuple[str | Launch, str, dict[str, Any]]] = {
    "seed-vllm.sh": (SEED, "vllm", {}),
    "seed-docker.sh": (SEED, "docker", {"model_dir": "/path/to/DeepSeek-V4-Flash-0731-NVFP4"}),
    "h200-sglang.sh": (H200, "sglang", {}),
    "h200-docker.sh": (H200, "docker", {"image": "lmsysorg/sglang:v0.5.16", "port": 30001}),
    "pro-2-nodes-sglang.sh": (PRO, "sglang", {}),
    "pro-2-nodes-docker.sh": (PRO, "docker", {"image": "lmsysorg/sglang:v0.5.15"}),
    "vllm-2-nodes-mp.sh": (VLLM_2_NODES, "vllm", {}),
    "vllm-2-nodes-ray.sh": (VLLM_2_NODES, "vllm", {"multinode": "ray"}),
    "pro-2-nodes-lws.yaml": (PRO, "k8s", {"image": "lmsysorg/sglang:v0.5.15"}),
    "vllm-2-nodes-lws-mp.yaml": (VLLM_2_NODES, "k8s", {"namespace": "llm"}),
    "vllm-2-nodes-lws-ray.yaml": (VLLM_2_NODES, "k8s", {"multinode": "ray"}),
    "seed-lws.yaml": (SEED, "k8s", {"model_dir": "/models/DeepSeek-V4-Flash-0731-NVFP4"}),
}


def rendered(name: str):  # type: ignore[no-untyped-def]
    what, fmt, options = CASES[name]
    target = load_recipes().require(what) if isinstance(what, str) else what
    return render(target, fmt, **options)


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden(name: str) -> None:
    text = rendered(name).shell
    path = GOLDEN / name
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
    assert path.is_file(), f"no golden file {path}: run with SERVEWISE_UPDATE_GOLDEN=1"
    assert text == path.read_text("utf-8"), (
        f"{name} changed; if on purpose: SERVEWISE_UPDATE_GOLDEN=1 pytest {__file__}")


@pytest.mark.parametrize("name", [n for n in sorted(CASES) if n.endswith(".sh")])
def test_shell_text_parses_back_to_each_argv(name: str) -> None:
    result = rendered(name)
    for command in result.commands:
        words = shlex.split(command.shell.replace("\\\n", " "), posix=True)
        env = [f"{key}={value}" for key, value in command.env.items()]
        assert words[:len(env)] == env
        expected = [word.replace("$HOME", os.environ.get("HOME", "")) for word in command.argv]
        got = [os.path.expandvars(word) if word.startswith("$HOME") else word
               for word in words[len(env):]]
        assert got == expected


def test_the_seed_docker_line_has_the_seed_pieces() -> None:
    argv = rendered("seed-docker.sh").argv
    assert argv[:5] == ["docker", "run", "--gpus", "all", "--ipc=host"]
    assert "8000:8000" in argv
    assert "/path/to/DeepSeek-V4-Flash-0731-NVFP4:/model:ro" in argv
    image = argv.index("vllm/vllm-openai:nightly-6f91edf96d3f3272945809c04702380053bff4de")
    assert argv[image + 1] == "/model"


def test_port_and_host_replace_the_recipe_s() -> None:
    recipe = load_recipes().require(SEED)
    argv = render(recipe, "vllm", port=9000, host="127.0.0.1").argv
    assert argv.count("--port") == 1 and argv[argv.index("--port") + 1] == "9000"
    assert argv[argv.index("--host") + 1] == "127.0.0.1"


def test_multi_node_flags() -> None:
    sglang = rendered("pro-2-nodes-sglang.sh")
    assert [c.argv[-6:] for c in sglang.commands] == [
        ["--nnodes", "2", "--node-rank", str(rank), "--dist-init-addr", "$HEAD_IP:20000"]
        for rank in (0, 1)]
    mp = rendered("vllm-2-nodes-mp.sh").commands
    assert mp[0].argv[-6:] == ["--nnodes", "2", "--node-rank", "0", "--master-addr", "$HEAD_IP"]
    assert mp[1].argv[-1] == "--headless"
    ray = rendered("vllm-2-nodes-ray.sh")
    assert [c.argv[:2] for c in ray.commands] == [["ray", "start"], ["ray", "start"],
                                                  ["vllm", "serve"]]
    assert ray.argv[-2:] == ["--distributed-executor-backend", "ray"]


@pytest.mark.parametrize(("what", "fmt", "options", "message"), [
    (H200, "docker", {}, "names no image"),
    (H200, "k8s", {}, "names no image"),
    (H200, "vllm", {}, "cannot be rendered"),
    (SEED, "helm", {}, "unknown format"),
    (SEED, "vllm", {"multinode": "slurm"}, "multi-node mode"),
])
def test_refusals(what: str, fmt: str, options: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        render(load_recipes().require(what), fmt, **options)


def test_shell_text_quotes_json_and_keeps_variables() -> None:
    text = shell_text(["vllm", "serve", "m", "--speculative-config", '{"method": "mtp"}',
                       "--master-addr", "$HEAD_IP"], {"A": "x y"})
    assert text.startswith("A='x y' vllm serve m")
    assert "'{\"method\": \"mtp\"}'" in text and "$HEAD_IP" in text


def _crd_schema() -> dict[str, Any]:
    crd = yaml.safe_load(CRD.read_text("utf-8"))
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert isinstance(schema, dict)
    return schema


@pytest.mark.parametrize("name", [n for n in sorted(CASES) if n.endswith(".yaml")])
def test_manifest_validates_against_the_lws_crd(name: str) -> None:
    result = rendered(name)
    manifest = yaml.safe_load(result.shell)
    assert manifest == result.manifest
    jsonschema.Draft7Validator(_crd_schema()).validate(manifest)
    size = manifest["spec"]["leaderWorkerTemplate"]["size"]
    assert size == 2 or name == "seed-lws.yaml"


@pytest.mark.parametrize("broken", [
    {"size": "2"}, {"restartPolicy": "Always"}, {"leaderTemplate": "pod"},
])
def test_the_crd_schema_refuses_a_broken_manifest(broken: dict[str, Any]) -> None:
    manifest = rendered("pro-2-nodes-lws.yaml").manifest
    assert manifest is not None
    bad = json.loads(json.dumps(manifest))
    bad["spec"]["leaderWorkerTemplate"].update(broken)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft7Validator(_crd_schema()).validate(bad)


class _Response:
    def __init__(self, data: Any) -> None:
        self.data = json.dumps(data)


def _pod_template(client: Any, data: dict[str, Any]) -> Any:
    """``data`` as a ``V1PodTemplateSpec`` (the client's API changed in version 33)."""
    if "response_text" in inspect.signature(client.deserialize).parameters:
        return client.deserialize(json.dumps(data), "V1PodTemplateSpec", "application/json")
    return client.deserialize(_Response(data), "V1PodTemplateSpec")


@pytest.mark.parametrize("name", [n for n in sorted(CASES) if n.endswith(".yaml")])
def test_pod_templates_load_into_the_kubernetes_client(name: str) -> None:
    from kubernetes.client import ApiClient, V1PodTemplateSpec

    manifest = rendered(name).manifest
    assert manifest is not None
    client = ApiClient()
    for key in ("leaderTemplate", "workerTemplate"):
        template = manifest["spec"]["leaderWorkerTemplate"][key]
        pod = _pod_template(client, template)
        assert isinstance(pod, V1PodTemplateSpec)
        # every field survives the round trip: none is unknown to the Kubernetes API
        assert client.sanitize_for_serialization(pod) == template
        assert pod.spec.containers[0].image


def test_an_unknown_pod_field_would_fail_the_round_trip() -> None:
    from kubernetes.client import ApiClient

    template = {"spec": {"containers": [{"name": "x", "image": "i", "gpus": 8}]}}
    client = ApiClient()
    pod = _pod_template(client, template)
    assert client.sanitize_for_serialization(pod) != template


def test_settings_and_server_argv_render_too() -> None:
    from servewise.knowledge.flags import EngineSettings
    from servewise.recipes.renderers import launch_from_argv

    settings = EngineSettings(model="acme/Tiny", tensor_parallel_size=2, kv_cache_dtype="fp8",
                              max_model_len=4096)
    launch = Launch.from_settings("vllm", settings, image="vllm/vllm-openai:v0.20.0")
    argv = render(launch, "vllm").argv
    assert argv[:3] == ["vllm", "serve", "acme/Tiny"]
    assert "--tensor-parallel-size" in argv and "--kv-cache-dtype" in argv
    assert render(argv, "vllm").argv == argv
    sglang = Launch.from_settings("sglang", settings)
    command = render(sglang, "sglang").argv
    from servewise.knowledge.flags import flag_for

    assert command[3:5] == ["--model-path", "acme/Tiny"]
    assert flag_for("sglang", "tensor_parallel_size") in command
    again = launch_from_argv(command)
    assert again.model == "acme/Tiny" and "--model-path" not in again.argv
    with pytest.raises(UsageError, match="not a server command line"):
        render(["docker", "run", "x"], "vllm")


def test_pitfalls_take_a_gpu_spec() -> None:
    from servewise.knowledge.gpus import parse_gpu_spec
    from servewise.recipes import pitfalls_for

    found = pitfalls_for(gpu=parse_gpu_spec("rtx-pro-6000-max-q:2"), engine="vllm",
                         libraries={"deep_gemm"})
    assert "sm120-deepgemm-fork-without-sm120" in {p.id for p in found}
    assert pitfalls_for(gpu=parse_gpu_spec("h200:8"), engine="vllm",
                        libraries={"deep_gemm"}) == []


SHIPPED_MULTI = ["vllm-recipes/deepseek-ai/deepseek-r1/default/h200/multi_node_tp",
                 "vllm-recipes/deepseek-ai/deepseek-r1/default/h200/multi_node_dep",
                 "vllm-recipes/moonshotai/kimi-k2-instruct/default/h200/multi_node_tp_pp"]


@pytest.mark.parametrize("ident", SHIPPED_MULTI)
def test_a_shipped_multi_node_recipe_is_a_valid_leaderworkerset(ident: str) -> None:
    from kubernetes.client import ApiClient

    recipe = load_recipes().require(ident)
    assert recipe.match.nodes >= 2
    result = render(recipe, "k8s")
    manifest = yaml.safe_load(result.shell)
    assert manifest == result.manifest
    jsonschema.Draft7Validator(_crd_schema()).validate(manifest)
    assert manifest["spec"]["leaderWorkerTemplate"]["size"] == recipe.match.nodes
    worker = manifest["spec"]["leaderWorkerTemplate"]["workerTemplate"]
    script = worker["spec"]["containers"][0]["command"][2]
    assert "$HEAD_IP" not in script and "LWS_LEADER_ADDRESS" in script
    if recipe.multinode == "dp":
        assert '"$((LWS_WORKER_INDEX * 8))"' in script
    else:
        assert '"$LWS_WORKER_INDEX"' in script and "--headless" in script
    client = ApiClient()
    pod = _pod_template(client, worker)
    assert client.sanitize_for_serialization(pod) == worker


def test_a_prefill_decode_recipe_renders_a_pool_per_leaderworkerset() -> None:
    recipe = load_recipes().require(
        "vllm-recipes/deepseek-ai/deepseek-r1/default/h200/pd_cluster")
    result = render(recipe, "k8s")
    assert result.manifest is not None
    items = result.manifest["items"]
    kinds = [item["kind"] for item in items]
    assert kinds == ["LeaderWorkerSet", "LeaderWorkerSet", "Deployment"]
    for item in items[:2]:
        jsonschema.Draft7Validator(_crd_schema()).validate(item)
    router = items[2]["spec"]["template"]["spec"]["containers"][0]
    assert "vllm-router" in router["command"][2]
    names = {env["name"]: env["value"] for env in router["env"]}
    assert names["PREFILL_NODE_1"].startswith("deepseek-r1-vllm-prefill-0.")
    shell = render(recipe, "vllm").shell
    for command in render(recipe, "vllm").commands:
        assert shlex.split(shell_text(command.argv).replace("\\\n", "")) == command.argv
    assert "CUDA_VISIBLE_DEVICES" in shell
