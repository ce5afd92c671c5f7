"""Does ``check`` agree with the recipe databases? Every combination a database offers, checked.

For each shipped (or imported) recipe of a model servewise can read offline (a bundled card or
a local folder), ``check`` is asked about the recipe's own setup (its checkpoint, GPU and count,
strategy and nodes). A recipe that says it runs should get WILL START; a WILL NOT START is a
disagreement, listed with the cause ``check`` names, so that each one is either fixed or
explained (the importer, the planner, or the recipe itself). ``scripts/recipe_agreement.py``
writes the table in ``docs/recipes.md``; the tests hold the count.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from servewise.check.compose import CheckRequest, run_check
from servewise.errors import ServewiseError
from servewise.recipes import Recipe, RecipeBook


@dataclass(frozen=True)
class Agreement:
    """``check``'s answer for one recipe's own setup."""

    recipe: str
    status: str
    will_start: bool
    cause: str
    """The first blocking finding's part and message (empty when it will start)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return {"recipe": self.recipe, "status": self.status, "will_start": self.will_start,
                "cause": self.cause}


def readable_offline(recipe: Recipe, load: Callable[[str], Any]) -> bool:
    """Whether the recipe's checkpoint is a model servewise can read without the network."""
    try:
        load(recipe.checkpoint)
    except ServewiseError:
        return False
    return True


def check_recipe(recipe: Recipe, book: RecipeBook) -> Agreement:
    """``check`` on the recipe's own model, GPU, count, strategy and nodes."""
    from servewise.knowledge.gpus import parse_gpu_spec

    spec = parse_gpu_spec(f"{recipe.match.hw}:{recipe.match.gpus}")
    request = CheckRequest(model=recipe.checkpoint, gpu=spec, engine=recipe.engine,
                           strategy=recipe.match.strategy, nodes=recipe.match.nodes,
                           command_format=recipe.engine)
    try:
        report = run_check(request, book=book)
    except ServewiseError as error:
        return Agreement(recipe.id, recipe.status, False, f"error: {error.message}")
    blocking = [finding for finding in report.findings if finding.blocks]
    cause = ""
    if blocking:
        # the engine's own words when the finding quotes them: they are what a user of the
        # database meets when the recipe is run
        first = blocking[0]
        text = first.message if first.quote is None else f"will not start: {first.quote}"
        cause = f"{first.part}: {text}"
    return Agreement(recipe.id, recipe.status, report.will_start, cause)


def agreement(book: RecipeBook, *, prefix: str = "vllm-recipes/",
              models: Iterable[str] | None = None,
              load: Callable[[str], Any] | None = None) -> list[Agreement]:
    """``check`` on every recipe of ``book`` whose id starts with ``prefix`` (and one of
    ``models``' ids after it, when given), that does not say it fails (``unsupported``), and
    whose checkpoint can be read offline."""
    if load is None:
        from servewise.plan.resolve import load_model

        load = load_model
    readable: dict[str, bool] = {}
    results = []
    wanted = tuple(f"{prefix}{model.lower()}/" for model in models) if models else (prefix,)
    for recipe in _offered(book.all(), wanted):
        if recipe.checkpoint not in readable:
            readable[recipe.checkpoint] = readable_offline(recipe, load)
        if readable[recipe.checkpoint]:
            results.append(check_recipe(recipe, book))
    return results


def _offered(recipes: Iterable[Recipe], prefixes: tuple[str, ...]) -> list[Recipe]:
    return [recipe for recipe in recipes if recipe.id.startswith(prefixes)
            and recipe.status != "unsupported" and not recipe.pools]


__all__ = ["Agreement", "agreement", "check_recipe", "readable_offline"]
