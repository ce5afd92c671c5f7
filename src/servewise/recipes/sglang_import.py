"""Importing SGLang's cookbook (sgl-project/sglang ``docs_new/src/snippets/configs``).

The cookbook keeps each model's serving recipes as data-shaped JavaScript:
``<org>/<model>.jsx`` exports ``config`` (``cells`` keyed by ``{hw, variant, quant, strategy,
nodes}``, each with ``verified``, ``env`` and ``flags``; ``modelNames`` naming the checkpoint
of each selection; ``dockerImages``) and ``<org>/<model>-benchmarks.jsx`` exports
``benchmarks`` (per cell: ``sglang_version``, ``speed`` rows, ``accuracy``). The modules are
read with :mod:`servewise.formats.jsliteral` (literals only, nothing is run).

Every cell becomes a servewise recipe: engine ``sglang``; the argv is the cell's flags split
into words, without ``--model-path {{MODEL_NAME}}`` (the checkpoint, looked up in
``modelNames``: ``hw|variant|quant`` before ``variant|quant``) and without ``--host``/
``--port`` and the node flags (the renderers add them); ``multi-N`` runs on N nodes (SGLang's
own ``--nnodes/--node-rank/--dist-init-addr``); ``verified: true`` is ``verified``, anything
else ``estimated`` (the cookbook's "Auto-Estimated" badge). The GPUs per node are the cell's
parallel sizes (tensor x pipeline x data parallel unless DP attention) over its nodes.
Benchmark rows keep the cookbook's numbers in servewise's bench shape (latency as
``{stat: value}`` with the file's ``latencyPercentile``, p50 where it names none); the
cookbook's ``tokens_per_sec_per_gpu`` counts output tokens in some files and input + output
in others, so each file's rows are checked against their own TTFT/TPOT arithmetic and the
number goes to the key it means (the other one derived and listed in ``derived``).

Every config file ends one of three ways, each said in the report: **imported** (one recipe
file per variant), **out of scope** (not a cookbook config, or no cell on a GPU servewise
knows — the skipped cells are listed with why), or **refused** (does not parse, wrong types,
a value that is not a literal where recipes are read from, a flag value the engine-flag table
refuses — every problem by file and field path; the other files are still imported). A
construct that is not a literal elsewhere (the playground's options) is reported and left
out. Recipe ids start with ``sglang-cookbook/``; files are named ``sglang-cookbook.*``.
"""

from __future__ import annotations

import json
import math
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from servewise.errors import FormatError, ServewiseError, SourceError
from servewise.formats.jsliteral import JsModule, UnknownShape, read_module
from servewise.formats.yaml_limits import MAX_CHARS
from servewise.knowledge.flags import from_argv, load_flag_table
from servewise.knowledge.gpus import Gpu, GpuCatalog, load_gpu_catalog
from servewise.recipes.load import argv_problem, parse_recipe_document
from servewise.recipes.model import image_parts
from servewise.recipes.sglang_bench import (
    MATCH_FIELDS,
    Bench,
    accuracy_of,
    bench_run,
    cell_key,
    check_benchmarks,
    entry_accuracy,
    output_only,
)
from servewise.recipes.validate import Checker, Problem, RecipeDataError, short
from servewise.recipes.vllm_import import ImportReport, Skipped, finish_import, outside_clone
from servewise.sources.bounded import read_regular
from servewise.versions import EngineVersion

REPO_URL = "https://github.com/sgl-project/sglang"
CONFIGS = ("docs_new", "src", "snippets", "configs")
"""Where the cookbook's modules are in a clone of sgl-project/sglang."""
PREFIX = "sglang-cookbook."
"""File names of imported recipe files start with this."""
ID_PREFIX = "sglang-cookbook/"
WHO = "SGLang cookbook maintainers (sgl-project/sglang docs_new)"
DROPPED = ("--host", "--port", "--nnodes", "--node-rank", "--dist-init-addr")
"""Flags the renderers set themselves (the cookbook's placeholders for them)."""
MODEL_FLAGS = ("--model-path", "--model")
MODEL_NAME = "{{MODEL_NAME}}"
READ = ("cells", "modelNames", "dockerImages", "hardware", "latencyPercentile",
        "defaultAccuracy", "quantizations", "github")
"""The parts of ``config`` recipes are made from: a non-literal there refuses the file."""
STATS = {"mean": "mean", "median": "p50", "p50": "p50", "p90": "p90", "p95": "p95",
         "p99": "p99"}
UNPINNED_TAGS = ("latest",)


@dataclass(frozen=True)
class Clone:
    """Where the cookbook is: the clone's root and its configs folder."""

    root: Path
    configs: Path


@dataclass
class CookbookReport(ImportReport):
    """An import report whose ``outcomes`` are the config files (one per model); the
    benchmarks files beside them have theirs in ``benchmark_outcomes``."""

    benchmark_outcomes: dict[str, str] = field(default_factory=dict)

    @property
    def refused(self) -> list[str]:
        """The config and benchmarks files refused for their problems."""
        return [name for outcomes in (self.outcomes, self.benchmark_outcomes)
                for name, outcome in outcomes.items() if outcome == "refused"]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields (those of :class:`ImportReport` and ``benchmark_outcomes``)."""
        return {**super().to_dict(), "benchmark_outcomes": self.benchmark_outcomes}


def find_configs(path: Path) -> Clone | None:
    """The cookbook of a clone of sgl-project/sglang: ``path`` is the clone, its configs
    folder or a file or folder inside it; None when it is none of these."""
    start = path.expanduser().resolve()
    if (start / Path(*CONFIGS)).is_dir():
        return Clone(start, start / Path(*CONFIGS))
    for folder in (start, *start.parents):
        if folder.parts[-len(CONFIGS):] == CONFIGS and folder.is_dir():
            return Clone(folder.parents[len(CONFIGS) - 1], folder)
    return None


def _commits(root: Path) -> dict[str, str]:
    """Commit by path (``""``: every path): the clone's HEAD, or a SOURCE.md table naming a
    commit per file (the test fixtures)."""
    head = root / ".git" / "HEAD"
    try:
        text = head.read_text("utf-8").strip()
        if text.startswith("ref: ") and (root / ".git" / text[5:]).is_file():
            text = (root / ".git" / text[5:]).read_text("utf-8").strip()
        if re.fullmatch(r"[0-9a-f]{40}", text):
            return {"": text}
    except OSError:
        pass
    source = root / "SOURCE.md"
    found: dict[str, str] = {}
    if source.is_file():
        for line in source.read_text("utf-8").splitlines():
            row = re.search(r"`?(docs_new/[^`|\s]+\.jsx)`?\s*\|\s*`?([0-9a-f]{40})", line)
            if row:
                found[row.group(1)] = row.group(2)
    return found


def source_commits(path: Path) -> dict[str, str]:
    """The commit of each cookbook file of a clone (path in the repository → commit), as far
    as the clone says (its HEAD, or its SOURCE.md); empty when it says nothing."""
    clone = find_configs(path)
    if clone is None:
        return {}
    commits = _commits(clone.root)
    found = {}
    for file in sorted(clone.configs.rglob("*.jsx")):
        name = "/".join((*CONFIGS, file.relative_to(clone.configs).as_posix()))
        commit = commits.get(name) or commits.get("")
        if commit:
            found[name] = commit
    return found


def _url(commits: Mapping[str, str], path: str) -> str:
    return f"{REPO_URL}/blob/{commits.get(path) or commits.get('') or 'main'}/{path}"


def _read(file: Path, check: Checker) -> JsModule | None:
    try:
        data = read_regular(file, limit=MAX_CHARS, what="cookbook module")
    except SourceError as exc:
        check.problem("(file)", f"refused: {exc.message}", expected=exc.fields.get("expected"),
                      found=exc.fields.get("found"))
        return None
    except OSError as exc:
        check.problem("(file)", f"cannot read: {exc}")
        return None
    try:
        return read_module(data, source=file.name)
    except FormatError as exc:
        check.problem(f"(offset {exc.offset})", "not a JavaScript literal module",
                      expected=exc.expected, found=exc.found)
        return None


def resolve_gpu(hw: str, config: Mapping[str, Any], catalog: GpuCatalog) -> Gpu | None:
    """The catalog GPU of a cookbook hardware id: by id, or by the label of the file's own
    ``hardware`` entry (with the same memory, within 15 %)."""
    names = [hw]
    vram = None
    for entry in config.get("hardware") or ():
        if isinstance(entry, Mapping) and entry.get("id") == hw:
            names.append(str(entry.get("label") or ""))
            found = re.match(r"\s*(\d+(?:\.\d+)?)\s*GB", str(entry.get("vram") or ""), re.I)
            vram = float(found.group(1)) if found else None
    for name in names:
        gpu = catalog.get(name) if name else None
        if gpu is not None and (vram is None or abs(gpu.memory_bytes / 1e9 - vram) <= 0.15 * vram):
            return gpu
    return None


def _no_gpu(hw: str, config: Mapping[str, Any]) -> str:
    """Why a cell's hardware has no recipe: not a GPU (the file's own ``hardware`` entry names
    another vendor), or a GPU the catalog lacks."""
    for entry in config.get("hardware") or ():
        if isinstance(entry, Mapping) and entry.get("id") == hw \
                and str(entry.get("vendor", "nvidia")).lower() not in ("nvidia", "amd"):
            return (f"{entry.get('label') or hw} ({entry.get('vendor')}) is not a GPU "
                    "servewise serves")
    return f"GPU {hw!r} is not in servewise's GPU catalog"


def _nodes(text: str) -> int | None:
    if text == "single":
        return 1
    found = re.fullmatch(r"multi-(\d+)", text)
    return int(found.group(1)) if found and int(found.group(1)) >= 2 else None


def _strings(check: Checker, value: Any, path: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        check.problem(path, "must be a list of strings", found=short(value))
        return []
    return list(value)


def _env(check: Checker, value: Any, path: str) -> dict[str, str]:
    if isinstance(value, Mapping):
        return {str(k): str(v) for k, v in value.items()}
    env = {}
    for index, item in enumerate(_strings(check, value, path)):
        name, equals, rest = item.partition("=")
        if not equals or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            check.problem(f"{path}[{index}]", "not an environment setting",
                          expected="NAME=value", found=short(item))
            continue
        env[name] = rest
    return env


def _argv(check: Checker, flags: list[str], path: str,
          model_name: str | None) -> tuple[list[str], str | None, str | None]:
    """The argv words of a cell's flags (``{{MODEL_NAME}}`` filled in with ``model_name``, as
    the site does), the checkpoint a literal ``--model-path`` names, and why the cell cannot
    be a recipe (None when it can)."""
    argv: list[str] = []
    model: str | None = None
    unfit: str | None = None
    for index, flag in enumerate(flags):
        try:
            words = shlex.split(flag)
        except ValueError as exc:
            check.problem(f"{path}[{index}]", f"not shell words: {exc}", found=short(flag))
            continue
        if not words:
            continue
        name, _, inline = words[0].partition("=")
        value = inline or (words[1] if len(words) > 1 else "")
        if name in MODEL_FLAGS:
            model = None if "{{" in value else value
            continue
        if name in DROPPED:
            continue
        if model_name is not None:
            words = [word.replace(MODEL_NAME, model_name) for word in words]
        if any("{{" in word for word in words) and unfit is None:
            unfit = f"the flag {flag!r} has a placeholder servewise cannot fill"
        argv.extend(words)
    return argv, model, unfit


def _gpus_per_node(argv: list[str], nodes: int) -> int | str:
    """GPUs on each node (tensor x pipeline x data parallel, data parallel counted only
    without DP attention), or the engine-flag table's complaint."""
    problem = argv_problem("sglang", tuple(argv), None, load_flag_table())
    if problem is not None:
        return problem[0]
    try:
        settings = from_argv("sglang", argv)
    except ServewiseError as exc:  # pragma: no cover - argv_problem reports these first
        return str(exc)
    total = (settings.tensor_parallel_size or 1) * (settings.pipeline_parallel_size or 1)
    if not settings.enable_dp_attention:
        total *= settings.data_parallel_size or 1
    return max(1, math.ceil(total / nodes))


def _check_config(module: JsModule, check: Checker) -> Mapping[str, Any] | None:
    config = module.export("config")
    data = check.mapping(config, "config")
    if data is None:
        return None
    for part in READ:
        for shape in module.unknown_under(f"config.{part}"):
            check.problem(shape.path, f"not a literal ({shape.kind})", found=shape.text)
    names = check.mapping(data.get("modelNames"), "config.modelNames")
    for key, value in (names or {}).items():
        if not isinstance(value, str) or not value:
            check.problem(f"config.modelNames[{key!r}]", "must be a model name",
                          found=short(value))
    cells = data.get("cells")
    if not isinstance(cells, list) or not cells:
        check.problem("config.cells", "must be a non-empty list of cells",
                      found=type(cells).__name__)
        return data
    for index, cell in enumerate(cells):
        where = f"config.cells[{index}]"
        item = check.mapping(cell, where)
        if item is None:
            continue
        match = check.mapping(item.get("match"), f"{where}.match")
        for name in MATCH_FIELDS if match is not None else ():
            assert match is not None
            if not isinstance(match.get(name), str) or not match[name]:
                check.problem(f"{where}.match.{name}", "must be a non-empty string",
                              found=short(match.get(name)))
        if match is not None and isinstance(match.get("nodes"), str) \
                and _nodes(match["nodes"]) is None:
            check.problem(f"{where}.match.nodes", "unknown node count",
                          expected="single or multi-N", found=short(match["nodes"]))
        if "verified" in item and not isinstance(item["verified"], bool):
            check.problem(f"{where}.verified", "must be true or false",
                          found=short(item["verified"]))
        _strings(check, item.get("flags"), f"{where}.flags")
    return data


def _model_name(names: Mapping[str, Any], hw: str, variant: str, quant: str) -> str | None:
    value = names.get(f"{hw}|{variant}|{quant}") or names.get(f"{variant}|{quant}")
    return value if isinstance(value, str) else None


def _family(config: Mapping[str, Any], variant: str, fallback: str) -> str:
    """The model a variant's recipe file is about: its checkpoint in the first quantization
    the file lists (``variant|quant``), else its first cell's."""
    names = config.get("modelNames") or {}
    for quant in config.get("quantizations") or ():
        found = names.get(f"{variant}|{quant.get('id')}") if isinstance(quant, Mapping) else None
        if isinstance(found, str) and "/" in found:
            return found
    return fallback


def _documents(
    relative: str, config: Mapping[str, Any], bench: Bench | None, catalog: GpuCatalog,
    commits: Mapping[str, str], report: ImportReport, check: Checker,
) -> dict[str, dict[str, Any]]:
    """Recipe file name → recipe document, one per variant of the config's cells."""
    org, stem = relative.split("/")[-2], relative.split("/")[-1].removesuffix(".jsx")
    url = _url(commits, "/".join((*CONFIGS, relative)))
    names = config.get("modelNames") or {}
    stat = STATS.get(str(config.get("latencyPercentile") or "p50").lower(), "p50")
    images = config.get("dockerImages") or {}
    defaults = config.get("defaultAccuracy") or {}
    documents: dict[str, dict[str, Any]] = {}
    for index, cell in enumerate(config["cells"]):
        where = f"config.cells[{index}]"
        match = cell["match"]
        hw, variant, quant, strategy = (str(match[k]) for k in MATCH_FIELDS[:4])
        nodes = _nodes(str(match["nodes"])) or 1
        what = "/".join(cell_key(match))
        gpu = resolve_gpu(hw, config, catalog)
        if gpu is None:
            report.skipped.append(Skipped(relative, f"cell {what}", _no_gpu(hw, config)))
            continue
        model_name = _model_name(names, hw, variant, quant)
        argv, named, unfit = _argv(check, list(cell.get("flags") or ()), f"{where}.flags",
                                   model_name)
        checkpoint = named or model_name
        if checkpoint is None:
            check.problem(f"{where}.match", "no checkpoint for this cell in config.modelNames",
                          expected=f"'{hw}|{variant}|{quant}' or '{variant}|{quant}'")
            continue
        if unfit is None and "/" not in checkpoint:
            unfit = f"its checkpoint {checkpoint!r} is not a Hugging Face id (org/name)"
        if unfit is not None:
            report.skipped.append(Skipped(relative, f"cell {what}", unfit))
            continue
        gpus = _gpus_per_node(argv, nodes)
        if isinstance(gpus, str):
            check.problem(f"{where}.flags", gpus)
            continue
        ident = f"{ID_PREFIX}{org}/{stem}/{variant}/{gpu.id}/{quant}/{strategy}/" \
                f"{match['nodes']}".lower()
        recipe: dict[str, Any] = {
            "id": ident,
            "match": {"variant": variant, "quant": quant, "hw": gpu.id, "gpus": gpus,
                      "strategy": strategy, "nodes": nodes},
            "checkpoint": checkpoint,
        }
        image = images.get(hw) if isinstance(images, Mapping) else None
        parts = image_parts(image) if isinstance(image, str) else None
        if parts is not None and parts[1] not in UNPINNED_TAGS and (parts[1] or parts[2]):
            recipe["image"] = image
        entry = bench.entries.get(cell_key(match)) if bench else None
        version = str(entry["sglang_version"]) if entry and entry.get("sglang_version") else None
        if version and re.match(r"\d+\.\d+", version):  # a release, not a commit or a PR
            try:
                EngineVersion.parse(version)
                recipe["min_version"] = version
            except ServewiseError:
                pass
        recipe["argv"] = argv
        env = _env(check, cell.get("env"), f"{where}.env")
        if env:
            recipe["env"] = env
        recipe["status"] = "verified" if cell.get("verified") is True else "estimated"
        if nodes > 1:
            recipe["multinode"] = "mp"
        if version:
            recipe["provenance"] = {"engine_version": version}
        default_accuracy = accuracy_of(defaults.get(variant)) if isinstance(defaults, Mapping) \
            else {}
        run = bench_run(entry, bench, stat, gpus * nodes, default_accuracy) \
            if entry and bench else None
        if run is not None:
            recipe["benchmarks"] = [run]
        elif entry:
            accuracy = entry_accuracy(entry) or default_accuracy
            said = ["the cookbook's accuracy: " + ", ".join(
                f"{k} {v:g}" for k, v in accuracy.items())] if accuracy else []
            recipe["notes"] = "; ".join([*said, *filter(None, [str(entry.get("notes") or "")])]) \
                or "the cookbook's benchmark for this cell is pending"
        name = f"{PREFIX}{org}.{stem}.{variant}.sglang.json".lower()
        document = documents.setdefault(name, {
            "schema": 1, "model": _family(config, variant, checkpoint), "engine": "sglang",
            "notes": f"Imported by `servewise recipe import` from the SGLang cookbook ({url}).",
            "defaults": {"provenance": {"who": WHO, "source": url}}, "recipes": []})
        cookbook = (config.get("github") or {}).get("cookbookModel") \
            if isinstance(config.get("github"), Mapping) else None
        if isinstance(cookbook, str) and "/" in cookbook \
                and cookbook.lower() != document["model"].lower():
            document["aliases"] = [cookbook]
        if any(item["id"] == ident for item in document["recipes"]):
            check.problem(f"{where}.match", "a second cell with the same match",
                          found=short(dict(match)))
            continue
        document["recipes"].append(recipe)
    return documents


def _model_file(
    file: Path, clone: Clone, catalog: GpuCatalog, commits: Mapping[str, str],
    report: CookbookReport,
) -> dict[str, str]:
    """The recipe files (name → JSON text) of one config file, its outcome in the report."""
    relative = file.relative_to(clone.configs).as_posix()
    check = Checker(str(file))
    module = _read(file, check)
    report.files_read.append(str(file))
    why = _out_of_scope(module) if module is not None else None
    if why is not None:
        report.skipped.append(Skipped(relative, "model", why))
        report.outcomes[relative] = "out of scope"
        return {}
    config = _check_config(module, check) if module is not None else None
    bench = _benchmarks(file, clone, commits, report, config)
    texts: dict[str, str] = {}
    if config is not None and not check.problems:
        documents = _documents(relative, config, bench, catalog, commits, report, check)
        for name, document in documents.items():
            try:
                parse_recipe_document(document, name, catalog, user=True)
            except RecipeDataError as exc:
                report.problems.extend(Problem(str(file), p.path, p.message, p.expected,
                                               p.found) for p in exc.problems)
                report.outcomes[relative] = "refused"
                return {}
            texts[name] = json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n"
    if check.problems:
        report.problems += check.problems
        report.outcomes[relative] = "refused"
        return {}
    assert module is not None
    for shape in module.unknown:
        if not any(shape.path.startswith(f"config.{part}") for part in READ):
            report.skipped.append(Skipped(relative, f"unknown shape at {shape.path}",
                                          _unknown_reason(shape)))
    if not texts:
        report.skipped.append(Skipped(relative, "model", "no cell on a GPU servewise knows "
                                      "(every one is skipped above)"))
        report.outcomes[relative] = "out of scope"
        return {}
    report.outcomes[relative] = "imported"
    for name, document in ((n, json.loads(t)) for n, t in texts.items()):
        report.recipes[name] = len(document["recipes"])
    return texts


def _out_of_scope(module: JsModule) -> str | None:
    """Why a module is no cookbook config of text generation (None when it is one): it
    exports no ``config``, or none of its cells is keyed by the five match fields (the
    diffusion pages key theirs by ``hw`` and ``profile``)."""
    if "config" not in module.exports:
        exported = ", ".join(module.exports) or "nothing"
        return f"not a cookbook config: exports {exported}, no `config` with cells"
    cells = module.export("config").get("cells") \
        if isinstance(module.export("config"), Mapping) else None
    if not isinstance(cells, list) or not cells:
        return None
    keys = [set(cell["match"]) for cell in cells
            if isinstance(cell, Mapping) and isinstance(cell.get("match"), Mapping)]
    if keys and not any(set(MATCH_FIELDS) <= found for found in keys):
        return (f"its cells are keyed by {', '.join(sorted(set().union(*keys)))}, not "
                f"{'/'.join(MATCH_FIELDS)}: not a text-generation recipe matrix "
                f"({len(module.unknown)} non-literal part(s) left unread)")
    return None


def _unknown_reason(shape: UnknownShape) -> str:
    return (f"a {shape.kind} at line {shape.line} ({shape.text}), not a literal; left out "
            "(recipes are not made from this part)")


def _benchmarks(file: Path, clone: Clone, commits: Mapping[str, str], report: CookbookReport,
                config: Mapping[str, Any] | None) -> Bench | None:
    """The benchmarks beside a config file, checked; a broken one is refused on its own
    (the config is imported without benchmarks)."""
    path = file.with_name(file.stem + "-benchmarks.jsx")
    if not path.is_file():
        return None
    relative = path.relative_to(clone.configs).as_posix()
    check = Checker(str(path))
    module = _read(path, check)
    report.files_read.append(str(path))
    entries = check_benchmarks(module, check) if module is not None else {}
    if check.problems:
        report.problems += check.problems
        report.benchmark_outcomes[relative] = "refused"
        return None
    report.benchmark_outcomes[relative] = "imported"
    gpus: dict[tuple[str, ...], int] = {}
    for cell in (config or {}).get("cells") or ():
        if isinstance(cell, Mapping) and isinstance(cell.get("match"), Mapping):
            argv, _, _ = _argv(Checker(""), _strings(Checker(""), cell.get("flags"), ""), "",
                               None)
            nodes = _nodes(str(cell["match"].get("nodes"))) or 1
            count = _gpus_per_node(argv, nodes)
            if isinstance(count, int):
                gpus[cell_key(cell["match"])] = count * nodes
    url = _url(commits, "/".join((*CONFIGS, relative)))
    return Bench(entries, output_only(entries, gpus), url)


def convert_sglang_cookbook(
    path: Path, *, catalog: GpuCatalog | None = None, strict: bool = False,
) -> tuple[CookbookReport, dict[str, str]]:
    """The servewise recipe files (name → JSON text) of a clone's cookbook (or one config
    file of it), and the report; nothing is written. ``strict``: any problem raises."""
    clone = find_configs(path)
    if clone is None or not path.expanduser().exists():
        check = Checker(str(path))
        check.problem("(file)", "not a clone of sgl-project/sglang",
                      expected="a folder with docs_new/src/snippets/configs/<org>/<model>.jsx")
        raise RecipeDataError(check.problems, hint="give the clone's folder")
    catalog = catalog or load_gpu_catalog()
    commits = _commits(clone.root)
    report = CookbookReport(source=str(path))
    resolved = path.expanduser().resolve()
    base = resolved if resolved.is_relative_to(clone.configs) else clone.configs
    files = [resolved] if resolved.is_file() else sorted(base.rglob("*.jsx"))
    files = outside_clone(files, clone.root, report, strict)
    texts: dict[str, str] = {}
    configs = [f for f in files if not f.name.endswith("-benchmarks.jsx")]
    for file in configs:
        texts.update(_model_file(file, clone, catalog, commits, report))
    for file in files:
        relative = file.relative_to(clone.configs).as_posix()
        if relative not in report.outcomes and relative not in report.benchmark_outcomes:
            report.files_read.append(str(file))
            report.skipped.append(Skipped(relative, "model", "benchmarks with no config "
                                          "file beside them"))
            report.benchmark_outcomes[relative] = "out of scope"
    if strict and report.problems:
        raise RecipeDataError(report.problems, hint="nothing was imported (--strict); fix the "
                                                    "fields named above")
    return report, texts


def import_sglang_cookbook(
    path: Path, *, user_dir: Path | None = None, dry_run: bool = False,
    catalog: GpuCatalog | None = None, strict: bool = False,
) -> CookbookReport:
    """Import the cookbook of a clone of sgl-project/sglang into the user folder (all the
    good files at once; the refused ones are in the report, ``exit_code`` 1)."""
    report, texts = convert_sglang_cookbook(path, catalog=catalog or load_gpu_catalog(user_dir),
                                            strict=strict)
    return finish_import(report, texts, user_dir, dry_run)


__all__ = ["Clone", "CookbookReport", "convert_sglang_cookbook", "find_configs",
           "import_sglang_cookbook", "resolve_gpu", "source_commits"]
