"""Matching a model and GPUs to recipes: what fits, in which order, and why."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from servewise.errors import UsageError
from servewise.knowledge.gpus import Gpu, load_gpu_catalog, parse_gpu_spec
from servewise.recipes import RecipeBook, load_recipes, parse_hw, parse_recipe_file

FILE = """\
schema: 1
model: acme/Big-MoE
engine: sglang
aliases: [acme/Big-MoE-Instruct]
recipes:
  - id: a/estimated-8
    match: {quant: fp8, hw: h200, gpus: 8, strategy: balanced}
    argv: [--tp, "8"]
    status: estimated
    provenance: {who: t, source: "measured: t", engine_version: "0.5.20"}
  - id: a/verified-4-old
    match: {quant: fp8, hw: h200, gpus: 4, strategy: balanced}
    argv: [--tp, "4"]
    status: verified
    provenance: {who: t, source: "measured: t", engine_version: "0.5.9"}
  - id: a/verified-4-new
    match: {quant: fp8, hw: h200, gpus: 4, strategy: low-latency}
    argv: [--tp, "4"]
    status: verified
    provenance: {who: t, source: "measured: t", engine_version: "0.5.15"}
  - id: a/verified-8
    match: {quant: fp4, hw: h200, gpus: 8, strategy: balanced}
    argv: [--tp, "8"]
    status: verified
    provenance: {who: t, source: "measured: t", engine_version: "0.5.10"}
  - id: a/exact-weights
    match: {quant: fp8, hw: h200, gpus: 8, strategy: balanced}
    checkpoint: acme/Big-MoE-FP8
    argv: [--tp, "8"]
    status: in-progress
    provenance: {who: t, source: "measured: t"}
  - id: a/two-nodes
    match: {quant: fp8, hw: h200, gpus: 8, nodes: 2}
    argv: [--tp, "16"]
    status: verified
    provenance: {who: t, source: "measured: t"}
  - id: a/broken
    match: {quant: fp8, hw: h100-sxm, gpus: 8}
    argv: [--tp, "8"]
    status: unsupported
    provenance: {who: t, source: "measured: t"}
  - id: a/workstation
    match: {quant: fp8, hw: rtx-pro-6000-blackwell-workstation, gpus: 2}
    argv: [--tp, "2"]
    status: verified
    provenance: {who: t, source: "measured: t"}
"""


@pytest.fixture(scope="module")
def book() -> RecipeBook:
    catalog = load_gpu_catalog()
    return RecipeBook(parse_recipe_file(FILE, "match.yaml", catalog), catalog)


def ids(book: RecipeBook, **kwargs: object) -> list[str]:
    return [m.recipe.id for m in book.match(**kwargs)]  # type: ignore[arg-type]


def test_ranking_weights_then_status_then_gpus_used_then_version(book: RecipeBook) -> None:
    # recipes serving the named weights first; among them verified, more GPUs, newer engine
    assert ids(book, model="acme/Big-MoE", hw="h200:8") == [
        "a/verified-8", "a/verified-4-new", "a/verified-4-old", "a/estimated-8",
        "a/exact-weights"]


def test_the_exact_weights_come_first(book: RecipeBook) -> None:
    found = book.match(model="acme/Big-MoE-FP8", hw="h200:8")
    assert found[0].recipe.id == "a/exact-weights"
    assert found[0].model_match == "checkpoint"
    assert found[1].model_match == "near"
    assert "not the same weights" in found[1].reason


def test_names_aliases_and_local_folders(book: RecipeBook) -> None:
    assert ids(book, model="/models/Big-MoE", hw="h200:4") == ["a/verified-4-new",
                                                               "a/verified-4-old"]
    assert ids(book, model="ACME/big-moe-instruct", hw="h200:4")[0] == "a/verified-4-new"
    assert ids(book, model="acme/Other", hw="h200:8") == []


def test_filters(book: RecipeBook) -> None:
    assert ids(book, model="acme/Big-MoE", hw="h200:8", quant="FP4") == ["a/verified-8"]
    assert ids(book, model="acme/Big-MoE", hw="h200:8", strategy="low-latency") == [
        "a/verified-4-new"]
    assert ids(book, model="acme/Big-MoE", hw="h200:8", engine="vllm") == []
    assert ids(book, model="acme/Big-MoE", hw="h200:8", nodes=2) == ["a/two-nodes"]
    assert ids(book, model="acme/Big-MoE", hw="h200:2") == []
    assert ids(book, model="acme/Big-MoE", hw="b200:8") == []


def test_unsupported_is_kept_to_warn(book: RecipeBook) -> None:
    (found,) = book.match(model="acme/Big-MoE", hw="h100:8")
    assert found.recipe.status == "unsupported"
    assert "NOT to work" in found.reason


def test_same_chip_and_memory_matches(book: RecipeBook) -> None:
    (found,) = book.match(model="acme/Big-MoE", hw="RTX PRO 6000 Blackwell Max-Q:2")
    assert found.hw_match == "same-chip"
    assert "compute capability 12.0" in found.reason


def test_a_gpu_spec_works(book: RecipeBook) -> None:
    assert ids(book, model="acme/Big-MoE", hw=parse_gpu_spec("h200:4"))[0] == "a/verified-4-new"
    assert ids(book, model="acme/Big-MoE", hw=parse_gpu_spec("h200")) == []   # one GPU

    @dataclass
    class Spec:
        gpu: Gpu
        count: int

    assert ids(book, model="acme/Big-MoE", hw=Spec(load_gpu_catalog().find("h200"), 4))


@pytest.mark.parametrize("text", ["h200:0", "h200:x", "h200:-1"])
def test_bad_gpu_counts(text: str) -> None:
    with pytest.raises(UsageError):
        parse_hw(text, load_gpu_catalog())


def test_unknown_gpu(book: RecipeBook) -> None:
    with pytest.raises(UsageError, match="unknown GPU"):
        book.match(model="acme/Big-MoE", hw="h2000:8")


def test_the_seeds_match_from_the_shipped_book() -> None:
    book = load_recipes()
    (best, *_) = book.match(model="MJPansa/DeepSeek-V4-Flash-0731-NVFP4",
                            hw="rtx-pro-6000-max-q:2", engine="vllm")
    assert best.recipe.id == "vllm/deepseek-v4-flash-0731-nvfp4/rtx-pro-6000-max-q/tp2"
    assert best.model_match == "checkpoint" and best.hw_match == "exact"


def test_near_misses_say_what_to_change(book: RecipeBook) -> None:
    misses = dict((r.id, why) for r, why in book.near_misses(model="acme/Big-MoE", hw="h200:2"))
    assert misses["a/verified-8"] == "needs 8 GPUs per node, you have 2"
    assert misses["a/two-nodes"] == "runs on 2 node(s), not 1"
    assert misses["a/broken"] == "for h100-sxm, not h200"
    assert "a/workstation" in misses
    quant = dict((r.id, why) for r, why in book.near_misses(model="acme/Big-MoE",
                                                             hw="h200:8", quant="nvfp4"))
    assert quant["a/verified-8"] == "quant fp4, not nvfp4"
    assert book.near_misses(model="acme/Other", hw="h200:8") == []
