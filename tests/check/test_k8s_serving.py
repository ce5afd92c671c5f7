"""``check --format k8s`` gives a deployment that runs as it is (issue 28, item 7): a model
cache on every pod, a Service on the engine's port, a startup probe sized to the load time;
``docker`` and ``k8s`` without a recipe image use the engine's official image, said so."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from servewise.check.compose import CheckRequest, run_check
from servewise.errors import UsageError
from servewise.knowledge.gpus import parse_gpu_spec
from servewise.recipes.k8s_serving import (
    HF_CACHE_IN_IMAGE,
    ModelCache,
    claim_size,
    startup_seconds,
)
from support.paths import ROOT

CRD = ROOT / "tests" / "data" / "recipes" / "lws" / "leaderworkerset-crd.yaml"


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERVEWISE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("SERVEWISE_DATA_DIR", str(tmp_path / "data"))


def _report(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    """The report as the library gives it (``--json`` masks fields named like secrets, and a
    secretKeyRef's ``key`` is one of them)."""
    del capsys
    words = list(args)
    model = words.pop(0)
    options = dict(zip(words[::2], words[1::2], strict=True))
    request = CheckRequest(
        model=model, gpu=parse_gpu_spec(options["--gpu"]), engine=options.get("--engine"),
        engine_version=options.get("--engine-version"),
        max_model_len=8000 if options.get("--max-model-len") == "8k" else None,
        command_format=options.get("--format"), image=options.get("--image"))
    report = run_check(request)
    assert report.will_start, report.to_dict()["problems"]
    return report.to_dict()


def _items(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    manifest = report["command"]["manifest"]
    assert manifest["kind"] == "List"
    assert list(yaml.safe_load_all(report["command"]["shell"])) == manifest["items"]
    return {item["kind"]: item for item in manifest["items"]}


def _leader(lws: dict[str, Any]) -> dict[str, Any]:
    container: dict[str, Any] = lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"][
        "containers"][0]
    return container


def _probe_seconds(container: dict[str, Any]) -> int:
    probe = container["startupProbe"]
    assert probe["httpGet"]["path"] == "/health"
    return int(probe["periodSeconds"] * probe["failureThreshold"])


def test_k8s_has_a_cache_a_service_and_a_probe_sized_to_the_weights(
        capsys: pytest.CaptureFixture[str]) -> None:
    report = _report(capsys, "llama-3.1-8b-instruct", "--gpu", "h100:1", "--max-model-len",
                     "8k", "--format", "k8s")
    items = _items(report)
    assert set(items) == {"PersistentVolumeClaim", "LeaderWorkerSet", "Service"}
    lws = items["LeaderWorkerSet"]
    crd = yaml.safe_load(CRD.read_text("utf-8"))
    jsonschema.Draft7Validator(crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]).validate(
        lws)
    # the cache: a claim sized for the 16 GB checkpoint, mounted where the image looks
    claim = items["PersistentVolumeClaim"]
    assert claim["spec"]["resources"]["requests"]["storage"] == claim_size(16060522496)
    pod = lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]
    assert {"name": "hf-cache", "persistentVolumeClaim": {
        "claimName": claim["metadata"]["name"]}} in pod["volumes"]
    leader = _leader(lws)
    assert {"name": "hf-cache", "mountPath": HF_CACHE_IN_IMAGE} in leader["volumeMounts"]
    # the Service: the leader pods on the engine's port
    service = items["Service"]
    assert service["spec"]["ports"][0]["port"] == 8000
    assert service["spec"]["selector"] == lws["spec"]["leaderWorkerTemplate"][
        "leaderTemplate"]["metadata"]["labels"]
    assert service["metadata"]["name"] != lws["metadata"]["name"]  # LWS's own headless one
    # the probe: at least the download and the load of 16 GB
    seconds = _probe_seconds(leader)
    assert seconds >= startup_seconds(16060522496, 16060522496) > 600
    assert any("startup probe allows" in f["message"] for f in report["findings"])


def test_a_larger_model_gets_a_longer_probe(capsys: pytest.CaptureFixture[str]) -> None:
    small = _report(capsys, "llama-3.1-8b-instruct", "--gpu", "h200:1", "--max-model-len",
                    "8k", "--format", "k8s")
    large = _report(capsys, "deepseek-ai/DeepSeek-V4-Flash-0731", "--gpu", "h200:8",
                    "--engine", "sglang", "--format", "k8s", "--image",
                    "lmsysorg/sglang:v0.5.16")
    big = _items(large)
    assert _probe_seconds(_leader(big["LeaderWorkerSet"])) > 2 * _probe_seconds(
        _leader(_items(small)["LeaderWorkerSet"]))
    assert big["Service"]["spec"]["ports"][0]["port"] == 30000


def test_a_host_path_cache_and_an_existing_claim() -> None:
    spec = parse_gpu_spec("h100:1")
    report = run_check(CheckRequest(model="llama-3.1-8b-instruct", gpu=spec, max_model_len=8000,
                                    command_format="k8s", model_cache="hostpath:/data/hf"))
    items = {i["kind"]: i for i in report.command["manifest"]["items"]}
    assert "PersistentVolumeClaim" not in items
    volumes = items["LeaderWorkerSet"]["spec"]["leaderWorkerTemplate"]["leaderTemplate"][
        "spec"]["volumes"]
    assert {"name": "hf-cache", "hostPath": {"path": "/data/hf",
                                             "type": "DirectoryOrCreate"}} in volumes
    assert ModelCache.parse("pvc:models") == ModelCache(kind="pvc", name="models", create=False)
    with pytest.raises(UsageError, match="model cache"):
        ModelCache.parse("nfs:server")


def test_docker_without_an_image_uses_the_official_one_and_says_so(
        capsys: pytest.CaptureFixture[str]) -> None:
    report = _report(capsys, "llama-3.1-8b-instruct", "--gpu", "rtx-4090:1", "--max-model-len",
                     "8k", "--format", "docker", "--engine-version", "0.11.0")
    assert "vllm/vllm-openai:v0.11.0" in report["command"]["argv"]
    assert any("official image" in f["message"] for f in report["findings"])


def test_the_cli_takes_the_model_cache(capsys: pytest.CaptureFixture[str]) -> None:
    from servewise.cli import run

    code = run(["check", "llama-3.1-8b-instruct", "--gpu", "h100:1", "--format", "k8s",
                "--model-cache", "hostpath:/data/hf"])
    out = capsys.readouterr().out
    assert code == 0 and "path: /data/hf" in out and "PersistentVolumeClaim" not in out
    assert run(["check", "llama-3.1-8b-instruct", "--gpu", "h100:1", "--format", "k8s",
                "--model-cache", "bogus"]) == 2
