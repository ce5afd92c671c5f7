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

import functools
from collections.abc import Iterator, Mapping
from typing import Any, cast

import yaml

from servewise.errors import ServewiseError
from servewise.formats.yaml_limits import YamlLimitError, load_yaml_limited
from servewise.knowledge.flags import FlagTable, from_argv, load_flag_table
from servewise.knowledge.gpus import GpuCatalog
from servewise.recipes.model import (
    ENGINES,
    MULTINODE_MODES,
    STATUSES,
    BenchmarkRun,
    Match,
    Pool,
    Provenance,
    Recipe,
    Status,
    image_parts,
)
from servewise.recipes.validate import Checker, short

SCHEMA = 1
"""The recipe file format's version."""

def load_yaml(text: str, source: str | None = None) -> Any:
    """``text`` parsed with libyaml's safe loader when PyYAML has it (about 8 times faster),
    within :mod:`~servewise.formats.yaml_limits`' limits (an alias bomb is refused)."""
    return load_yaml_limited(text, source=source)

USER_FOLDER = "recipes"
"""The recipe folder's name inside the user data folder."""

_FILE_KEYS = {"schema", "model", "engine", "aliases", "defaults", "recipes", "notes"}
_DEFAULT_KEYS = {"image", "min_version", "status", "provenance"}
_RECIPE_KEYS = {"id", "match", "checkpoint", "image", "min_version", "argv", "env", "status",
                "provenance", "benchmarks", "notes", "derived", "multinode", "pools", "router",
                "images"}
_POOL_KEYS = {"role", "argv", "env", "nodes", "multinode"}
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
        document = load_yaml(text, file)
    except YamlLimitError as exc:
        check.problem("(file)", f"refused: {exc.message}", expected=exc.expected,
                      found=exc.found)
        check.raise_if_any()
        raise AssertionError("unreachable") from exc
    except yaml.YAMLError as exc:
        check.problem("(file)", f"not valid YAML: {exc}")
        check.raise_if_any()
        raise AssertionError("unreachable") from exc
    return parse_recipe_document(document, file, catalog, user=user)


def parse_recipe_document(
    document: Any, file: str, catalog: GpuCatalog, *, user: bool = False
) -> list[Recipe]:
    """The recipes of one parsed recipe file; every problem at once as RecipeDataError."""
    check = Checker(file)
    table = load_flag_table()
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
        recipe = _recipe(check, merged, path, model, engine, aliases, catalog, file, user,
                         table)
        if recipe is not None:
            recipes.append(recipe)
    check.raise_if_any()
    return recipes


def _recipe(
    check: Checker, data: Mapping[str, Any], path: str, model: str | None, engine: str | None,
    aliases: tuple[str, ...], catalog: GpuCatalog, file: str, user: bool, table: FlagTable,
) -> Recipe | None:
    before = len(check.problems)
    check.unknown_keys(data, path, _RECIPE_KEYS)
    ident = check.string(data, "id", path)
    match = _match(check, data.get("match"), f"{path}.match", model, catalog)
    checkpoint = check.string(data, "checkpoint", path, required=False) or model
    image = check.string(data, "image", path, required=False)
    if image is not None:
        _check_image(check, image, f"{path}.image")
    images = _images(check, data.get("images"), f"{path}.images")
    min_version = check.version(data, "min_version", path)
    argv = check.strings(data, "argv", path, required=True)
    if argv is not None:
        _check_argv(check, argv, f"{path}.argv", engine, min_version, table)
    env = check.env(data, "env", path)
    status = check.choice(data, "status", path, STATUSES)
    provenance = _provenance(check, data.get("provenance"), f"{path}.provenance")
    runs = _benchmarks(check, data.get("benchmarks"), f"{path}.benchmarks")
    notes = check.string(data, "notes", path, required=False) or ""
    derived = data.get("derived", False)
    if not isinstance(derived, bool):
        check.problem(f"{path}.derived", "must be true or false", found=short(derived))
    multinode = check.choice(data, "multinode", path, MULTINODE_MODES) \
        if data.get("multinode") is not None else None
    pools = _pools(check, data.get("pools"), f"{path}.pools", engine, min_version, table)
    router = check.strings(data, "router", path) or ()
    if len(check.problems) > before:
        return None
    assert ident and match and checkpoint and argv is not None and status and provenance
    assert engine is not None
    return Recipe(
        id=ident, engine=engine, match=match, checkpoint=checkpoint, argv=argv,
        status=cast(Status, status), provenance=provenance, file=file, min_version=min_version,
        image=image or (images[0][1] if images else None), env=env, benchmarks=runs,
        aliases=aliases, notes=notes, user=user, derived=bool(derived), multinode=multinode,
        pools=pools, router=router, images=images,
    )


def _check_image(check: Checker, image: str, where: str) -> None:
    parts = image_parts(image)
    if parts is None:
        check.problem(where, "not an image reference",
                      expected="name:tag or name@sha256:…", found=short(image))
    elif parts[1] is None and parts[2] is None:
        check.problem(where, "the image must be pinned by a tag or a digest",
                      expected="name:tag or name@sha256:…", found=short(image))


def _images(check: Checker, value: Any, path: str) -> tuple[tuple[str, str], ...]:
    """``images: {cu129: IMAGE, cu130: IMAGE}``: an image per CUDA variant."""
    if value is None:
        return ()
    data = check.mapping(value, path)
    found: list[tuple[str, str]] = []
    for name, image in (data or {}).items():
        if not isinstance(image, str):
            check.problem(f"{path}.{name}", "must be an image reference", found=short(image))
            continue
        _check_image(check, image, f"{path}.{name}")
        found.append((str(name), image))
    return tuple(found)


def _pools(check: Checker, value: Any, path: str, engine: str | None,
           version: str | None, table: FlagTable) -> tuple[Pool, ...]:
    """The pools of a prefill/decode recipe."""
    pools = []
    for where, data in _entries(check, value, path, "pools"):
        before = len(check.problems)
        check.unknown_keys(data, where, _POOL_KEYS)
        role = check.choice(data, "role", where, ("prefill", "decode"))
        argv = check.strings(data, "argv", where, required=True)
        if argv is not None:
            _check_argv(check, argv, f"{where}.argv", engine, version, table)
        env = check.env(data, "env", where)
        nodes = data.get("nodes", 1)
        if isinstance(nodes, bool) or not isinstance(nodes, int) or nodes < 0:
            check.problem(f"{where}.nodes", "must be a whole number ≥ 0 (0: half a node)",
                          found=short(nodes))
        multinode = check.choice(data, "multinode", where, MULTINODE_MODES) \
            if data.get("multinode") is not None else None
        if len(check.problems) == before and role is not None and argv is not None:
            pools.append(Pool(role=role, argv=argv, env=env, nodes=int(nodes),
                              multinode=multinode))
    return tuple(pools)


def _check_argv(
    check: Checker, argv: tuple[str, ...], path: str, engine: str | None, version: str | None,
    table: FlagTable,
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
    problem = argv_problem(engine, argv, version, table)
    if problem is not None:
        check.problem(path, problem[0], found=problem[1])


@functools.lru_cache(maxsize=4096)
def argv_problem(engine: str, argv: tuple[str, ...], version: str | None,
                  table: FlagTable) -> tuple[str, str] | None:
    """What the shared flag table refuses in ``argv`` (message, flag), or None: every flag
    it knows must have a value of its kind (recipes share their flags: each argv once)."""
    try:
        from_argv(engine, argv, version, table=table)
    except ServewiseError as exc:
        return exc.message, str(exc.fields.get("flag") or "")
    return None


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


def _entries(check: Checker, value: Any, path: str,
             what: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Each mapping of a list field with its path (``pools[1]``); a field that is not a list,
    or an item that is not a mapping, is a problem."""
    if value is None:
        return
    if not isinstance(value, list):
        check.problem(path, f"must be a list of {what}", found=type(value).__name__)
        return
    for index, item in enumerate(value):
        where = f"{path}[{index}]"
        data = check.mapping(item, where)
        if data is not None:
            yield where, data


def _benchmarks(check: Checker, value: Any, path: str) -> tuple[BenchmarkRun, ...]:
    runs = []
    for where, data in _entries(check, value, path, "benchmark runs"):
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
