"""Imported recipes keep the model's shape, not the hardware profile's (issue 28, item 8):
a one-node TP recipe asks for the GPUs the variant's memory needs, a checkpoint made for AMD
GPUs is not offered on NVIDIA ones, and an unknown GPU names the way to describe it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from servewise.cli import run
from servewise.recipes import load_recipes
from servewise.recipes import vllm_synth as synth
from servewise.recipes.vllm_import import import_vllm_recipes

GPT_OSS = "models/openai/gpt-oss-120b.yaml"
H100 = {"brand": "NVIDIA", "generation": "hopper", "gpu_count": 8, "vram_gb": 640}
MI355X = {"brand": "AMD", "generation": "amd", "gpu_count": 8, "vram_gb": 2304}


@pytest.mark.parametrize(("needed", "tp"), [(0, 8), (40, 1), (80, 1), (96, 2), (200, 4),
                                            (500, 8), (900, 8)])
def test_single_node_tp_is_the_variant_s_need(needed: int, tp: int) -> None:
    variant = {"vram_minimum_gb": needed} if needed else {}
    assert synth.single_node_tp({}, variant, H100, "h100", "single_node_tp") == tp


def test_an_amd_checkpoint_runs_on_amd_only() -> None:
    amd = {"model_id": "amd/gpt-oss-120b-w-mxfp4-a-fp8", "precision": "mxfp4",
           "description": "Quark-quantized MXFP4 weights with FP8 activations for MI355X"}
    assert not synth.precision_fits(amd, H100)
    assert synth.precision_fits(amd, MI355X)
    assert synth.precision_fits({"precision": "mxfp4"}, H100)
    quark = {"model_id": "EmbeddedLLM/Inkling-Small-MXFP4", "precision": "mxfp4",
             "description": "Quark OCP MXFP4 checkpoint for AMD Instinct."}
    assert not synth.precision_fits(quark, H100)
    # naming an AMD GPU among the places a BF16 checkpoint runs is no restriction
    bf16 = {"precision": "bf16", "description": "Full precision BF16 — 2x GPU (TP=2) on AMD "
            "MI300X/MI325X/MI355X"}
    assert synth.precision_fits(bf16, H100)


def _gpt_oss_book(vllm_recipes: Path, user_dir: Path) -> object:
    import_vllm_recipes(vllm_recipes / GPT_OSS, user_dir=user_dir)
    return load_recipes(user_dir)


def test_gpt_oss_on_one_h100_needs_two_not_eight(vllm_recipes: Path, user_dir: Path) -> None:
    book = _gpt_oss_book(vllm_recipes, user_dir)
    matches = book.match(model="openai/gpt-oss-120b", hw="h100:1")  # type: ignore[attr-defined]
    assert not [m for m in matches if m.recipe.checkpoint.startswith("amd/")]
    misses = book.near_misses(model="openai/gpt-oss-120b",  # type: ignore[attr-defined]
                              hw="h100:1")
    tp = [why for recipe, why in misses
          if recipe.match.strategy == "single_node_tp" and recipe.match.variant == "default"
          and recipe.match.hw == "h100-sxm"]
    assert tp == ["needs 2 GPUs per node, you have 1"]
    two = book.match(model="openai/gpt-oss-120b", hw="h100:2")  # type: ignore[attr-defined]
    assert two and two[0].recipe.match.gpus == 2 and two[0].recipe.status == "verified"
    assert "--tensor-parallel-size" in two[0].recipe.argv
    assert two[0].recipe.argv[two[0].recipe.argv.index("--tensor-parallel-size") + 1] == "2"


def test_the_shipped_snapshot_has_the_same_shape() -> None:
    book = load_recipes()
    matches = book.match(model="openai/gpt-oss-120b", hw="h100:1")
    assert not [m for m in matches if m.recipe.checkpoint.startswith("amd/")]
    assert not [r for r in book.filter(model="openai/gpt-oss-120b", hw="h100")
                if r.checkpoint.startswith("amd/")]
    two = book.match(model="openai/gpt-oss-120b", hw="h100:2", engine="vllm")
    assert two and two[0].recipe.match.gpus == 2


def test_mi300x_is_known_and_an_unknown_gpu_names_how_to_describe_it(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["recipe", "match", "openai/gpt-oss-120b", "--gpu", "mi300x:8", "--json"]) == 0
    capsys.readouterr()
    code = run(["recipe", "match", "openai/gpt-oss-120b", "--gpu", "mi250x:8", "--json"])
    error = json.loads(capsys.readouterr().out)
    assert code == 2
    hint = str(error.get("hint"))
    assert "--gpu-memory" in hint and "--compute-capability" in hint
