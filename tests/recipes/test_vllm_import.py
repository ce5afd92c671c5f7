"""Importing the real vllm-project/recipes files (read in shared/, never copied in)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from servewise.recipes import RecipeDataError, load_recipes
from servewise.recipes import argv as argv_tools
from servewise.recipes.vllm_import import import_vllm_recipes

FLASH = "models/deepseek-ai/DeepSeek-V4-Flash.yaml"


def test_the_whole_clone_imports_lists_and_matches(vllm_recipes: Path, user_dir: Path) -> None:
    report = import_vllm_recipes(vllm_recipes, user_dir=user_dir)
    assert len(report.files_read) == 1 + 9 + 23
    assert len(report.written) == len(report.recipes) == 17
    assert sum(report.recipes.values()) > 200
    assert all(Path(path).is_file() for path in report.written)
    reasons = {item.why for item in report.skipped}
    assert "not in servewise's GPU catalog" in reasons            # AMD, TPU, Xeon, …
    book = load_recipes(user_dir)
    assert len(book) == len(load_recipes(user_dir / "none")) + sum(report.recipes.values())
    found = book.match(model="deepseek-ai/DeepSeek-V4-Flash", hw="h200:8", engine="vllm")
    assert found and found[0].recipe.status == "verified"
    assert all(r.provenance.source.startswith("https://github.com/vllm-project/recipes/blob/")
               for r in book if r.id.startswith("vllm-recipes/"))


def test_rtx_pro_6000_recipe_is_the_guide_s_verified_command(
        vllm_recipes: Path, user_dir: Path) -> None:
    import_vllm_recipes(vllm_recipes / FLASH, user_dir=user_dir)
    recipe = load_recipes(user_dir).require(
        "vllm-recipes/deepseek-ai/deepseek-v4-flash/default/rtx_pro_6000_8x/single_node_tep")
    # the guide's "RTX PRO 6000 8x" command (0731 checkpoint, DSpark): same flags, same values
    guide = ["--trust-remote-code", "--kv-cache-dtype", "fp8", "--block-size", "256",
             "--enable-expert-parallel", "--tensor-parallel-size", "8", "--moe-backend", "auto",
             "--attention_config.use_fp4_indexer_cache", "False", "--tokenizer-mode",
             "deepseek_v4", "--tool-call-parser", "deepseek_v4", "--enable-auto-tool-choice",
             "--reasoning-parser", "deepseek_v4", "--reasoning-config",
             '{"reasoning_parser":"deepseek_v4","reasoning_start_str":"","reasoning_end_str":""}',
             "--speculative-config",
             '{"method":"dspark","num_speculative_tokens":7,"draft_sample_method":"probabilistic"}']
    assert sorted(argv_tools.flags(recipe.argv), key=str) != []
    assert {(k, v) for k, v, _ in argv_tools.flags(recipe.argv)} == \
        {(k, v) for k, v, _ in argv_tools.flags(guide)}
    assert recipe.checkpoint == "deepseek-ai/DeepSeek-V4-Flash-0731"
    assert recipe.image == "vllm/vllm-openai:nightly" and not recipe.image_pinned
    assert recipe.match.hw == "rtx-pro-6000-blackwell-workstation" and recipe.match.gpus == 8
    assert recipe.status == "verified"
    assert recipe.min_version == "0.25.0"


def test_hopper_gets_its_override_and_unsupported_stays_unsupported(
        vllm_recipes: Path, user_dir: Path) -> None:
    import_vllm_recipes(vllm_recipes / FLASH, user_dir=user_dir)
    book = load_recipes(user_dir)
    tp = book.require("vllm-recipes/deepseek-ai/deepseek-v4-flash/fp8/h200/single_node_tp")
    assert argv_tools.has(tp.argv, "--no-enable-flashinfer-autotune")      # hopper override
    dep = book.require("vllm-recipes/deepseek-ai/deepseek-v4-flash/fp8/h200/single_node_dep")
    assert argv_tools.last_value(dep.argv, "--data-parallel-size") == "4"   # last one wins
    assert argv_tools.values(dep.argv, "--data-parallel-size") == ["4"]
    assert dep.match.gpus == 4


def test_a_strategy_file_alone_imports_nothing(vllm_recipes: Path, user_dir: Path) -> None:
    report = import_vllm_recipes(vllm_recipes / "strategies" / "single_node_tp.yaml",
                                 user_dir=user_dir)
    assert report.written == [] and not (user_dir / "recipes").exists()


def test_dry_run_writes_nothing(vllm_recipes: Path, user_dir: Path) -> None:
    report = import_vllm_recipes(vllm_recipes, user_dir=user_dir, dry_run=True)
    assert report.written and not (user_dir / "recipes").exists()


def _copy(vllm_recipes: Path, tmp_path: Path) -> Path:
    clone = tmp_path / "clone"
    shutil.copytree(vllm_recipes, clone)
    return clone


@pytest.mark.parametrize(("file", "old", "new", "path"), [
    (FLASH, "  default_mode: mtp", "  default_mode: eagle", "features.spec_decoding.default_mode"),
    (FLASH, "  - single_node_dep\n", "  - single_node_xyz\n", "compatible_strategies[2]"),
    (FLASH, "    mi300x: unsupported", "    mi300: unsupported", "meta.hardware.mi300"),
    (FLASH, '  min_vllm_version: "0.20.0"', "  min_vllm_version: 0.20", "model.min_vllm_version"),
    ("models/Qwen/Qwen3-32B.yaml", "variants:\n  default:", "variants:\n  plain:", "variants"),
    ("strategies/single_node_tp.yaml", "deploy_type: single_node", "deploy_type: one_node",
     "deploy_type"),
    ("taxonomy.yaml", "    gpu_count: 8\n    vram_gb: 1128",
     "    gpu_count: eight\n    vram_gb: 1128", "hardware_profiles.h200.gpu_count"),
    ("models/openai/gpt-oss-20b.yaml", "meta:", "meta: [", "(file)"),
])
def test_a_bad_file_is_refused_by_file_and_field_and_nothing_is_written(
        vllm_recipes: Path, tmp_path: Path, user_dir: Path, file: str, old: str, new: str,
        path: str) -> None:
    clone = _copy(vllm_recipes, tmp_path)
    target = clone / file
    text = target.read_text("utf-8")
    assert old in text
    target.write_text(text.replace(old, new, 1), "utf-8")
    with pytest.raises(RecipeDataError) as caught:
        import_vllm_recipes(clone, user_dir=user_dir)
    assert any(p.file == str(target.resolve()) and p.path == path
               for p in caught.value.problems), caught.value.message
    assert not (user_dir / "recipes").exists()
    assert caught.value.exit_code == 2


def test_earlier_imports_stay_when_a_later_one_fails(
        vllm_recipes: Path, tmp_path: Path, user_dir: Path) -> None:
    import_vllm_recipes(vllm_recipes / FLASH, user_dir=user_dir)
    before = {p.name: p.read_bytes() for p in (user_dir / "recipes").iterdir()}
    clone = _copy(vllm_recipes, tmp_path)
    (clone / "models" / "openai" / "gpt-oss-20b.yaml").write_text("meta: [", "utf-8")
    with pytest.raises(RecipeDataError):
        import_vllm_recipes(clone, user_dir=user_dir)
    after = {p.name: p.read_bytes() for p in (user_dir / "recipes").iterdir()}
    assert after == before


def test_outside_a_clone(tmp_path: Path, user_dir: Path) -> None:
    (tmp_path / "x.yaml").write_text("a: 1", "utf-8")
    with pytest.raises(RecipeDataError, match="not inside a clone"):
        import_vllm_recipes(tmp_path / "x.yaml", user_dir=user_dir)
    with pytest.raises(RecipeDataError, match="no such file"):
        import_vllm_recipes(tmp_path / "missing", user_dir=user_dir)
