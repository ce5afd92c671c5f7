"""``servewise recipe list|show|match|render|import``: output, --json and exit codes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from servewise.cli import app

SEED = "vllm/deepseek-v4-flash-0731-nvfp4/rtx-pro-6000-max-q/tp2"
H200 = "sglang/deepseek-v4-flash-0731/h200/fp4/balanced/single"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_list_and_filters() -> None:
    code, out, _ = run("recipe", "list", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["count"] == len(data["recipes"]) > 50
    code, out, _ = run("recipe", "list", "--engine", "vllm", "--gpu", "rtx-pro-6000-max-q",
                       "--json")
    assert code == 0 and [r["id"] for r in json.loads(out)["recipes"]] == [SEED]
    code, out, _ = run("recipe", "list", "--model", "nobody/Nothing")
    assert code == 1
    code, _, err = run("recipe", "list", "--gpu", "h2000")
    assert code == 2 and "unknown GPU" in err


def test_show() -> None:
    code, out, _ = run("recipe", "show", SEED)
    assert code == 0
    assert "huggingface.co/MJPansa/DeepSeek-V4-Flash-0731-NVFP4" in out
    assert "--kv-cache-dtype fp8" in out
    code, out, _ = run("recipe", "show", H200, "--json")
    data = json.loads(out)
    assert data["benchmarks"][0]["results"][0]["tokens_per_sec_per_gpu"] == 2994
    code, out, _ = run("recipe", "show", "no/such", "--json")
    assert code == 2 and json.loads(out)["error"] == "usage_error"


def test_match() -> None:
    code, out, _ = run("recipe", "match", "deepseek-ai/DeepSeek-V4-Flash-0731", "--gpu",
                       "h200:8", "--engine", "sglang", "--json")
    assert code == 0
    best = json.loads(out)["matches"][0]
    assert best["id"] == H200 and best["status"] == "verified"
    assert "--mem-fraction-static" in best["recipe"]["argv"]
    code, out, _ = run("recipe", "match", "deepseek-ai/DeepSeek-V4-Flash", "--gpu", "h200:2")
    assert code == 1
    code, _, _ = run("recipe", "match", "x/y", "--gpu", "h200:zero")
    assert code == 2
    code, out, _ = run("recipe", "match", "MJPansa/DeepSeek-V4-Flash-0731-NVFP4", "--gpu",
                       "rtx-pro-6000-max-q:2")
    assert code == 0 and SEED in out


def test_render() -> None:
    code, out, _ = run("recipe", "render", SEED, "--format", "docker", "--model-dir",
                       "/srv/dsv4", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["command"]["argv"][:2] == ["docker", "run"]
    assert data["command"]["shell"].startswith("docker run")
    code, out, _ = run("recipe", "render", SEED)
    assert code == 0 and out.startswith("vllm serve MJPansa/DeepSeek-V4-Flash-0731-NVFP4")
    code, _, err = run("recipe", "render", H200, "--format", "docker")
    assert code == 2 and "--image" in err
    code, out, _ = run("recipe", "render", "sglang/deepseek-v4-pro/h200/fp8/balanced/multi-2",
                       "--format", "k8s", "--image", "lmsysorg/sglang:v0.5.15")
    assert code == 0 and yaml.safe_load(out)["kind"] == "LeaderWorkerSet"
    code, _, err = run("recipe", "render", "sglang/glm-5.2/h200/bf16/balanced/multi-2")
    assert code == 0 and "estimated" in err


def test_import(user_dir: Path, tmp_path: Path) -> None:
    from support.configs import find_shared

    shared = find_shared()
    source = shared / "data" / "recipes" / "vllm-project-recipes" if shared else None
    if source is None or not source.is_dir():
        pytest.skip("shared/data/recipes is not beside the checkout")
    code, out, _ = run("recipe", "import", str(source), "--dry-run", "--json")
    assert code == 0 and json.loads(out)["dry_run"] and not (user_dir / "recipes").exists()
    code, out, _ = run("recipe", "import", str(source / "models/openai/gpt-oss-120b.yaml"))
    assert code == 0 and "wrote" in out
    code, out, _ = run("recipe", "list", "--model", "openai/gpt-oss-120b", "--json")
    assert code == 0 and json.loads(out)["count"] > 0
    clone = tmp_path / "clone"
    shutil.copytree(source, clone)
    bad = clone / "models" / "Qwen" / "Qwen3-32B.yaml"
    bad.write_text(bad.read_text("utf-8").replace("compatible_strategies:",
                                                  "compatible_strategies: 7\nx:"), "utf-8")
    code, out, _ = run("recipe", "import", str(clone), "--json", "--dry-run")
    assert code == 1  # one file refused, the rest imported
    report = json.loads(out)
    assert report["refused"] == ["models/Qwen/Qwen3-32B.yaml"]
    assert report["files"]["imported"] > 100
    assert any(p["file"] == str(bad) and p["path"] == "compatible_strategies"
               for p in report["problems"])
    code, out, err = run("recipe", "import", str(clone), "--dry-run")
    assert code == 1 and "Qwen3-32B.yaml" in err and "compatible_strategies" in err
    assert "out of scope: models/IndexTeam/IndexTTS-2.5.yaml" in out
    code, out, _ = run("recipe", "import", str(clone), "--json", "--strict")
    assert code == 2 and not (user_dir / "recipes" / "vllm-recipes.Qwen.Qwen3-8B.vllm.json"
                              ).exists()
    assert any(p["path"] == "compatible_strategies" for p in json.loads(out)["problems"])


def test_help_of_every_recipe_command() -> None:
    for command in ("list", "show", "match", "render", "import"):
        code, out, _ = run("recipe", command, "--help")
        assert code == 0 and "Usage" in out


def _doc_examples() -> list[list[str]]:
    import re
    import shlex

    from support.paths import ROOT

    text = (ROOT / "docs" / "recipes.md").read_text("utf-8")
    block = text.split("### Examples", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    return [shlex.split(line)[1:] for line in block.splitlines()
            if re.match(r"^\.venv/bin/servewise ", line)]


@pytest.mark.parametrize("args", _doc_examples(), ids=lambda a: " ".join(a[:3]))
def test_the_doc_examples_run(args: list[str]) -> None:
    code, out, err = run(*args)
    assert code == 0, err
    assert out


def test_match_without_a_fit_lists_near_misses() -> None:
    code, out, _ = run("recipe", "match", "deepseek-ai/DeepSeek-V4-Flash-0731", "--gpu",
                       "h200:2", "--engine", "sglang", "--json")
    assert code == 1
    data = json.loads(out)
    assert data["matches"] == []
    assert any(m["id"] == H200 and m["why"] == "needs 4 GPUs per node, you have 2"
               for m in data["near_misses"])
    code, _, err = run("recipe", "match", "deepseek-ai/DeepSeek-V4-Flash-0731", "--gpu",
                       "h200:2", "--engine", "sglang")
    assert code == 1 and "needs 4 GPUs" in err
