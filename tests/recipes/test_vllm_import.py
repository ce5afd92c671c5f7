"""Importing the real vllm-project/recipes files (read in shared/, never copied in)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from servewise.knowledge import argv as argv_tools
from servewise.recipes import RecipeDataError, load_recipes
from servewise.recipes.vllm_import import import_vllm_recipes

FLASH = "models/deepseek-ai/DeepSeek-V4-Flash.yaml"


def test_the_whole_clone_imports_lists_and_matches(vllm_recipes: Path, user_dir: Path) -> None:
    report = import_vllm_recipes(vllm_recipes, user_dir=user_dir)
    models = sorted((vllm_recipes / "models").glob("*/*.yaml"))
    assert len(models) == 173
    assert len(report.files_read) == 1 + 9 + 2 + len(models)
    counts = report.counts()
    assert report.exit_code == 0 and report.refused == [] and report.problems == []
    assert counts["imported"] + counts["out of scope"] == len(models)
    assert counts["imported"] >= 140
    assert len(report.written) == len(report.recipes) == counts["imported"]
    assert all(Path(path).is_file() for path in report.written)
    reasons = {item.why for item in report.skipped}
    assert any("a Google TPU" in why for why in reasons)
    assert any(why.startswith("no serving strategy for text generation") for why in reasons)
    book = load_recipes(user_dir)
    imported = [r for r in book if r.id.startswith("vllm-recipes/") and r.user]
    assert len(imported) == sum(report.recipes.values())
    assert any(r.match.nodes >= 2 and r.multinode in ("mp", "dp") for r in imported)
    assert any(r.pools and r.router for r in imported)
    assert all(r.derived for r in imported)
    found = book.match(model="deepseek-ai/DeepSeek-V4-Flash", hw="h200:8", engine="vllm")
    assert found and found[0].recipe.status == "verified" and found[0].recipe.user
    assert all(r.provenance.source.startswith("https://github.com/vllm-project/recipes/blob/")
               for r in imported)


def test_a_variant_is_offered_only_where_its_memory_fits(
        vllm_recipes: Path, user_dir: Path) -> None:
    import_vllm_recipes(vllm_recipes / "models/moonshotai/Kimi-K2-Instruct.yaml",
                        user_dir=user_dir)
    import_vllm_recipes(vllm_recipes / "models/deepseek-ai/DeepSeek-R1.yaml", user_dir=user_dir)
    book = load_recipes(user_dir)
    kimi = book.filter(model="moonshotai/Kimi-K2-Instruct", hw="h200")
    # 1,200 GB of FP8 weights do not fit one 8 x H200 node (1,128 GB): multi-node only
    assert kimi and all(r.match.nodes >= 2 for r in kimi if r.status == "verified")
    assert not book.match(model="moonshotai/Kimi-K2-Instruct", hw="h200:8", engine="vllm")
    two = book.match(model="moonshotai/Kimi-K2-Instruct", hw="h200:8", engine="vllm", nodes=2)
    assert two and two[0].recipe.status == "verified" and two[0].recipe.derived
    r1 = book.filter(model="deepseek-ai/DeepSeek-R1", hw="gb200")
    single = [r for r in r1 if r.match.nodes == 1 and not r.pools]
    # 805 GB of FP8 weights do not fit a 4 x GB200 tray (768 GB); the NVFP4 checkpoint does
    assert single and {r.match.quant for r in single} == {"nvfp4"}
    assert any(r.match.quant == "fp8" and r.match.nodes >= 2 for r in r1)


def test_multi_node_and_prefill_decode_recipes_render(vllm_recipes: Path,
                                                      user_dir: Path) -> None:
    from servewise.recipes import render

    import_vllm_recipes(vllm_recipes / "models/deepseek-ai/DeepSeek-R1.yaml", user_dir=user_dir)
    book = load_recipes(user_dir)
    dep = book.require("vllm-recipes/deepseek-ai/deepseek-r1/default/h200/multi_node_dep")
    assert dep.match.nodes == 2 and dep.multinode == "dp"
    commands = render(dep, "vllm").commands
    assert argv_tools.last_value(commands[0].argv, "--data-parallel-size") == "16"
    assert not argv_tools.has(commands[0].argv, "--data-parallel-start-rank")
    assert argv_tools.last_value(commands[1].argv, "--data-parallel-start-rank") == "8"
    tp = book.require("vllm-recipes/deepseek-ai/deepseek-r1/default/h200/multi_node_tp")
    head, worker = render(tp, "vllm").commands
    assert argv_tools.last_value(head.argv, "--tensor-parallel-size") == "16"
    assert argv_tools.last_value(worker.argv, "--node-rank") == "1"
    assert argv_tools.has(worker.argv, "--headless")
    pd = book.require("vllm-recipes/deepseek-ai/deepseek-r1/default/h200/pd_cluster")
    assert [pool.role for pool in pd.pools] == ["prefill", "decode"]
    text = render(pd, "vllm").shell
    assert "vllm-router" in text and "--vllm-pd-disaggregation" in text
    assert '"kv_role":"kv_producer"' in text and '"kv_role":"kv_consumer"' in text


def test_an_unknown_hardware_id_is_skipped_with_its_reason(
        vllm_recipes: Path, user_dir: Path) -> None:
    report = import_vllm_recipes(vllm_recipes / "models/inclusionAI/Ling-3.0-flash.yaml",
                                 user_dir=user_dir, dry_run=True)
    assert report.exit_code == 0 and report.written
    assert any(item.what == "hardware h20" and "taxonomy" in item.why
               for item in report.skipped)


def test_auto_and_split_length_values_are_read(vllm_recipes: Path, user_dir: Path) -> None:
    report = import_vllm_recipes(vllm_recipes / "models/XiaomiMiMo/MiMo-V2.5-Pro.yaml",
                                 user_dir=user_dir)
    assert report.exit_code == 0
    recipe = next(r for r in load_recipes(user_dir)
                  if r.id.startswith("vllm-recipes/xiaomimimo/mimo-v2.5-pro/"))
    assert argv_tools.last_value(recipe.argv, "--max-model-len") == "auto"
    assert recipe.settings.max_model_len == -1


def test_an_image_per_cuda_variant_is_kept(vllm_recipes: Path, user_dir: Path) -> None:
    import_vllm_recipes(vllm_recipes / "models/meta-models/Muse-Glimmer-30B.yaml",
                        user_dir=user_dir)
    recipe = next(r for r in load_recipes(user_dir)
                  if r.id.startswith("vllm-recipes/meta-models/") and r.images)
    assert recipe.image == "vllm/vllm-openai:muse-glimmer"
    assert recipe.image_for("13.0") == recipe.image_for("cu130") == recipe.image
    assert recipe.image_for("12.4") == recipe.image


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
    (FLASH, '  min_vllm_version: "0.20.0"', "  min_vllm_version: 0.20", "model.min_vllm_version"),
    ("models/Qwen/Qwen3-32B.yaml", "variants:\n  default:", "variants:\n  plain:", "variants"),
    ("models/openai/gpt-oss-20b.yaml", "meta:", "meta: [", "(file)"),
])
def test_a_bad_file_is_refused_by_file_and_field_and_the_rest_imported(
        vllm_recipes: Path, tmp_path: Path, user_dir: Path, file: str, old: str, new: str,
        path: str) -> None:
    clone = _copy(vllm_recipes, tmp_path)
    target = clone / file
    text = target.read_text("utf-8")
    assert old in text
    target.write_text(text.replace(old, new, 1), "utf-8")
    report = import_vllm_recipes(clone, user_dir=user_dir, dry_run=True)
    assert report.exit_code == 1 and report.refused == [file]
    assert any(p.file == str(target.resolve()) and p.path == path for p in report.problems)
    assert report.counts()["imported"] >= 140
    with pytest.raises(RecipeDataError) as caught:
        import_vllm_recipes(clone, user_dir=user_dir, strict=True)
    assert any(p.path == path for p in caught.value.problems)
    assert not (user_dir / "recipes").exists()
    assert caught.value.exit_code == 2


@pytest.mark.parametrize(("file", "old", "new", "path"), [
    ("strategies/single_node_tp.yaml", "deploy_type: single_node", "deploy_type: one_node",
     "deploy_type"),
    ("taxonomy.yaml", "    gpu_count: 8\n    vram_gb: 1128",
     "    gpu_count: eight\n    vram_gb: 1128", "hardware_profiles.h200.gpu_count"),
])
def test_a_bad_shared_file_refuses_the_whole_import(
        vllm_recipes: Path, tmp_path: Path, user_dir: Path, file: str, old: str, new: str,
        path: str) -> None:
    clone = _copy(vllm_recipes, tmp_path)
    target = clone / file
    target.write_text(target.read_text("utf-8").replace(old, new, 1), "utf-8")
    with pytest.raises(RecipeDataError) as caught:
        import_vllm_recipes(clone, user_dir=user_dir)
    assert any(p.file == str(target.resolve()) and p.path == path
               for p in caught.value.problems), caught.value.message
    assert not (user_dir / "recipes").exists()


def test_an_empty_model_file_is_refused_not_skipped_silently(
        vllm_recipes: Path, tmp_path: Path, user_dir: Path) -> None:
    clone = _copy(vllm_recipes, tmp_path)
    (clone / "models" / "openai" / "gpt-oss-20b.yaml").write_text("", "utf-8")
    report = import_vllm_recipes(clone / "models" / "openai", user_dir=user_dir)
    assert report.refused == ["models/openai/gpt-oss-20b.yaml"]
    assert report.problems[0].message == "is empty"
    assert report.outcomes["models/openai/gpt-oss-120b.yaml"] == "imported"


def test_earlier_imports_stay_when_a_later_one_fails(
        vllm_recipes: Path, tmp_path: Path, user_dir: Path) -> None:
    import_vllm_recipes(vllm_recipes / FLASH, user_dir=user_dir)
    before = {p.name: p.read_bytes() for p in (user_dir / "recipes").iterdir()}
    clone = _copy(vllm_recipes, tmp_path)
    (clone / "models" / "openai" / "gpt-oss-20b.yaml").write_text("meta: [", "utf-8")
    with pytest.raises(RecipeDataError):
        import_vllm_recipes(clone, user_dir=user_dir, strict=True)
    after = {p.name: p.read_bytes() for p in (user_dir / "recipes").iterdir()}
    assert after == before


def test_outside_a_clone(tmp_path: Path, user_dir: Path) -> None:
    (tmp_path / "x.yaml").write_text("a: 1", "utf-8")
    with pytest.raises(RecipeDataError, match="not inside a clone"):
        import_vllm_recipes(tmp_path / "x.yaml", user_dir=user_dir)
    with pytest.raises(RecipeDataError, match="no such file"):
        import_vllm_recipes(tmp_path / "missing", user_dir=user_dir)


def test_an_import_replaces_the_shipped_snapshot_model_by_model(
        vllm_recipes: Path, tmp_path: Path, user_dir: Path) -> None:
    shipped = load_recipes(user_dir)
    prefix = "vllm-recipes/openai/gpt-oss-120b/amd_fp8/"
    assert any(r.id.startswith(prefix) and not r.user for r in shipped)
    clone = _copy(vllm_recipes, tmp_path)
    model = clone / "models" / "openai" / "gpt-oss-120b.yaml"
    text = model.read_text("utf-8")
    start = text.index("  amd_fp8:\n")
    end = text.index("\ncompatible_strategies:")
    model.write_text(text[:start] + text[end + 1:], "utf-8")  # the variant removed upstream
    report = import_vllm_recipes(model, user_dir=user_dir)
    assert report.exit_code == 0
    book = load_recipes(user_dir)
    assert not any(r.id.startswith(prefix) for r in book)
    ours = [r for r in book if r.id.startswith("vllm-recipes/openai/gpt-oss-120b/")]
    assert ours and all(r.user and r.origin == "user import" for r in ours)
    other = [r for r in book if r.id.startswith("vllm-recipes/openai/gpt-oss-20b/")]
    assert other and all(r.origin == "vllm-recipes (shipped snapshot)" for r in other)
