"""Recipe files: the shipped ones load; a bad file reports every problem by file and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from servewise.knowledge.gpus import load_gpu_catalog
from servewise.recipes import RecipeDataError, load_recipes, parse_recipe_file
from servewise.recipes.model import image_pinned

GOOD = """\
schema: 1
model: acme/Tiny-1B
engine: vllm
recipes:
  - id: vllm/tiny/h200
    match: {quant: bf16, hw: h200, gpus: 1, strategy: tp}
    image: vllm/vllm-openai:v0.20.0
    min_version: "0.20.0"
    argv: [--max-model-len, "4096"]
    status: verified
    provenance: {who: a test, source: "measured: a unit test", date: 2026-08-01}
"""


def parse(text: str) -> list:  # type: ignore[type-arg]
    return parse_recipe_file(text, "test.yaml", load_gpu_catalog())


def test_shipped_recipes_load_and_have_provenance() -> None:
    book = load_recipes()
    assert len(book) > 50
    engines = {recipe.engine for recipe in book}
    assert engines == {"vllm", "sglang"}
    for recipe in book:
        assert recipe.provenance.source and recipe.provenance.who
        assert recipe.argv and recipe.argv[0].startswith("--")
        assert recipe.image is None or image_pinned(recipe.image) or recipe.image.count(":")


def test_a_good_file_parses_with_dates_and_defaults() -> None:
    (recipe,) = parse(GOOD)
    assert recipe.match.model == "acme/Tiny-1B"
    assert recipe.match.nodes == 1
    assert recipe.provenance.date == "2026-08-01"
    assert recipe.image_pinned


def test_every_problem_is_reported_with_its_field_path() -> None:
    text = """\
schema: 1
model: acme/Tiny-1B
engine: vllm
recipes:
  - id: vllm/tiny/a
    match: {quant: bf16, hw: not-a-gpu, gpus: 0}
    image: vllm/vllm-openai
    min_version: 0.20
    argv: [--max-model-len, 4096, --model, x]
    env: {"1BAD": "x", GOOD: 1}
    status: works
    provenance: {who: me, source: "somewhere"}
    colour: blue
  - id: vllm/tiny/a
    match: {hw: h200, gpus: 1}
    argv: [--x]
    status: verified
    provenance: {who: me, source: "measured: ok"}
    benchmarks:
      - source: "measured: ok"
        results:
          - workload: {dataset: random, osl: 8}
            ttft_ms: {median: 3}
"""
    with pytest.raises(RecipeDataError) as caught:
        parse(text)
    paths = {(problem.path, problem.message.split(" (")[0]) for problem in caught.value.problems}
    expected = {
        "recipes[0].match.hw", "recipes[0].match.gpus", "recipes[0].image",
        "recipes[0].min_version", "recipes[0].argv[1]", "recipes[0].env.1BAD",
        "recipes[0].env.GOOD", "recipes[0].status", "recipes[0].provenance.source",
        "recipes[0].colour", "recipes[1].id", "recipes[1].benchmarks[0].results[0].workload",
        "recipes[1].benchmarks[0].results[0].ttft_ms.median",
    }
    found = {path for path, _ in paths}
    assert expected <= found, expected - found
    assert all(problem.file == "test.yaml" for problem in caught.value.problems)
    assert "test.yaml: recipes[0].match.hw" in caught.value.message
    data = caught.value.to_dict()
    assert len(data["problems"]) == len(caught.value.problems) >= len(expected)


@pytest.mark.parametrize(("text", "path"), [
    ("schema: 1\nmodel: acme/x\nengine: vllm\nrecipes: [", "(file)"),
    ("- a list", "(file)"),
    ("schema: 2\nmodel: acme/x\nengine: tgi\nrecipes: []", "schema"),
    ("schema: 1\nmodel: nothing\nengine: vllm\nrecipes: []", "model"),
])
def test_broken_files(text: str, path: str) -> None:
    with pytest.raises(RecipeDataError) as caught:
        parse(text)
    assert caught.value.problems[0].path == path


def test_user_folder_adds_and_overrides(user_dir: Path) -> None:
    folder = user_dir / "recipes"
    folder.mkdir(parents=True)
    shipped_count = len(load_recipes())
    shipped = load_recipes().require("vllm/deepseek-v4-flash-0731-nvfp4/rtx-pro-6000-max-q/tp2")
    override = GOOD.replace("acme/Tiny-1B", "deepseek-ai/DeepSeek-V4-Flash").replace(
        "vllm/tiny/h200", shipped.id).replace("status: verified", "status: unsupported")
    (folder / "mine.yaml").write_text(override + GOOD.split("recipes:\n")[1]
                                      .replace("vllm/tiny/h200", "vllm/mine/new"), "utf-8")
    book = load_recipes(user_dir)
    assert book.require(shipped.id).status == "unsupported"
    assert book.require(shipped.id).user
    assert book.require("vllm/mine/new").match.model == "deepseek-ai/DeepSeek-V4-Flash"
    assert len(book) == shipped_count + 1


def test_a_broken_user_file_names_itself(user_dir: Path) -> None:
    folder = user_dir / "recipes"
    folder.mkdir(parents=True)
    (folder / "bad.yaml").write_text(GOOD.replace("gpus: 1", "gpus: two"), "utf-8")
    with pytest.raises(RecipeDataError) as caught:
        load_recipes(user_dir)
    (problem,) = caught.value.problems
    assert problem.file.endswith("bad.yaml")
    assert problem.path == "recipes[0].match.gpus"


def test_unknown_recipe_id_suggests_close_ones() -> None:
    from servewise.errors import UsageError

    with pytest.raises(UsageError) as caught:
        load_recipes().require("vllm/deepseek-v4-flash-0731-nvfp4/rtx-pro-6000-max-q")
    assert caught.value.fields["close_matches"]


@pytest.mark.parametrize(("ref", "pinned"), [
    ("vllm/vllm-openai:v0.20.0", True),
    ("vllm/vllm-openai:nightly-6f91edf96d3f3272945809c04702380053bff4de", True),
    ("vllm/vllm-openai:nightly", False),
    ("vllm/vllm-openai:latest", False),
    ("vllm/vllm-openai", False),
    ("lmsysorg/sglang@sha256:" + "a" * 64, True),
    ("registry.example.com:5000/team/vllm:v1", True),
    ("Bad Image", False),
])
def test_image_pinning(ref: str, pinned: bool) -> None:
    assert image_pinned(ref) is pinned


def test_flags_are_read_through_the_shared_flag_table() -> None:
    recipe = load_recipes().require("vllm/deepseek-v4-flash-0731-nvfp4/rtx-pro-6000-max-q/tp2")
    settings = recipe.settings
    assert settings.tensor_parallel_size == 2
    assert settings.kv_cache_dtype == "fp8" and settings.block_size == 256
    assert settings.enforce_eager is True and settings.gpu_memory_utilization == 0.95
    assert settings.model == "MJPansa/DeepSeek-V4-Flash-0731-NVFP4"
    version = recipe.min_engine_version
    assert version is not None and not version.at_least("0.26.1")   # a dev build of 0.26.1rc1
    sglang = load_recipes().require("sglang/deepseek-v4-flash-0731/h200/fp4/balanced/single")
    assert sglang.settings.mem_fraction_static == 0.88
    assert sglang.settings.moe_runner_backend == "flashinfer_mxfp4"


def test_a_flag_value_of_the_wrong_kind_is_a_problem() -> None:
    with pytest.raises(RecipeDataError) as caught:
        parse(GOOD.replace('[--max-model-len, "4096"]', '[--max-model-len, "four"]'))
    (problem,) = caught.value.problems
    assert problem.path == "recipes[0].argv" and "--max-model-len" in problem.message


def test_the_checked_recipes_are_cached_and_a_bad_cache_is_rebuilt(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from servewise.recipes import library as load_module

    monkeypatch.setenv("SERVEWISE_CACHE_DIR", str(tmp_path / "cache"))
    load_module.shipped_index.cache_clear()
    first = load_recipes()
    (cache,) = (tmp_path / "cache").glob("recipes-*.pickle")
    load_module.shipped_index.cache_clear()
    assert load_recipes().all() == first.all()
    cache.write_bytes(b"not a pickle")
    load_module.shipped_index.cache_clear()
    assert load_recipes().all() == first.all()
    assert cache.read_bytes() != b"not a pickle"
    load_module.shipped_index.cache_clear()
