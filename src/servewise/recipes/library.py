"""Where recipes come from, read once and kept: the shipped files, the shipped snapshot of
vLLM's recipe database, and the user's folder.

* ``knowledge/data/recipes/*.yaml``: servewise's own recipes;
* ``knowledge/data/recipes/vllm-recipes.json.gz``: vLLM's recipe database converted by
  :func:`servewise.recipes.vllm_import.convert_vllm_recipes` (Apache-2.0, see the NOTICE
  beside it), so ``check`` and ``recipe match`` know it on a fresh install;
* ``$SERVEWISE_DATA_DIR/recipes/*.yaml|yml|json``: the user's recipes and imports. An
  import of vLLM's database (files ``vllm-recipes.*``) replaces the shipped snapshot for the
  models it covers (and an import of SGLang's cookbook its snapshot); any user recipe
  replaces a shipped one with the same id.

Reading thousands of recipes costs seconds, so each source is checked once and cached
(pickled under the cache folder, keyed by a digest of what it was built from: the files'
bytes or sizes and times, the GPU catalog, the flag table, servewise's version), grouped by
model: a lookup by model unpickles that model's group only.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import gzip
import hashlib
import json
import os
import pickle
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from servewise.errors import SourceError
from servewise.formats.redact import terminal_safe
from servewise.formats.yaml_limits import MAX_CHARS, YamlLimitError
from servewise.knowledge._load import user_data_dir
from servewise.knowledge.gpus import GpuCatalog, load_gpu_catalog
from servewise.recipes.book import RecipeBook
from servewise.recipes.load import (
    SCHEMA,
    USER_FOLDER,
    load_yaml,
    parse_recipe_document,
)
from servewise.recipes.model import BenchmarkRun, Match, Pool, Provenance, Recipe
from servewise.recipes.validate import Checker, Problem, RecipeDataError
from servewise.sources.bounded import read_regular

SHIPPED_FOLDER = ("data", "recipes")
"""Where the shipped recipe files are, under ``servewise.knowledge``."""
SNAPSHOT = "vllm-recipes.json.gz"
"""The shipped snapshot of vLLM's recipe database (converted recipe files, by name)."""
SUFFIXES = (".yaml", ".yml", ".json")
IMPORTED = ("vllm-recipes/", "sglang-cookbook/")
"""Id prefixes of the databases ``recipe import`` brings: an import replaces the shipped
snapshot of a database model by model."""


def names_of(recipe: Recipe) -> set[str]:
    """The lookup keys of a recipe: its model, checkpoint and aliases, whole and without the
    organisation, lower case."""
    keys = set()
    for name in (recipe.match.model, recipe.checkpoint, *recipe.aliases):
        lowered = name.strip().rstrip("/").lower()
        keys.add(lowered)
        keys.add(lowered.rsplit("/", 1)[-1])
    return keys


class RecipeIndex:
    """Recipes grouped by model, each group pickled until asked for."""

    def __init__(self, groups: Mapping[str, bytes], names: Mapping[str, tuple[str, ...]],
                 ids: Mapping[str, str]) -> None:
        self._groups = dict(groups)
        self._names = dict(names)
        self._ids = dict(ids)
        self._loaded: dict[str, tuple[Recipe, ...]] = {}

    @classmethod
    def build(cls, recipes: Iterable[Recipe]) -> RecipeIndex:
        """The index of ``recipes`` (grouped by their model's id)."""
        grouped: dict[str, list[Recipe]] = {}
        names: dict[str, set[str]] = {}
        ids: dict[str, str] = {}
        for recipe in recipes:
            group = recipe.match.model.lower()
            grouped.setdefault(group, []).append(recipe)
            ids[recipe.id] = group
            for key in names_of(recipe):
                names.setdefault(key, set()).add(group)
        return cls({group: pickle.dumps(tuple(items), protocol=pickle.HIGHEST_PROTOCOL)
                    for group, items in grouped.items()},
                   {key: tuple(sorted(groups)) for key, groups in names.items()}, ids)

    def __len__(self) -> int:
        return len(self._ids)

    def _group(self, group: str) -> tuple[Recipe, ...]:
        if group not in self._loaded:
            self._loaded[group] = pickle.loads(self._groups[group])
        return self._loaded[group]

    def all(self) -> list[Recipe]:
        """Every recipe (unpickles every group)."""
        return [recipe for group in self._groups for recipe in self._group(group)]

    def get(self, ident: str) -> Recipe | None:
        """The recipe with this id, or None."""
        group = self._ids.get(ident)
        if group is None:
            return None
        return next((r for r in self._group(group) if r.id == ident), None)

    def for_model(self, query: str) -> list[Recipe]:
        """The recipes whose model, checkpoint or alias the query names, or whose family the
        query's name starts with (``DeepSeek-V4-Flash-0731`` finds ``DeepSeek-V4-Flash``)."""
        lowered = query.strip().rstrip("/").lower()
        base = lowered.rsplit("/", 1)[-1]
        groups = set(self._names.get(lowered, ())) | set(self._names.get(base, ()))
        for key, found in self._names.items():
            if "/" not in key and (base.startswith(key + "-") or base.startswith(key + "_")):
                groups.update(found)
        return [recipe for group in sorted(groups) for recipe in self._group(group)]

    def groups_of(self, prefix: str) -> set[str]:
        """The model groups that hold a recipe whose id starts with ``prefix``."""
        return {group for ident, group in self._ids.items() if ident.startswith(prefix)}

    def dumps(self) -> bytes:
        """The index as bytes (for the cache)."""
        return pickle.dumps((self._groups, self._names, self._ids),
                            protocol=pickle.HIGHEST_PROTOCOL)

    @classmethod
    def loads(cls, data: bytes) -> RecipeIndex:
        """An index from :meth:`dumps`."""
        groups, names, ids = pickle.loads(data)
        if not (isinstance(groups, dict) and isinstance(names, dict) and isinstance(ids, dict)):
            raise ValueError("not a recipe index")
        return cls(groups, names, ids)


def _fingerprint(parts: Iterable[bytes]) -> str:
    from servewise import __version__

    shape = ",".join(f.name for kind in (Recipe, Match, Pool, Provenance, BenchmarkRun)
                     for f in dataclasses.fields(kind))  # a cache of another code's objects
    digest = hashlib.sha256(f"{__version__}\0{sys.version}\0{SCHEMA}\0{shape}".encode())
    data = resources.files("servewise.knowledge").joinpath("data")
    for name in ("gpus.toml", "engine_flags.toml"):
        digest.update(b"\0" + data.joinpath(name).read_bytes())
    for part in parts:
        digest.update(b"\0" + part)
    return digest.hexdigest()[:20]


def _cached(name: str, fingerprint: str, build: Callable[[], RecipeIndex]) -> RecipeIndex:
    """The index cached as ``NAME-FINGERPRINT.pickle`` in the cache folder, built when absent
    (a read-only cache folder: built every time)."""
    from servewise.folders import cache_folder

    cache = cache_folder() / f"{name}-{fingerprint}.pickle"
    failed = cache.with_suffix(".problems")
    with contextlib.suppress(OSError, pickle.UnpicklingError, EOFError, AttributeError,
                             TypeError, ValueError):
        return RecipeIndex.loads(cache.read_bytes())
    # A folder with a bad file fails the same way until it changes: that is cached too, so
    # thousands of good files beside it are not parsed again by every command.
    with contextlib.suppress(OSError, pickle.UnpicklingError, EOFError, AttributeError,
                             TypeError, ValueError, IndexError):
        problems = pickle.loads(failed.read_bytes())
        if isinstance(problems, list) and all(isinstance(p, Problem) for p in problems):
            raise RecipeDataError(problems)
    try:
        index = build()
    except RecipeDataError as error:
        _write_cache(failed, name, pickle.dumps(list(error.problems)))
        raise
    _write_cache(cache, name, index.dumps())
    return index


def _write_cache(path: Path, name: str, data: bytes) -> None:
    """``data`` written to ``path`` atomically; nothing when the cache cannot be written."""
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temp = tempfile.mkstemp(prefix=f".{name}-", dir=path.parent)
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.replace(temp, path)


def _documents(name: str, data: bytes) -> list[tuple[str, Any]]:
    """The recipe documents of one file: a YAML or JSON recipe file, or a snapshot."""
    if name.endswith(".json.gz"):
        files = json.loads(gzip.decompress(data))["files"]
        return [(f"{name}:{inner}", document) for inner, document in files.items()]
    text = data.decode("utf-8")
    return [(name, json.loads(text) if name.endswith(".json") else load_yaml(text, name))]


def _parse_all(files: Iterable[tuple[str, bytes]], catalog: GpuCatalog, *,
               user: bool) -> list[Recipe]:
    recipes: list[Recipe] = []
    problems: list[Problem] = []
    for name, data in files:
        try:
            documents = _documents(name, data)
        except YamlLimitError as exc:
            check = Checker(name)
            check.problem("(file)", f"refused: {exc.message}", expected=exc.expected,
                          found=exc.found)
            problems.extend(check.problems)
            continue
        except (ValueError, UnicodeDecodeError, OSError, KeyError, TypeError) as exc:
            check = Checker(name)
            check.problem("(file)", f"cannot read: {exc}")
            problems.extend(check.problems)
            continue
        except Exception as exc:
            check = Checker(name)
            check.problem("(file)", f"not valid YAML: {exc}")
            problems.extend(check.problems)
            continue
        for file, document in documents:
            try:
                recipes.extend(parse_recipe_document(document, file, catalog, user=user))
            except RecipeDataError as exc:
                problems.extend(exc.problems)
    if problems:
        raise RecipeDataError(problems)
    return recipes


def _shipped_files() -> list[tuple[str, bytes]]:
    folder = resources.files("servewise.knowledge").joinpath(*SHIPPED_FOLDER)
    return [(f"servewise/knowledge/data/recipes/{entry.name}", entry.read_bytes())
            for entry in sorted(folder.iterdir(), key=lambda item: item.name)
            if entry.name.endswith((*SUFFIXES, ".json.gz"))]


@functools.cache
def shipped_index() -> RecipeIndex:
    """Every shipped recipe (servewise's and the vLLM snapshot), checked once, cached."""
    files = _shipped_files()
    fingerprint = _fingerprint(f"{name}\0".encode() + data for name, data in files)
    return _cached("recipes", fingerprint,
                   lambda: RecipeIndex.build(_parse_all(files, load_gpu_catalog(), user=False)))


def user_recipe_dir(user_dir: Path | None = None) -> Path:
    """The user's recipe folder: ``recipes/`` in the user data folder."""
    return (user_data_dir() if user_dir is None else user_dir) / USER_FOLDER


def user_files(folder: Path) -> list[Path]:
    """The recipe files of the user's folder (YAML and JSON), by name."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.name.endswith(SUFFIXES)
                  and not p.name.startswith("."))


def read_recipe_files(paths: Iterable[Path], catalog: GpuCatalog, *, user: bool) -> list[Recipe]:
    """The recipes of ``paths``; the problems of every file together in one error."""
    files: list[tuple[str, bytes]] = []
    problems: list[Problem] = []
    for path in paths:
        # A file name is shown in tables and errors: a name holding escape sequences (a
        # title change, a screen clear) is shown without them.
        name = terminal_safe(str(path))
        try:
            files.append((name, read_regular(path, limit=MAX_CHARS, what="recipe file")))
        except SourceError as exc:
            check = Checker(name)
            check.problem("(file)", f"refused: {exc.message}", expected=exc.fields.get(
                "expected"), found=exc.fields.get("found"))
            problems.extend(check.problems)
        except OSError as exc:
            check = Checker(name)
            check.problem("(file)", f"cannot read: {exc}")
            problems.extend(check.problems)
    try:
        recipes = _parse_all(files, catalog, user=user)
    except RecipeDataError as exc:
        problems.extend(exc.problems)
    if problems:
        raise RecipeDataError(problems)
    return recipes


def _user_index(user_dir: Path | None, paths: list[Path]) -> RecipeIndex:
    stats = []
    for path in paths:
        with contextlib.suppress(OSError):
            info = path.stat()
            stats.append(f"{path}\0{info.st_size}\0{info.st_mtime_ns}".encode())
    user_gpus = (user_data_dir() if user_dir is None else user_dir) / "gpus.toml"
    with contextlib.suppress(OSError):
        stats.append(user_gpus.read_bytes())
    catalog = load_gpu_catalog(user_dir)

    def build() -> RecipeIndex:
        recipes = read_recipe_files(paths, catalog, user=True)
        _no_duplicates(recipes)
        return RecipeIndex.build(recipes)

    return _cached("user-recipes", _fingerprint(stats), build)


def load_recipes(user_dir: Path | None = None) -> RecipeBook:
    """The recipe book: the shipped recipes with the user folder's (see the module text)."""
    shipped = shipped_index()
    paths = user_files(user_recipe_dir(user_dir))
    if not paths:
        return RecipeBook((), indexes=(shipped,))
    user = _user_index(user_dir, paths)
    imported = {prefix: user.groups_of(prefix) for prefix in IMPORTED}

    def keep(recipe: Recipe) -> bool:
        prefix = recipe.id.split("/", 1)[0] + "/"
        return recipe.user or recipe.match.model.lower() not in imported.get(prefix, ())

    return RecipeBook((), indexes=(user, shipped), keep=keep)


def _no_duplicates(recipes: Iterable[Recipe]) -> None:
    seen: dict[str, str] = {}
    for recipe in recipes:
        if recipe.id in seen and seen[recipe.id] != recipe.file:
            raise RecipeDataError([Problem(recipe.file, "recipes[].id",
                                           f"duplicate id (also in {seen[recipe.id]})",
                                           found=recipe.id)])
        seen[recipe.id] = recipe.file


__all__ = [
    "SNAPSHOT",
    "RecipeIndex",
    "load_recipes",
    "read_recipe_files",
    "shipped_index",
    "user_files",
    "user_recipe_dir",
]
