"""The engine and image-tag tables: entries validated, lookups, user additions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from servewise.knowledge import DataFileError
from servewise.knowledge._load import looks_like_source
from servewise.knowledge.engines import (
    ENGINE_FIELDS,
    TAG_FIELDS,
    load_engine_table,
    normalize_repository,
)
from support.knowledge import raw_entries

ENGINES = raw_entries("engines.toml", "engine")
TAGS = raw_entries("image_tags.toml", "tag")


@pytest.mark.parametrize("entry", ENGINES + TAGS, ids=lambda e: str(e.get("id")))
def test_every_entry_is_valid(entry: dict[str, Any]) -> None:
    assert set(entry) <= ENGINE_FIELDS | TAG_FIELDS
    sources = entry["source"] if isinstance(entry["source"], list) else [entry["source"]]
    assert sources and all(looks_like_source(s) for s in sources)


def test_tables_load_and_every_example_matches_its_own_convention() -> None:
    table = load_engine_table()
    assert {e.id for e in table.engines} == {"vllm", "sglang", "tensorrt-llm"}
    for convention in table.tags:
        for example in convention.examples:
            # shared conventions are checked for an engine with none of its own
            engine = "tensorrt-llm" if convention.engine == "any" else convention.engine
            found = table.tag(engine, example)
            assert found is not None and found[0].id == convention.id, example


def test_lookups() -> None:
    table = load_engine_table()
    assert table.for_package("sgl_kernel").id == "sglang"  # type: ignore[union-attr]  # PEP 503
    assert table.for_package("torch") is None
    assert table.for_package("SGLang-Kernel").id == "sglang"  # type: ignore[union-attr]
    assert table.for_image("docker.io/vllm/vllm-openai").id == "vllm"  # type: ignore[union-attr]
    assert table.for_image("index.docker.io/lmsysorg/sglang").id == "sglang"  # type: ignore[union-attr]
    assert table.for_image("ubuntu") is None
    assert normalize_repository("docker.io/library/ubuntu") == "ubuntu"
    assert normalize_repository("NVCR.io/nvidia/vllm") == "nvcr.io/nvidia/vllm"


def test_a_user_tag_convention_comes_first(tmp_path: Path) -> None:
    (tmp_path / "image_tags.toml").write_text(
        """
[[tag]]
id = "our-builds"
engine = "vllm"
pattern = '^ours-(?P<date>\\d{8})$'
kind = "nightly"
meaning = "our nightly rebuild"
examples = ["ours-20250729"]
""",
        encoding="utf-8",
    )
    table = load_engine_table(tmp_path)
    found = table.tag("vllm", "ours-20250729")
    assert found is not None and found[0].id == "our-builds"
    assert found[0].sources[0].startswith("file://")  # a user entry's source is its file


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ('pattern = "^x$"\nkind = "nightly"\nengine = "nope"', "engine"),
        ('pattern = "^x$"\nkind = "weekly"\nengine = "vllm"', "kind"),
        ('pattern = "^x(?P<bogus>y)$"\nkind = "nightly"\nengine = "vllm"', "pattern"),
        ('pattern = "^(x$"\nkind = "nightly"\nengine = "vllm"', "pattern"),
        ('pattern = "^x$"\nkind = "nightly"\nengine = "vllm"\nexamples = ["y"]', "examples"),
    ],
)
def test_bad_tag_entries_name_the_field(tmp_path: Path, body: str, field: str) -> None:
    (tmp_path / "image_tags.toml").write_text(
        f'[[tag]]\nid = "t"\nmeaning = "m"\n{body}\n', encoding="utf-8"
    )
    with pytest.raises(DataFileError) as caught:
        load_engine_table(tmp_path)
    assert caught.value.fields["field"] == field


def test_bad_engine_scheme(tmp_path: Path) -> None:
    (tmp_path / "engines.toml").write_text(
        '[[engine]]\nid = "vllm"\nversion_scheme = "calver"\n', encoding="utf-8"
    )
    with pytest.raises(DataFileError) as caught:
        load_engine_table(tmp_path)
    assert caught.value.fields["field"] == "version_scheme"
