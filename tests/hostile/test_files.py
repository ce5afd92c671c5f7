"""Hostile files: alias bombs, /dev/zero links, FIFOs, absurd configs, links out of a clone.

Each case runs in a fresh interpreter under a memory cap and must end within the issue's
limits (see ``conftest.py``) with a clear error naming what was expected and found.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from servewise.errors import FormatError, SourceError
from servewise.formats.hfconfig import parse_config
from servewise.recipes.library import load_recipes
from servewise.recipes.validate import RecipeDataError
from servewise.recipes.vllm_import import convert_vllm_recipes
from support.configs import find_shared
from support.hostile import bounded, within_limits

BOMB = "\n".join(
    ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    + [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)])
"""A "billion laughs" YAML document: 9^10 strings once its aliases are expanded."""

GOOD = """\
schema: 1
model: acme/Tiny-{n}
engine: vllm
recipes:
  - id: vllm/tiny-{n}/h200
    match: {{quant: bf16, hw: h200, gpus: 1, strategy: tp}}
    image: vllm/vllm-openai:v0.20.0
    min_version: "0.20.0"
    argv: [--max-model-len, "4096"]
    status: verified
    provenance: {{who: a test, source: "measured: a unit test", date: 2026-08-01}}
"""


def user_recipes(tmp_path: Path) -> Path:
    folder = tmp_path / "user" / "recipes"
    folder.mkdir(parents=True)
    return folder


def test_an_alias_bomb_in_the_user_folder_is_refused_within_limits(tmp_path: Path) -> None:
    (user_recipes(tmp_path) / "bomb.yaml").write_text(BOMB)
    outcome = bounded("""
        from servewise.recipes.library import load_recipes
        from servewise.recipes.validate import RecipeDataError
        try:
            load_recipes()
        except RecipeDataError as error:
            print(error.problems[0])
    """)
    within_limits(outcome)
    assert "alias" in outcome.stdout and "bomb.yaml" in outcome.stdout


def test_an_alias_bomb_in_a_recipe_clone_is_refused(tmp_path: Path) -> None:
    clone = tmp_path / "recipes"
    (clone / "strategies").mkdir(parents=True)
    (clone / "taxonomy.yaml").write_text(BOMB)
    outcome = bounded(f"""
        from pathlib import Path
        from servewise.recipes.vllm_import import convert_vllm_recipes
        from servewise.recipes.validate import RecipeDataError
        try:
            convert_vllm_recipes(Path({str(clone)!r}))
        except RecipeDataError as error:
            print(error.problems[0])
    """)
    within_limits(outcome)
    assert "refused" in outcome.stdout and "nodes" in outcome.stdout


@pytest.mark.parametrize("kind", ["dev_zero", "fifo"])
def test_a_recipe_file_that_is_no_regular_file_is_refused(tmp_path: Path, kind: str) -> None:
    path = user_recipes(tmp_path) / "evil.yaml"
    if kind == "dev_zero":
        path.symlink_to("/dev/zero")
    else:
        os.mkfifo(path)  # no writer: an ordinary open would wait forever
    outcome = bounded("""
        from servewise.recipes.library import load_recipes
        from servewise.recipes.validate import RecipeDataError
        try:
            load_recipes()
        except RecipeDataError as error:
            print(error.problems[0])
    """)
    within_limits(outcome)
    assert "not a regular file" in outcome.stdout
    assert ("character device" if kind == "dev_zero" else "FIFO") in outcome.stdout


def test_a_config_json_linked_to_dev_zero_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").symlink_to("/dev/zero")
    outcome = bounded(f"""
        from servewise.errors import SourceError
        from servewise.plan.resolve import load_model
        try:
            load_model({str(folder)!r})
        except SourceError as error:
            print(error.message, error.fields["expected"])
    """)
    within_limits(outcome)
    assert "not a regular file" in outcome.stdout and "a regular file" in outcome.stdout


def test_a_fifo_shard_is_refused_not_waited_on(tmp_path: Path) -> None:
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(
        {"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4,
         "num_hidden_layers": 2}))
    os.mkfifo(folder / "model.safetensors")
    from servewise.sources.model_folder import read_folder

    with pytest.raises(SourceError, match="FIFO"):
        read_folder(folder)


@pytest.mark.parametrize("layers", [10**7, 10**8, -32])
def test_an_absurd_layer_count_is_a_clear_error(layers: int) -> None:
    config = {"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32,
              "num_hidden_layers": layers}
    outcome = bounded(f"""
        import json
        from servewise.errors import FormatError
        from servewise.formats.hfconfig import parse_config
        try:
            parse_config(json.dumps({config!r}).encode())
        except FormatError as error:
            print(error.expected, "|", error.found)
    """)
    within_limits(outcome)
    assert f"num_hidden_layers = {layers}" in outcome.stdout
    assert "num_hidden_layers from 0 to" in outcome.stdout


def test_deep_text_config_nesting_is_a_format_error_not_a_recursion_error() -> None:
    deep = '{"model_type": "llama", "text_config": ' * 100_000 + "{}" + "}" * 100_000
    with pytest.raises(FormatError, match="nested"):
        parse_config(deep.encode())
    shallow = '{"text_config": ' * 80 + '{"model_type": "llama"}' + "}" * 80
    with pytest.raises(FormatError, match="at most 64"):
        parse_config(shallow.encode())


def test_a_recipe_file_name_with_escape_sequences_is_shown_without_them(
        tmp_path: Path) -> None:
    (user_recipes(tmp_path) / "\x1b]0;pwned\x07\x1b[2Jx.yaml").write_text("schema: [")
    with pytest.raises(RecipeDataError) as info:
        load_recipes()
    assert "\x1b" not in str(info.value.problems[0]) and "x.yaml" in info.value.problems[0].file


def _vllm_clone(tmp_path: Path, outside: Path) -> Path:
    """The real clone's taxonomy and strategies (from shared/), and one model file that is a
    symbolic link to ``outside``."""
    shared = find_shared()
    source = shared / "data" / "recipes" / "vllm-project-recipes" if shared else None
    if source is None or not source.is_dir():
        pytest.skip("shared/data/recipes/vllm-project-recipes is not beside the checkout")
    clone = tmp_path / "clone"
    (clone / "models" / "acme").mkdir(parents=True)
    shutil.copy(source / "taxonomy.yaml", clone / "taxonomy.yaml")
    for folder in ("strategies", "kv_store"):
        if (source / folder).is_dir():
            shutil.copytree(source / folder, clone / folder)
    (clone / "models" / "acme" / "secret.yaml").symlink_to(outside)
    return clone


def test_a_link_leading_outside_a_clone_is_reported_and_refused_under_strict(
        tmp_path: Path) -> None:
    outside = tmp_path / "private.yaml"
    outside.write_text("meta: {}\n")
    clone = _vllm_clone(tmp_path, outside)
    report, _ = convert_vllm_recipes(clone)
    assert any("outside the clone" in item.why for item in report.skipped)
    assert all("secret.yaml" not in read for read in report.files_read)
    with pytest.raises(RecipeDataError, match="outside the clone"):
        convert_vllm_recipes(clone, strict=True)


@pytest.mark.hostile_heavy
def test_twenty_thousand_user_recipes_are_indexed_once(tmp_path: Path) -> None:
    folder = user_recipes(tmp_path)
    for n in range(20_000):
        (folder / f"r{n}.yaml").write_text(GOOD.format(n=n))
    (folder / "zz-broken.yaml").write_text("schema: [")
    first = bounded("""
        from servewise.recipes.library import load_recipes
        from servewise.recipes.validate import RecipeDataError
        try:
            load_recipes()
        except RecipeDataError as error:
            print(len(error.problems))
    """, timeout=300)
    assert first.returncode == 0 and first.stdout.strip() == "1", first.stderr[-2000:]
    again = bounded("""
        from servewise.recipes.library import load_recipes
        from servewise.recipes.validate import RecipeDataError
        try:
            load_recipes()
        except RecipeDataError as error:
            print(len(error.problems))
    """)
    within_limits(again)  # the folder did not change: nothing is parsed again
    assert again.stdout.strip() == "1" and again.seconds < first.seconds / 2


def test_the_layer_lists_are_bounded_even_for_a_config_built_in_code() -> None:
    from servewise.formats.hfconfig import HfConfig
    from servewise.plan.model_spec import model_spec

    text = {"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32,
            "num_hidden_layers": 10**8}
    spec = model_spec(HfConfig({"model_type": "llama"}, text))
    assert spec.layers == () and "expected 0 to 10000" in str(spec.unsupported_reason)
