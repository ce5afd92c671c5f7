"""Reading recipe files (YAML): the shipped ones and the user's folder.

One file per model and engine, shipped in ``servewise/knowledge/data/recipes/``; the
folder ``$SERVEWISE_DATA_DIR/recipes/`` (default ``~/.config/servewise/recipes/``) adds
files, and a user recipe whose ``id`` is a shipped one replaces it. A file::

    schema: 1
    model: deepseek-ai/DeepSeek-V4-Flash        # the model's Hugging Face id
    engine: vllm                                # vllm | sglang
    aliases: [MJPansa/DeepSeek-V4-Flash-0731-NVFP4]
    defaults: {image: …, min_version: …, status: …, provenance: {…}}   # optional
    recipes:
      - id: vllm/deepseek-v4-flash/…
        match: {variant: "0731", quant: nvfp4, hw: rtx-pro-6000-blackwell-max-q,
                gpus: 2, strategy: tp, nodes: 1}
        checkpoint: MJPansa/DeepSeek-V4-Flash-0731-NVFP4
        image: vllm/vllm-openai:nightly-6f91edf9…
        min_version: "0.26.1rc1.dev77"
        argv: [--tensor-parallel-size, "2", …]
        env: {NAME: value}
        status: verified
        provenance: {who: …, engine_version: …, date: 2026-08-01, source: …}
        benchmarks: [{engine_version: …, source: …, results: [{workload: {…}, ttft_ms: {…}}]}]

Every problem of a file is reported at once (:class:`RecipeDataError`), each with the
file and the field path.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import pickle
import sys
import tempfile
from collections.abc import Iterable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any, cast

import yaml

from servewise.errors import ServewiseError
from servewise.knowledge._load import user_data_dir
from servewise.knowledge.flags import from_argv
from servewise.knowledge.gpus import GpuCatalog, load_gpu_catalog
from servewise.recipes.book import RecipeBook
from servewise.recipes.model import (
    ENGINES,
    STATUSES,
    BenchmarkRun,
    Match,
    Provenance,
    Recipe,
    Status,
    image_parts,
)
from servewise.recipes.validate import Checker, Problem, RecipeDataError, short

SCHEMA = 1
"""The recipe file format's version."""

_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(text: str) -> Any:
    """``text`` parsed with libyaml's safe loader when PyYAML has it (about 8 times faster)."""
    return yaml.load(text, Loader=_LOADER)

SHIPPED_FOLDER = ("data", "recipes")
"""Where the shipped recipe files are, under ``servewise.knowledge``."""

USER_FOLDER = "recipes"
"""The recipe folder's name inside the user data folder."""

_FILE_KEYS = {"schema", "model", "engine", "aliases", "defaults", "recipes", "notes"}
_DEFAULT_KEYS = {"image", "min_version", "status", "provenance"}
_RECIPE_KEYS = {"id", "match", "checkpoint", "image", "min_version", "argv", "env", "status",
                "provenance", "benchmarks", "notes"}
_MATCH_KEYS = {"variant", "quant", "hw", "gpus", "strategy", "nodes"}
_PROVENANCE_KEYS = {"who", "engine_version", "date", "source", "notes"}
_RUN_KEYS = {"engine_version", "date", "source", "derived", "notes", "results", "accuracy"}
_RESULT_KEYS = {
    "workload", "completed", "failed", "errors", "duration_s", "ttft_ms", "tpot_ms", "itl_ms",
    "e2e_ms", "request_throughput_per_s", "output_tokens_per_s", "total_tokens_per_s", "gpus",
    "tokens_per_sec_per_gpu", "output_tokens_per_sec_per_gpu", "input_tokens", "output_tokens",
    "token_counts", "goodput", "load", "client", "warmup_requests", "prompts_off_length",
    "notes", "accuracy",
}
_LATENCY_KEYS = ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms")
_NUMBER_KEYS = ("duration_s", "request_throughput_per_s", "output_tokens_per_s",
                "total_tokens_per_s", "tokens_per_sec_per_gpu", "output_tokens_per_sec_per_gpu")
_WORKLOAD_KEYS = {"dataset", "isl", "osl", "max_concurrency", "request_rate", "burstiness",
                  "num_prompts", "length_distribution"}


def parse_recipe_file(
    text: str, file: str, catalog: GpuCatalog, *, user: bool = False
) -> list[Recipe]:
    """The recipes of one YAML file; every problem at once as :class:`RecipeDataError`."""
    check = Checker(file)
    try:
        document = load_yaml(text)
    except yaml.YAMLError as exc:
        check.problem("(file)", f"not valid YAML: {exc}")
        check.raise_if_any()
        raise AssertionError("unreachable") from exc
    top = check.mapping(document, "(file)")
    check.raise_if_any()
    assert top is not None
    check.unknown_keys(top, "", _FILE_KEYS)
    if top.get("schema") != SCHEMA:
        check.problem("schema", "unknown schema version", expected=str(SCHEMA),
                      found=short(top.get("schema")))
    model = check.string(top, "model", "")
    if model is not None and "/" not in model:
        check.problem("model", "must be a Hugging Face id (org/name)", found=short(model))
    engine = check.choice(top, "engine", "", ENGINES)
    aliases = check.strings(top, "aliases", "") or ()
    defaults: Mapping[str, Any] = {}
    if top.get("defaults") is not None:
        defaults = check.mapping(top["defaults"], "defaults") or {}
        check.unknown_keys(defaults, "defaults", _DEFAULT_KEYS)
    items = top.get("recipes")
    if not isinstance(items, list) or not items:
        check.problem("recipes", "must be a non-empty list of recipes",
                      found=type(items).__name__)
        items = []
    recipes = []
    seen: dict[str, str] = {}
    for index, item in enumerate(items):
        path = f"recipes[{index}]"
        data = check.mapping(item, path)
        if data is None:
            continue
        merged = {**{k: v for k, v in defaults.items() if k != "provenance"}, **data}
        if "provenance" in defaults and "provenance" in data:
            base = check.mapping(defaults["provenance"], "defaults.provenance") or {}
            own = check.mapping(data["provenance"], f"{path}.provenance") or {}
            merged["provenance"] = {**base, **own}
        elif "provenance" in defaults:
            merged["provenance"] = defaults["provenance"]
        ident = data.get("id")
        if isinstance(ident, str):
            if ident.strip() in seen:
                check.problem(f"{path}.id", f"duplicate id (also {seen[ident.strip()]})",
                              found=ident)
            seen[ident.strip()] = path
        recipe = _recipe(check, merged, path, model, engine, aliases, catalog, file, user)
        if recipe is not None:
            recipes.append(recipe)
    check.raise_if_any()
    return recipes


def _recipe(
    check: Checker, data: Mapping[str, Any], path: str, model: str | None, engine: str | None,
    aliases: tuple[str, ...], catalog: GpuCatalog, file: str, user: bool,
) -> Recipe | None:
    before = len(check.problems)
    check.unknown_keys(data, path, _RECIPE_KEYS)
    ident = check.string(data, "id", path)
    match = _match(check, data.get("match"), f"{path}.match", model, catalog)
    checkpoint = check.string(data, "checkpoint", path, required=False) or model
    image = check.string(data, "image", path, required=False)
    if image is not None:
        parts = image_parts(image)
        if parts is None:
            check.problem(f"{path}.image", "not an image reference",
                          expected="name:tag or name@sha256:…", found=short(image))
        elif parts[1] is None and parts[2] is None:
            check.problem(f"{path}.image", "the image must be pinned by a tag or a digest",
                          expected="name:tag or name@sha256:…", found=short(image))
    min_version = check.version(data, "min_version", path)
    argv = check.strings(data, "argv", path, required=True)
    if argv is not None:
        _check_argv(check, argv, f"{path}.argv", engine, min_version)
    env = check.env(data, "env", path)
    status = check.choice(data, "status", path, STATUSES)
    provenance = _provenance(check, data.get("provenance"), f"{path}.provenance")
    runs = _benchmarks(check, data.get("benchmarks"), f"{path}.benchmarks")
    notes = check.string(data, "notes", path, required=False) or ""
    if len(check.problems) > before:
        return None
    assert ident and match and checkpoint and argv is not None and status and provenance
    assert engine is not None
    return Recipe(
        id=ident, engine=engine, match=match, checkpoint=checkpoint, argv=argv,
        status=cast(Status, status), provenance=provenance, file=file, min_version=min_version,
        image=image, env=env, benchmarks=runs, aliases=aliases, notes=notes, user=user,
    )


def _check_argv(
    check: Checker, argv: tuple[str, ...], path: str, engine: str | None, version: str | None
) -> None:
    if argv and not argv[0].startswith("-"):
        check.problem(f"{path}[0]", "flags only: the model is the recipe's checkpoint",
                      expected="a flag such as --tensor-parallel-size", found=short(argv[0]))
    model_flags = {"vllm": ("--model",), "sglang": ("--model-path", "--model")}
    for index, item in enumerate(argv):
        if item in model_flags.get(engine or "", ()):
            check.problem(f"{path}[{index}]", "the model goes in `checkpoint`, not in argv",
                          found=item)
        if "{{" in item:
            check.problem(f"{path}[{index}]", "placeholders are not expanded in recipes",
                          found=short(item))
    if engine is None or check.problems:
        return
    try:  # the shared flag table reads every flag it knows: a wrong value is an error
        from_argv(engine, argv, version)
    except ServewiseError as exc:
        check.problem(path, exc.message, found=str(exc.fields.get("flag") or ""))


def _match(
    check: Checker, value: Any, path: str, model: str | None, catalog: GpuCatalog
) -> Match | None:
    if value is None:
        check.problem(path, "missing required field", expected="variant, quant, hw, gpus, …")
        return None
    data = check.mapping(value, path)
    if data is None:
        return None
    before = len(check.problems)
    check.unknown_keys(data, path, _MATCH_KEYS)
    hw = check.string(data, "hw", path)
    gpu_id = None
    if hw is not None:
        gpu = catalog.get(hw)
        if gpu is None:
            check.problem(f"{path}.hw", "not a GPU of the catalog",
                          expected="an id or alias of `servewise gpus`", found=short(hw))
        else:
            gpu_id = gpu.id
    gpus = check.positive_int(data, "gpus", path)
    nodes = check.positive_int(data, "nodes", path, default=1)
    variant = _token(check, data, "variant", path)
    quant = _token(check, data, "quant", path)
    strategy = _token(check, data, "strategy", path)
    if len(check.problems) > before or model is None:
        return None
    assert gpu_id is not None and gpus is not None and nodes is not None
    return Match(model=model, hw=gpu_id, gpus=gpus, nodes=nodes, variant=variant,
                 quant=quant.lower() if quant else None, strategy=strategy)


def _token(check: Checker, data: Mapping[str, Any], key: str, path: str) -> str | None:
    value = data.get(key)
    if isinstance(value, int | float) and not isinstance(value, bool):
        check.problem(f"{path}.{key}", "must be a quoted string", found=short(value))
        return None
    return check.string(data, key, path, required=False)


def _provenance(check: Checker, value: Any, path: str) -> Provenance | None:
    if value is None:
        check.problem(path, "missing required field", expected="who, source, engine_version, date")
        return None
    data = check.mapping(value, path)
    if data is None:
        return None
    before = len(check.problems)
    check.unknown_keys(data, path, _PROVENANCE_KEYS)
    who = check.string(data, "who", path)
    source = check.source(data, "source", path)
    engine_version = check.string(data, "engine_version", path, required=False)
    date = check.date(data, "date", path)
    notes = check.string(data, "notes", path, required=False) or ""
    if len(check.problems) > before:
        return None
    assert who and source
    return Provenance(source=source, who=who, engine_version=engine_version, date=date,
                      notes=notes)


def _benchmarks(check: Checker, value: Any, path: str) -> tuple[BenchmarkRun, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        check.problem(path, "must be a list of benchmark runs", found=type(value).__name__)
        return ()
    runs = []
    for index, item in enumerate(value):
        where = f"{path}[{index}]"
        data = check.mapping(item, where)
        if data is None:
            continue
        before = len(check.problems)
        check.unknown_keys(data, where, _RUN_KEYS)
        source = check.source(data, "source", where)
        engine_version = check.string(data, "engine_version", where, required=False)
        date = check.date(data, "date", where)
        derived = check.strings(data, "derived", where) or ()
        notes = check.string(data, "notes", where, required=False) or ""
        accuracy = _accuracy(check, data.get("accuracy"), f"{where}.accuracy")
        results = data.get("results")
        if not isinstance(results, list) or not results:
            check.problem(f"{where}.results", "must be a non-empty list of results",
                          found=type(results).__name__)
            results = []
        for number, result in enumerate(results):
            _result(check, result, f"{where}.results[{number}]")
        if len(check.problems) == before:
            assert source is not None
            runs.append(BenchmarkRun(source=source, engine_version=engine_version,
                                     results=tuple(results), date=date, derived=derived,
                                     notes=notes, accuracy=accuracy))
    return tuple(runs)


def _accuracy(check: Checker, value: Any, path: str) -> dict[str, float]:
    if value is None:
        return {}
    data = check.mapping(value, path)
    if data is None:
        return {}
    scores = {}
    for key, number in data.items():
        if not _number(number):
            check.problem(f"{path}.{key}", "must be a number ≥ 0", found=short(number))
        else:
            scores[key] = float(number)
    return scores


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value >= 0


def _result(check: Checker, value: Any, path: str) -> None:
    data = check.mapping(value, path)
    if data is None:
        return
    check.unknown_keys(data, path, _RESULT_KEYS)
    workload = check.mapping(data.get("workload"), f"{path}.workload")
    if workload is not None:
        check.unknown_keys(workload, f"{path}.workload", _WORKLOAD_KEYS)
        check.string(workload, "dataset", f"{path}.workload")
        check.positive_int(workload, "osl", f"{path}.workload")
        if workload.get("isl") is not None:
            check.positive_int(workload, "isl", f"{path}.workload")
        if "max_concurrency" not in workload and "request_rate" not in workload:
            check.problem(f"{path}.workload", "names no load",
                          expected="max_concurrency or request_rate")
        elif "max_concurrency" in workload:
            check.positive_int(workload, "max_concurrency", f"{path}.workload")
    for key in _LATENCY_KEYS:
        if key not in data:
            continue
        stats = check.mapping(data[key], f"{path}.{key}")
        if stats is None:
            continue
        for stat, number in stats.items():
            if not (stat in ("mean", "max", "min", "std") or _is_percentile(stat)):
                check.problem(f"{path}.{key}.{stat}", "unknown statistic",
                              expected="mean, p50, p90, p99, …")
            elif number is not None and not _number(number):
                check.problem(f"{path}.{key}.{stat}", "must be a number ≥ 0",
                              found=short(number))
    for key in _NUMBER_KEYS:
        if key in data and data[key] is not None and not _number(data[key]):
            check.problem(f"{path}.{key}", "must be a number ≥ 0", found=short(data[key]))
    if "tokens_per_sec_per_gpu" not in data and "output_tokens_per_sec_per_gpu" not in data \
            and "ttft_ms" not in data:
        check.problem(path, "has no measurement",
                      expected="ttft_ms, tokens_per_sec_per_gpu or output_tokens_per_sec_per_gpu")


def _is_percentile(stat: str) -> bool:
    return stat.startswith("p") and stat[1:].replace(".", "", 1).isdigit()


def _shipped_files() -> list[tuple[str, str]]:
    folder = resources.files("servewise.knowledge").joinpath(*SHIPPED_FOLDER)
    files = []
    for entry in sorted(folder.iterdir(), key=lambda item: item.name):
        if entry.name.endswith((".yaml", ".yml")):
            files.append((f"servewise/knowledge/data/recipes/{entry.name}",
                          entry.read_text("utf-8")))
    return files


def _cache_path(files: list[tuple[str, str]]) -> Path:
    """Where the checked shipped recipes are kept: named by a digest of everything they
    were built from (the recipe files, the GPU catalog, the flag table, the versions)."""
    from servewise import __version__
    from servewise.store import default_path

    digest = hashlib.sha256(f"{__version__}\0{sys.version}\0{SCHEMA}".encode())
    data = resources.files("servewise.knowledge").joinpath("data")
    for name in ("gpus.toml", "engine_flags.toml"):
        digest.update(b"\0" + data.joinpath(name).read_bytes())
    for file, text in files:
        digest.update(f"\0{file}\0{text}".encode())
    return default_path().parent / f"recipes-{digest.hexdigest()[:20]}.pickle"


@functools.cache
def _shipped_recipes() -> tuple[Recipe, ...]:
    """The shipped recipes, checked once and then read from the cache while nothing changed."""
    files = _shipped_files()
    cache = _cache_path(files)
    with contextlib.suppress(OSError, pickle.UnpicklingError, EOFError, AttributeError,
                             TypeError, ValueError):
        cached = pickle.loads(cache.read_bytes())
        if isinstance(cached, tuple) and all(isinstance(r, Recipe) for r in cached):
            return cached
    catalog = load_gpu_catalog()
    recipes: list[Recipe] = []
    problems: list[Problem] = []
    for file, text in files:
        try:
            recipes.extend(parse_recipe_file(text, file, catalog))
        except RecipeDataError as exc:
            problems.extend(exc.problems)
    if problems:
        raise RecipeDataError(problems)
    with contextlib.suppress(OSError):  # a read-only cache folder: check every time
        cache.parent.mkdir(parents=True, exist_ok=True)
        handle, temp = tempfile.mkstemp(prefix=".recipes-", dir=cache.parent)
        with os.fdopen(handle, "wb") as stream:
            stream.write(pickle.dumps(tuple(recipes), protocol=pickle.HIGHEST_PROTOCOL))
        os.replace(temp, cache)
    return tuple(recipes)


def user_recipe_dir(user_dir: Path | None = None) -> Path:
    """The user's recipe folder: ``recipes/`` in the user data folder."""
    return (user_data_dir() if user_dir is None else user_dir) / USER_FOLDER


def read_recipe_files(paths: Iterable[Path], catalog: GpuCatalog, *, user: bool) -> list[Recipe]:
    """The recipes of ``paths``; the problems of every file together in one error."""
    recipes: list[Recipe] = []
    problems: list[Problem] = []
    for path in paths:
        try:
            text = path.read_text("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            check = Checker(str(path))
            check.problem("(file)", f"cannot read: {exc}")
            problems.extend(check.problems)
            continue
        try:
            recipes.extend(parse_recipe_file(text, str(path), catalog, user=user))
        except RecipeDataError as exc:
            problems.extend(exc.problems)
    if problems:
        raise RecipeDataError(problems)
    return recipes


def load_recipes(user_dir: Path | None = None) -> RecipeBook:
    """The shipped recipes with the user folder's added (same id: the user's replaces it)."""
    shipped = _shipped_recipes()
    folder = user_recipe_dir(user_dir)
    paths = sorted(folder.glob("*.y*ml")) if folder.is_dir() else []
    if not paths:
        return RecipeBook(shipped)
    catalog = load_gpu_catalog(user_dir)
    extra = read_recipe_files(paths, catalog, user=True)
    seen: dict[str, str] = {}
    for recipe in extra:
        if recipe.id in seen:
            raise RecipeDataError([_duplicate(recipe, seen[recipe.id])])
        seen[recipe.id] = recipe.file
    by_id = {recipe.id: recipe for recipe in extra}
    merged = [recipe for recipe in extra if recipe.id not in {r.id for r in shipped}]
    merged += [by_id.get(recipe.id, recipe) for recipe in shipped]
    return RecipeBook(merged)


def _duplicate(recipe: Recipe, other: str) -> Problem:
    return Problem(recipe.file, "recipes[].id", f"duplicate id (also in {other})",
                   found=recipe.id)
