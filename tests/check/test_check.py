"""``servewise check`` end to end: the seed's deployment, SGLang on H200, and bad input."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from servewise.cli import run
from support.images import Image, build_tar, push_image, wheel_entries, write_docker_save
from support.paths import ROOT
from support.registry import Registry

SAMPLES = ROOT / "src" / "servewise" / "samples"
GOOD = SAMPLES / "vllm-0.26.1rc1.dev77+ga6b593d2-cp38-abi3-linux_x86_64.whl"
BAD = SAMPLES / "vllm-0.26.1rc1.dev181+gf5a76426-cp38-abi3-linux_x86_64.whl"
SEED_MODEL = "MJPansa/DeepSeek-V4-Flash-0731-NVFP4"
SEED_GPU = "rtx-pro-6000-blackwell-max-q:2"
# The first seed's final command: the flags that started the model at 250,000 tokens.
SEED_FLAGS = {
    "--tensor-parallel-size": "2", "--max-model-len": "250000", "--max-num-seqs": "8",
    "--max-num-batched-tokens": "4096", "--gpu-memory-utilization": "0.95",
    "--kv-cache-dtype": "fp8", "--block-size": "256", "--tokenizer-mode": "deepseek_v4",
    "--served-model-name": "DeepSeek-V4-Flash-0731-NVFP4", "--port": "8000",
}


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERVEWISE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("SERVEWISE_DATA_DIR", str(tmp_path / "data"))


def _check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, object]]:
    code = run(["check", "--json", *args])
    return code, json.loads(capsys.readouterr().out)


def _tarball(tmp_path: Path, wheel: Path, tag: str) -> Path:
    image = Image(layers=[build_tar(wheel_entries(wheel))])
    return write_docker_save(tmp_path / f"{tag}.tar", {f"vllm/vllm-openai:{tag}": image})


def _flags(argv: list[str]) -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    for index, word in enumerate(argv):
        if word.startswith("--"):
            following = argv[index + 1] if index + 1 < len(argv) else None
            found[word] = None if following is None or following.startswith("--") else following
    return found


def test_seed_good_image_tarball_passes_with_the_command_that_worked(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tarball = _tarball(tmp_path, GOOD, "nightly-0729")
    code, report = _check(capsys, SEED_MODEL, "--gpu", SEED_GPU, "--build", str(tarball),
                          "--format", "vllm")
    assert code == 0 and report["will_start"] is True
    assert report["engine_version_from"] == "build"
    assert str(report["engine_version"]).startswith("0.26.1rc1.dev77")
    command = report["command"]
    assert isinstance(command, dict)
    argv = command["argv"]
    assert argv[:3] == ["vllm", "serve", SEED_MODEL]
    flags = _flags(argv)
    for flag, value in SEED_FLAGS.items():
        assert flags.get(flag) == value, flag
    assert "--enforce-eager" in flags and "--trust-remote-code" in flags
    assert shlex.split(command["shell"].replace("\\\n", " ")) == argv
    gate = report["gate"]
    assert isinstance(gate, dict) and gate["passed"] is True


def test_seed_regressed_image_tarball_is_refused_naming_library_and_arch(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tarball = _tarball(tmp_path, BAD, "nightly-0731")
    code, report = _check(capsys, SEED_MODEL, "--gpu", SEED_GPU, "--build", str(tarball))
    assert code == 1 and report["will_start"] is False
    problems = report["problems"]
    assert isinstance(problems, list) and problems
    first = problems[0]
    assert first["part"] == "build"
    assert "deep_gemm" in first["message"] and "sm_120" in first["message"]
    assert "bisect" in first["fix"]


def test_sglang_h200_fraction_from_a_verified_recipe_leaves_workspace_room(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, report = _check(capsys, "deepseek-ai/DeepSeek-V4-Flash", "--gpu", "h200:8",
                          "--engine", "sglang")
    assert code == 0
    recipe = report["recipe"]
    assert isinstance(recipe, dict) and recipe["status"] == "verified"
    command = report["command"]
    assert isinstance(command, dict)
    flags = _flags(command["argv"])
    fraction = flags.get("--mem-fraction-static")
    assert fraction is not None and 0 < float(fraction) <= 0.90


def test_user_flag_against_a_model_rule_blocks_naming_the_flag(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, report = _check(capsys, SEED_MODEL, "--gpu", SEED_GPU, "--", "--kv-cache-dtype",
                          "auto")
    assert code == 1
    problems = report["problems"]
    assert isinstance(problems, list)
    assert any(p["part"] == "rules" and "--kv-cache-dtype" in p["message"] for p in problems)


def test_required_flags_are_set_without_a_recipe(capsys: pytest.CaptureFixture[str]) -> None:
    code, report = _check(capsys, "deepseek-ai/DeepSeek-V4-Flash", "--gpu", "b200:8",
                          "--engine", "vllm", "--max-model-len", "65536")
    command = report["command"]
    assert isinstance(command, dict)
    flags = _flags(command["argv"])
    assert flags.get("--kv-cache-dtype") in ("fp8", "fp8_e4m3")
    assert flags.get("--block-size") == "256"
    assert flags.get("--max-model-len") == "65536"
    assert code in (0, 1)


def test_a_context_that_does_not_fit_says_the_largest(capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    code, report = _check(capsys, "llama-3.1-70b", "--gpu", "rtx-4090:2", "--max-model-len",
                          "131072", "--engine", "vllm")
    assert code == 1
    problems = report["problems"]
    assert isinstance(problems, list)
    assert any(p["part"] == "memory" for p in problems)


def test_recipe_fraction_without_headroom_loses_to_the_planner(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recipes = tmp_path / "data" / "recipes"
    recipes.mkdir(parents=True)
    (recipes / "tight.yaml").write_text(
        "schema: 1\nmodel: meta-llama/Llama-3.1-8B-Instruct\nengine: vllm\n"
        "recipes:\n"
        "  - id: user/llama-8b/h100/tight\n"
        "    checkpoint: meta-llama/Llama-3.1-8B-Instruct\n"
        "    match: {hw: a100-80gb, gpus: 1}\n"
        "    argv: [--gpu-memory-utilization, '0.995', --max-model-len, '8192']\n"
        "    status: estimated\n"
        "    provenance: {who: a test, source: 'https://example.org/tight'}\n")
    # an A100: vLLM's recipe database names no A100 profile, so the user's recipe is the match
    code, report = _check(capsys, "llama-3.1-8b-instruct", "--gpu", "a100-80gb:1")
    recipe = report["recipe"]
    assert isinstance(recipe, dict) and recipe["id"] == "user/llama-8b/h100/tight", report
    findings = report["findings"]
    assert isinstance(findings, list)
    assert any(f["part"] == "memory" and "wins" in f["message"] for f in findings)
    command = report["command"]
    assert isinstance(command, dict)
    value = _flags(command["argv"]).get("--gpu-memory-utilization")
    assert value is not None and float(value) < 0.995
    assert code == 0


def test_a_verified_recipe_keeps_its_fraction_and_says_the_planner_differs(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, report = _check(capsys, "deepseek-ai/DeepSeek-V4-Flash-0731", "--gpu", "h200:8",
                          "--engine", "sglang")
    recipe = report["recipe"]
    assert isinstance(recipe, dict)
    assert recipe["id"] == "sglang/deepseek-v4-flash-0731/h200/fp4/balanced/single"
    command = report["command"]
    assert isinstance(command, dict)
    assert _flags(command["argv"]).get("--mem-fraction-static") == "0.88"
    assert code == 0


def test_markdown_report(capsys: pytest.CaptureFixture[str]) -> None:
    code = run(["check", SEED_MODEL, "--gpu", SEED_GPU, "--format", "markdown"])
    out = capsys.readouterr().out
    assert code == 0
    assert out.startswith("## servewise check: WILL START")
    assert "```sh" in out and "--kv-cache-dtype fp8" in out


@pytest.mark.parametrize(("args", "words"), [
    (["llama-3.1-8b-instruct", "--gpu", "no-such-gpu:1"], "unknown GPU"),
    (["llama-3.1-8b-instruct", "--gpu", "h100:0"], "at least 1"),
    (["llama-3.1-8b-instruct", "--gpu", "h100:1", "--format", "yaml"], "--format"),
    (["llama-3.1-8b-instruct", "--gpu", "h100:1", "--engine", "tgi"], "vllm or sglang"),
    (["/nonexistent/model-folder", "--gpu", "h100:1"], "/nonexistent/model-folder"),
    (["no-such-card", "--gpu", "h100:1"], "no-such-card"),
])
def test_bad_input_exits_2(args: list[str], words: str,
                           capsys: pytest.CaptureFixture[str]) -> None:
    code = run(["check", "--json", *args])
    data = json.loads(capsys.readouterr().out)
    assert code == 2
    assert words.lower() in (data["message"] + " " + str(data.get("hint"))).lower()


def test_k8s_form_asks_for_the_gpus_the_layout_uses(capsys: pytest.CaptureFixture[str]) -> None:
    code, report = _check(capsys, "deepseek-ai/DeepSeek-V4-Flash-0731", "--gpu", "h200:8",
                          "--engine", "sglang", "--format", "k8s", "--image",
                          "lmsysorg/sglang:v0.5.16")
    assert code == 0
    command = report["command"]
    assert isinstance(command, dict)
    manifest = next(item for item in command["manifest"]["items"]
                    if item["kind"] == "LeaderWorkerSet")
    pod = manifest["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]
    container = pod["containers"][0]
    assert container["image"] == "lmsysorg/sglang:v0.5.16"
    assert container["resources"]["limits"]["nvidia.com/gpu"] in ("4", 4)


def test_k8s_without_an_image_uses_the_engine_s_official_one(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, report = _check(capsys, "llama-3.1-8b-instruct", "--gpu", "rtx-4090:1",
                          "--max-model-len", "8k", "--format", "k8s", "--engine-version",
                          "0.11.0")
    assert code == 0
    manifest = next(item for item in report["command"]["manifest"]["items"]
                    if item["kind"] == "LeaderWorkerSet")
    container = manifest["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"][
        "containers"][0]
    assert container["image"] == "vllm/vllm-openai:v0.11.0"
    findings = report["findings"]
    assert any("official image" in f["message"] and "--image" in (f["fix"] or "")
               for f in findings)


def test_check_and_recipes_cite_no_project_notes(capsys: pytest.CaptureFixture[str]) -> None:
    """``seeds/…`` and ``research/…`` are project files a package user does not have."""
    import re

    from servewise.recipes import load_recipes

    internal = re.compile(r"(?<![\w-])(?:seeds|research)/[\w.-]+")
    runs = [["check", SEED_MODEL, "--gpu", SEED_GPU, "--json", "--verbose"],
            ["check", "deepseek-ai/DeepSeek-V4-Flash-0731", "--gpu", "h200:8", "--engine",
             "sglang", "--format", "markdown", "--verbose"]]
    book = load_recipes()
    # servewise's own recipes through the command; the converted database snapshots (ten
    # thousand recipes, every one from the same converter) as data
    runs += [["recipe", "show", recipe.id, "--json"] for recipe in book
             if recipe.origin == "servewise"]
    for argv in runs:
        run(argv)
        captured = capsys.readouterr()
        assert internal.findall(captured.out + captured.err) == [], argv
    for recipe in book:
        if recipe.origin != "servewise":
            assert internal.findall(json.dumps(recipe.to_dict())) == [], recipe.id


def test_without_a_fitting_recipe_the_near_ones_say_what_differs(
        capsys: pytest.CaptureFixture[str]) -> None:
    _, report = _check(capsys, "deepseek-ai/DeepSeek-V4-Flash", "--gpu",
                       "rtx-pro-6000-blackwell-max-q:2", "--engine", "sglang")
    assert report["recipe"] is None
    findings = report["findings"]
    assert isinstance(findings, list)
    near = [f for f in findings if f["part"] == "recipe" and "does not fit" in f["message"]]
    assert near and all("not rtx-pro-6000-blackwell-max-q" in f["message"] for f in near)


def test_a_gpu_described_by_its_memory_is_planned_without_recipes(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, report = _check(capsys, "llama-3.1-8b-instruct", "--gpu", "gaudi3:1",
                          "--gpu-memory", "192GB", "--compute-capability", "9.4")
    assert code == 0
    assert report["recipe"] is None
    plan = report["plan"]
    assert isinstance(plan, dict) and plan["startup"]["fits"] is True


@pytest.mark.registry
def test_a_refused_registry_image_bisects_its_own_repository(
        registry: Registry, capsys: pytest.CaptureFixture[str]) -> None:
    # A repository of its own: the registry is shared by the session's tests.
    push_image(registry, "check-test/vllm-openai", "nightly-0731",
               Image(layers=[build_tar(wheel_entries(BAD))]))
    build = f"{registry.host}/check-test/vllm-openai:nightly-0731"
    code, report = _check(capsys, SEED_MODEL, "--gpu", SEED_GPU, "--build", build)
    assert code == 1
    problems = report["problems"]
    assert isinstance(problems, list) and problems[0]["part"] == "build"
    assert f"servewise bisect {registry.host}/check-test/vllm-openai " in problems[0]["fix"]
