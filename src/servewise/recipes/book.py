"""The recipe book: every recipe known, looked up by id, filtered, and matched to a setup.

:meth:`RecipeBook.match` answers "which recipe fits this model on these GPUs with this
engine?" with a ranked list of :class:`RecipeMatch`, each saying why it matched and
why it ranks where it does. Ranking, best first: the exact checkpoint over the model
family over a near name; then status (verified, in-progress, estimated, unsupported), a
recipe run end to end before a derived one; then the exact GPU over one with the same chip
and memory; then one engine before a prefill/decode cluster, and the strategy vLLM's site
recommends first; then the recipe that uses more of the GPUs you have; then the newer
engine version.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from packaging.version import Version

from servewise.errors import UsageError
from servewise.knowledge.gpus import Gpu, GpuCatalog, load_gpu_catalog, split_gpu_count
from servewise.recipes.model import STATUSES, Recipe


@dataclass(frozen=True)
class RecipeMatch:
    """A recipe that fits, with the reasons it fits and the key it was ranked by."""

    recipe: Recipe
    reasons: tuple[str, ...]
    rank_key: tuple[Any, ...] = field(compare=False)
    model_match: str = "model"
    """``checkpoint`` (the exact weights), ``model`` (the family id or an alias) or ``near``."""
    hw_match: str = "exact"
    """``exact`` (the same GPU) or ``same-chip`` (same compute capability and memory)."""

    @property
    def reason(self) -> str:
        """The reasons as one line."""
        return "; ".join(self.reasons)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields: the recipe's id, status and the reasons."""
        return {"id": self.recipe.id, "status": self.recipe.status,
                "model_match": self.model_match, "hw_match": self.hw_match,
                "reasons": list(self.reasons), "recipe": self.recipe.to_dict()}


def parse_hw(text: str, catalog: GpuCatalog) -> tuple[Gpu, int | None]:
    """``NAME[:COUNT]`` → the catalog GPU and the count (None when not given)."""
    name, count = split_gpu_count(text)
    return catalog.find(name), count if ":" in text else None


def _names(text: str) -> tuple[str, str]:
    lowered = text.strip().rstrip("/").lower()
    return lowered, lowered.rsplit("/", 1)[-1]


def model_match(recipe: Recipe, query: str) -> str | None:
    """How ``query`` names the recipe's model: ``checkpoint``, ``model``, ``near`` or None.

    A Hugging Face id, its name without the organisation, or a local folder path all work;
    ``near`` is a longer name of the same family (``DeepSeek-V4-Flash-0731`` for
    ``deepseek-ai/DeepSeek-V4-Flash``).
    """
    full, base = _names(query)
    ck_full, ck_base = _names(recipe.checkpoint)
    if full == ck_full or base == ck_base:
        return "checkpoint"
    for name in (recipe.match.model, *recipe.aliases):
        name_full, name_base = _names(name)
        if full == name_full or base == name_base:
            return "model"
    family = _names(recipe.match.model)[1]
    if base.startswith(family + "-") or base.startswith(family + "_"):
        return "near"
    return None


_MODEL_ORDER = {"checkpoint": 0, "model": 1, "near": 2}

STRATEGY_ORDER = {"single_node_tp": 0, "single_node_tep": 1, "single_node_dep": 2,
                  "multi_node_tp": 3, "multi_node_tep": 4, "multi_node_dep": 5,
                  "multi_node_tp_pp": 6, "multi_node_tp_dp": 7, "pd_cluster": 9}
"""vLLM's recipe strategies in the order its site recommends them (``recommendStrategy`` in
``src/lib/command-synthesis.js``: tensor parallel first, the advanced layouts opted into;
prefill/decode last, since it is a cluster of engines). Other names rank first."""


def _version_key(recipe: Recipe) -> tuple[int, Version]:
    version = recipe.engine_version
    return (0, version.comparable) if version is not None else (1, Version("0"))


class RecipeBook:
    """All recipes: some in memory, the rest in indexes read model by model (user first)."""

    def __init__(self, recipes: Iterable[Recipe] = (), catalog: GpuCatalog | None = None, *,
                 indexes: Sequence[Any] = (),
                 keep: Callable[[Recipe], bool] | None = None) -> None:
        self._eager = tuple(recipes)
        self._indexes = tuple(indexes)
        self._keep = keep
        self._all: tuple[Recipe, ...] | None = None
        self._catalog = catalog

    def _merge(self, groups: Iterable[Iterable[Recipe]]) -> list[Recipe]:
        """The recipes of ``groups`` in order, the first of each id kept."""
        seen: set[str] = set()
        out = []
        for group in groups:
            for recipe in group:
                if recipe.id in seen or (self._keep is not None and not self._keep(recipe)):
                    continue
                seen.add(recipe.id)
                out.append(recipe)
        return out

    @property
    def _recipes(self) -> tuple[Recipe, ...]:
        if self._all is None:
            self._all = tuple(self._merge([self._eager, *(i.all() for i in self._indexes)]))
        return self._all

    def candidates(self, model: str) -> list[Recipe]:
        """The recipes any name of ``model`` may match (without reading every index)."""
        if not self._indexes:
            return list(self._eager)
        return self._merge([self._eager, *(i.for_model(model) for i in self._indexes)])

    @property
    def catalog(self) -> GpuCatalog:
        """The GPU catalog used to read GPU names."""
        if self._catalog is None:
            self._catalog = load_gpu_catalog()
        return self._catalog

    def __len__(self) -> int:
        return len(self._recipes)

    def __iter__(self) -> Iterator[Recipe]:
        return iter(self._recipes)

    def all(self) -> tuple[Recipe, ...]:
        """Every recipe."""
        return self._recipes

    def get(self, ident: str) -> Recipe | None:
        """The recipe with this id, or None."""
        for recipe in self._eager:
            if recipe.id == ident:
                return recipe
        for index in self._indexes:
            found = index.get(ident)
            if found is not None and (self._keep is None or self._keep(found)):
                return found  # type: ignore[no-any-return]
        return None

    def require(self, ident: str) -> Recipe:
        """The recipe with this id; an unknown id is a :class:`UsageError` naming close ones."""
        recipe = self.get(ident)
        if recipe is not None:
            return recipe
        import difflib

        ids = [r.id for r in self._recipes]
        close = difflib.get_close_matches(ident, ids, n=5, cutoff=0.5)
        raise UsageError(
            f"no recipe {ident!r}" + (f"; did you mean {', '.join(close)}?" if close else ""),
            hint="`servewise recipe list` shows every recipe id", found=ident,
            close_matches=close,
        )

    def filter(
        self, *, model: str | None = None, engine: str | None = None, hw: str | None = None,
        status: str | None = None,
    ) -> list[Recipe]:
        """The recipes for a model (any name of it), engine, GPU and status (all optional)."""
        gpu = parse_hw(hw, self.catalog)[0] if hw else None
        found = []
        for recipe in (self.candidates(model) if model is not None else self._recipes):
            if model is not None and model_match(recipe, model) is None:
                continue
            if engine is not None and recipe.engine != engine:
                continue
            if gpu is not None and recipe.match.hw != gpu.id:
                continue
            if status is not None and recipe.status != status:
                continue
            found.append(recipe)
        return found

    def match(
        self, *, model: str, hw: str | Any, engine: str | None = None, quant: str | None = None,
        variant: str | None = None, strategy: str | None = None, nodes: int = 1,
    ) -> list[RecipeMatch]:
        """The recipes that fit, best first, each with its reasons.

        ``hw`` is ``NAME[:COUNT]`` (GPUs per node; no count: any) or a
        :class:`~servewise.knowledge.gpus.GpuSpec` (its ``gpu`` and ``count``). A recipe
        fits when the model is one of its names, the GPU is the same (or the same chip with
        the same memory), it needs no more GPUs per node than ``COUNT`` and as many nodes as
        ``nodes``, and ``engine``/``quant``/``variant``/``strategy``, when given, are its own.
        """
        gpu, count = self._resolve_hw(hw)
        found = []
        for recipe in self.candidates(model):
            fit = self._fit(recipe, model, gpu, count, engine, quant, variant, strategy, nodes)
            if isinstance(fit, RecipeMatch):
                found.append(fit)
        return sorted(found, key=lambda item: item.rank_key)

    def _resolve_hw(self, hw: str | Any) -> tuple[Gpu, int | None]:
        if isinstance(hw, str):
            return parse_hw(hw, self.catalog)
        gpu = getattr(hw, "gpu", None)
        count = getattr(hw, "count", None)
        if gpu is None:
            name = getattr(hw, "name", None)
            if not isinstance(name, str):
                raise UsageError("unknown GPU", hint="give NAME[:COUNT], e.g. h200:8")
            gpu = self.catalog.find(name)
        assert isinstance(gpu, Gpu)
        return gpu, count if isinstance(count, int) else None

    def near_misses(
        self, *, model: str, hw: str | Any, engine: str | None = None,
        quant: str | None = None, variant: str | None = None, strategy: str | None = None,
        nodes: int = 1,
    ) -> list[tuple[Recipe, str]]:
        """The recipes for this model that do not fit, each with what differs (the GPU, the
        GPU count, the nodes, the engine, …): what to change to use one of them."""
        gpu, count = self._resolve_hw(hw)
        misses = []
        for recipe in self.candidates(model):
            fit = self._fit(recipe, model, gpu, count, engine, quant, variant, strategy, nodes)
            if isinstance(fit, str):
                misses.append((recipe, fit))
        order = {status: index for index, status in enumerate(STATUSES)}
        return sorted(misses, key=lambda item: (order[item[0].status], item[0].id))

    def _fit(
        self, recipe: Recipe, model: str, gpu: Gpu, count: int | None, engine: str | None,
        quant: str | None, variant: str | None, strategy: str | None, nodes: int,
    ) -> RecipeMatch | str | None:
        """The match, or why this recipe of the model does not fit (None: another model)."""
        how = model_match(recipe, model)
        if how is None:
            return None
        if engine is not None and recipe.engine != engine:
            return f"for {recipe.engine}, not {engine}"
        for what, wanted, own in (("quant", quant, recipe.match.quant),
                                  ("variant", variant, recipe.match.variant),
                                  ("strategy", strategy, recipe.match.strategy)):
            if wanted is not None and (own is None or own.lower() != wanted.lower()):
                return f"{what} {own or 'unnamed'}, not {wanted}"
        if recipe.match.nodes != nodes:
            return f"runs on {recipe.match.nodes} node(s), not {nodes}"
        if recipe.match.hw != gpu.id:
            other = self.catalog.get(recipe.match.hw)
            if other is None or other.cc != gpu.cc or other.memory_bytes != gpu.memory_bytes:
                return f"for {recipe.match.hw}, not {gpu.id}"
        if count is not None and recipe.match.gpus > count:
            return f"needs {recipe.match.gpus} GPUs per node, you have {count}"
        reasons = [f"{recipe.status}" + (" hardware, command derived by servewise"
                                         if recipe.derived else "")]
        reasons.append({"checkpoint": f"checkpoint {recipe.checkpoint}",
                        "model": f"model {recipe.match.model}",
                        "near": f"same family as {recipe.match.model} (not the same weights)"}[how])
        if recipe.match.hw == gpu.id:
            hw_how = "exact"
            reasons.append(f"GPU {gpu.id}")
        else:
            other = self.catalog.find(recipe.match.hw)
            hw_how = "same-chip"
            reasons.append(f"recipe for {other.id}: same compute capability {gpu.cc} and "
                           f"memory as {gpu.id}")
        idle = (count - recipe.match.gpus) if count is not None else 0
        used = f"{recipe.match.gpus} GPU(s) per node"
        if count is not None:
            used += f" of your {count}"
        reasons.append(used + (f" on {nodes} nodes" if nodes > 1 else ""))
        version = recipe.provenance.engine_version or recipe.min_version
        if version:
            reasons.append(f"{recipe.engine} {version}")
        if recipe.status == "unsupported":
            reasons.append("known NOT to work: kept to warn you")
        key = (_MODEL_ORDER[how], STATUSES.index(recipe.status), recipe.derived,
               hw_how != "exact", bool(recipe.pools),
               STRATEGY_ORDER.get(recipe.match.strategy or "", 0), idle,
               _negate(_version_key(recipe)), _Desc(recipe.provenance.date or ""), recipe.id)
        return RecipeMatch(recipe=recipe, reasons=tuple(reasons), rank_key=key,
                           model_match=how, hw_match=hw_how)


class _Desc:
    """Wraps a value so that sorting puts larger values first."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __lt__(self, other: _Desc) -> bool:
        return bool(self.value > other.value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Desc) and bool(self.value == other.value)

    def __hash__(self) -> int:
        return hash(self.value)


def _negate(key: tuple[int, Version]) -> tuple[int, _Desc]:
    return key[0], _Desc(key[1])
