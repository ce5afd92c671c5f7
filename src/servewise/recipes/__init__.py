"""Recipes as data: launches that worked, where they came from, and how to run them.

::

    from servewise.recipes import load_recipes, render

    book = load_recipes()
    best = book.match(model="deepseek-ai/DeepSeek-V4-Flash-0731", hw="h200:8",
                      engine="sglang")[0]
    best.recipe.argv   # ('--trust-remote-code', '--tp', '4', …, '--mem-fraction-static', '0.88')
    best.reason               # 'verified; checkpoint …; GPU h200; 4 GPU(s) per node of your 8; …'
    render(best.recipe, format="docker", image="lmsysorg/sglang:v0.5.16").shell

Model rules (flags a model needs or must not have) and GPU pitfalls are in
:mod:`servewise.knowledge.model_rules`; importing vLLM's recipe database is
:func:`servewise.recipes.vllm_import.import_vllm_recipes`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from servewise.recipes.book import RecipeBook, RecipeMatch, parse_hw
from servewise.recipes.library import load_recipes, user_recipe_dir
from servewise.recipes.load import parse_recipe_file
from servewise.recipes.model import BenchmarkRun, Match, Provenance, Recipe, Status
from servewise.recipes.validate import Problem, RecipeDataError

if TYPE_CHECKING:
    from servewise.knowledge.model_rules import (
        ModelRule,
        Pitfall,
        RuleViolation,
        check_rules,
        model_rules_for,
        pitfalls_for,
    )
    from servewise.recipes.renderers import FORMATS, Launch, Rendered, render

_LAZY = {
    "FORMATS": "renderers", "Launch": "renderers", "Rendered": "renderers",
    "render": "renderers",
    "ModelRule": "rules", "Pitfall": "rules", "RuleViolation": "rules",
    "check_rules": "rules", "model_rules_for": "rules", "pitfalls_for": "rules",
}


def __getattr__(name: str) -> Any:
    """Renderers and rules load on first use: matching alone does not need them."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    package = "knowledge.model_rules" if module == "rules" else f"recipes.{module}"
    return getattr(importlib.import_module(f"servewise.{package}"), name)


__all__ = [
    "FORMATS", "BenchmarkRun", "Launch", "Match", "ModelRule", "Pitfall", "Problem",
    "Provenance", "Recipe", "RecipeBook", "RecipeDataError", "RecipeMatch", "Rendered",
    "RuleViolation", "Status", "check_rules", "load_recipes", "model_rules_for",
    "parse_hw", "parse_recipe_file", "pitfalls_for", "render", "user_recipe_dir",
]
