"""Importing vLLM's recipe database (github.com/vllm-project/recipes) into servewise recipes.

``import_vllm_recipes(PATH)`` reads a clone (``models/<org>/<repo>.yaml``, ``strategies/``,
``kv_store/``, ``taxonomy.yaml``) or any one file of it (the clone around it gives the
strategies and the taxonomy), and writes one servewise recipe file per model to
``$SERVEWISE_DATA_DIR/recipes/`` (JSON, which is YAML too and reads fast; temporary files
renamed into place: a crash or Ctrl-C leaves the previous import as it was).

Every model file ends one of three ways, each said in the report:

* **imported**: one recipe per combination the site offers (below);
* **out of scope**: valid upstream, but nothing servewise serves: a speech, image or video
  model of vLLM-Omni (``tasks: [omni]`` or no serving strategy), or only hardware that is
  not a GPU (TPU, Xeon, Ascend) — skipped with the reason;
* **refused**: broken (does not parse, wrong types, a reference to nothing) — every problem by
  file and field path; the other files are still imported (``strict=True``: nothing is).

The combinations are those the site offers for the hardware a file names in
``meta.hardware`` (its claims): each variant whose precision runs there (NVFP4: Blackwell)
and that the profile may carry, each compatible strategy (``strategy_hardware`` switches,
``hardware_match`` GPU bounds and architecture, ``strategy_min_gpus`` floors). One-node
strategies only where ``vram_minimum_gb`` fits the node; multi-node ones on as many nodes as
the variant needs (at least two); prefill/decode with the site's pool sizes. The status is
the file's own claim (``verified`` → verified, ``supported`` → estimated, ``unsupported`` →
unsupported); every imported command is marked ``derived`` (servewise put it together from a
hardware-level claim), so it ranks below a recipe run end to end.
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml

from servewise.errors import SourceError
from servewise.formats.yaml_limits import MAX_CHARS, YamlLimitError
from servewise.knowledge.flags import load_flag_table
from servewise.knowledge.gpus import Gpu, GpuCatalog, load_gpu_catalog
from servewise.recipes import vllm_synth as synth
from servewise.recipes.library import user_recipe_dir
from servewise.recipes.load import argv_problem, load_yaml
from servewise.recipes.model import image_parts
from servewise.recipes.validate import Checker, Problem, RecipeDataError
from servewise.recipes.vllm_schema import check_model, check_strategy, check_taxonomy
from servewise.sources.bounded import escapes, read_regular_text

REPO_URL = "https://github.com/vllm-project/recipes"
Report = TypeVar("Report", bound="ImportReport")
STATUS = {"verified": "verified", "supported": "estimated", "assumed": "estimated",
          "unsupported": "unsupported"}
NOT_GPUS = {"tpu": "a Google TPU", "cpu": "a CPU (Intel Xeon)", "npu": "a Huawei Ascend NPU",
            "xpu": "an Intel GPU (XPU)"}
"""Hardware generations of the taxonomy that are not CUDA or ROCm GPUs, and what they are."""
PREFIX = "vllm-recipes."
"""File names of imported recipe files start with this."""


@dataclass(frozen=True)
class Skipped:
    """Something of the source that was not turned into a recipe, and why."""

    file: str
    what: str
    why: str

    def to_dict(self) -> dict[str, str]:
        """JSON-ready fields."""
        return {"file": self.file, "what": self.what, "why": self.why}


@dataclass
class ImportReport:
    """What an import read, wrote, skipped and refused, file by file."""

    source: str
    files_read: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    recipes: dict[str, int] = field(default_factory=dict)
    """Written file → number of recipes in it."""
    skipped: list[Skipped] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    """Every problem of the refused files (file and field path)."""
    outcomes: dict[str, str] = field(default_factory=dict)
    """Model file (relative to the clone) → ``imported``, ``out of scope`` or ``refused``."""
    dry_run: bool = False

    @property
    def refused(self) -> list[str]:
        """The model files refused for their problems."""
        return [name for name, outcome in self.outcomes.items() if outcome == "refused"]

    @property
    def exit_code(self) -> int:
        """0 when every file was imported or is out of scope, 1 when any was refused."""
        return 1 if self.refused else 0

    def counts(self) -> dict[str, int]:
        """How many model files ended each way."""
        found: dict[str, int] = {}
        for outcome in self.outcomes.values():
            found[outcome] = found.get(outcome, 0) + 1
        return found

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return {"source": self.source, "dry_run": self.dry_run, "files_read": self.files_read,
                "written": self.written, "recipes": self.recipes,
                "recipe_count": sum(self.recipes.values()), "files": self.counts(),
                "outcomes": self.outcomes, "refused": self.refused,
                "problems": [problem.to_dict() for problem in self.problems],
                "skipped": [item.to_dict() for item in self.skipped]}


def find_root(path: Path) -> Path:
    """The clone that holds ``path``: the first folder (itself or above) with a taxonomy."""
    start = path if path.is_dir() else path.parent
    for folder in (start, *start.parents):
        if (folder / "taxonomy.yaml").is_file() and (folder / "strategies").is_dir():
            return folder
    check = Checker(str(path))
    check.problem("(file)", "not inside a clone of vllm-project/recipes",
                  expected="taxonomy.yaml and strategies/ in this folder or above")
    raise RecipeDataError(check.problems, hint="give the clone's folder, or a file inside one")


def outside_clone(files: list[Path], root: Path, report: ImportReport,
                  strict: bool) -> list[Path]:
    """``files`` without those that resolve outside the clone ``root`` (symbolic links):
    those are not read, and are reported as skipped, or with ``strict`` refused."""
    kept = []
    for file in files:
        if not escapes(file, root):
            kept.append(file)
            continue
        name, target = os.path.relpath(file, root), os.path.realpath(file)
        why = f"a symbolic link leading outside the clone (to {target}): not read"
        if strict:
            report.problems.append(Problem(str(file), "(file)", why, found=target))
            report.outcomes[name] = "refused"
        else:
            report.skipped.append(Skipped(name, "file", why))
    return kept


def _load_yaml(path: Path, check: Checker) -> Any:
    try:
        text = read_regular_text(path, limit=MAX_CHARS, what="recipe file")
    except SourceError as exc:
        check.problem("(file)", f"refused: {exc.message}", expected=exc.fields.get("expected"),
                      found=exc.fields.get("found"))
        return None
    except (OSError, UnicodeDecodeError) as exc:
        check.problem("(file)", f"cannot read: {exc}")
        return None
    try:
        document = load_yaml(text, str(path))
    except YamlLimitError as exc:
        check.problem("(file)", f"refused: {exc.message}", expected=exc.expected,
                      found=exc.found)
        return None
    except yaml.YAMLError as exc:
        check.problem("(file)", f"not valid YAML: {exc}")
        return None
    if document is None:
        check.problem("(file)", "is empty", expected="a recipe (meta, model, variants, …)")
    return document


def _source_url(root: Path, relative: str) -> str:
    head = root / ".git" / "HEAD"
    ref = "main"
    try:
        text = head.read_text("utf-8").strip()
        if text.startswith("ref: "):
            target = root / ".git" / text[5:]
            ref = target.read_text("utf-8").strip() if target.is_file() else text.rsplit("/")[-1]
        elif re.fullmatch(r"[0-9a-f]{40}", text):
            ref = text
    except OSError:
        source = root / "SOURCE.md"
        found = re.search(r"\*\*Commit:\*\* `([0-9a-f]{40})`",
                          source.read_text("utf-8") if source.is_file() else "")
        if found:
            ref = found.group(1)
    return f"{REPO_URL}/blob/{ref}/{relative}"


def gpu_for(profile_id: str, profile: Mapping[str, Any], catalog: GpuCatalog) -> Gpu | None:
    """The catalog GPU of a taxonomy profile: by id or display name, with the same memory
    per GPU (within 15 %)."""
    stripped = re.sub(r"_\d+x$", "", profile_id)
    names = [stripped, str(profile.get("display_name", "")),
             re.sub(r"^dgx_(spark|station)_", "", stripped), stripped.split("_")[-1]]
    count = int(profile.get("gpu_count") or 1)
    per_gpu = synth.node_vram(profile) / count
    names.insert(1, f"{stripped}_{round(per_gpu)}gb")
    for name in names:
        gpu = catalog.get(name) if name else None
        if gpu is not None and abs(gpu.memory_bytes / 1e9 - per_gpu) <= 0.15 * per_gpu:
            return gpu
    return None


def _strategies_for(model: Mapping[str, Any]) -> list[str]:
    """``compatible_strategies`` plus those ``strategy_hardware`` grants somewhere."""
    listed = [str(s) for s in model.get("compatible_strategies") or []]
    grants = [str(s) for s, table in (model.get("strategy_hardware") or {}).items()
              if s not in listed and isinstance(table, Mapping)
              and "supported" in table.values()]
    return listed + grants


def _strategy_allowed(model: Mapping[str, Any], strategy_id: str,
                      profile: Mapping[str, Any], hw_id: str) -> bool:
    gate = synth.keyed((model.get("strategy_hardware") or {}).get(strategy_id), profile, hw_id)
    if gate is not None:
        return bool(gate != "unsupported")
    return strategy_id in (model.get("compatible_strategies") or [])


def _nodes(model: Mapping[str, Any], variant: Mapping[str, Any], strategy_id: str,
           strategy: Mapping[str, Any], profile: Mapping[str, Any],
           hw_id: str) -> int | str:
    """Nodes a combination runs on, or why it is not offered."""
    deploy = strategy.get("deploy_type")
    count = int(profile.get("gpu_count") or 1)
    match = strategy.get("hardware_match") or {}
    if match.get("architecture") and match["architecture"] != (model.get("model") or {}).get(
            "architecture"):
        return f"for {match['architecture']} models only"
    if not _strategy_allowed(model, strategy_id, profile, hw_id):
        return "strategy_hardware switches it off on this hardware"
    scalable = profile.get("scalable") is not False
    needed, node = synth.vram_minimum(variant), synth.node_vram(profile)
    if deploy == "single_node":
        low, high = int(match.get("min_gpus", 1)), int(match.get("max_gpus", count))
        if not low <= count <= high:
            return f"needs {low}-{high} GPUs on a node; {hw_id} has {count}"
        if synth.min_gpus(model, strategy_id, hw_id) > count:
            return f"strategy_min_gpus asks {synth.min_gpus(model, strategy_id, hw_id)} GPUs"
        if needed and node and needed > node:
            return (f"needs {needed:g} GB (vram_minimum_gb); one {hw_id} node has {node:g} GB"
                    + ("; see its multi-node recipes" if scalable else ""))
        return 1
    if not scalable:
        return f"{hw_id} is a workstation that does not join a cluster"
    if deploy == "pd_cluster":
        return 1
    nodes = max(2, synth.nodes_for(model, strategy_id, count, hw_id),
                math.ceil(needed / node) if needed and node else 1)
    if nodes > synth.MAX_NODES:
        return f"needs {nodes} nodes, more than the {synth.MAX_NODES} the site offers"
    return nodes


def _image(model: Mapping[str, Any], variant: Mapping[str, Any], profile: Mapping[str, Any],
           hw_id: str, version: str | None) -> tuple[str | None, list[tuple[str, str]]]:
    """The image for this hardware (the site's computeDockerMeta) and, for a map per CUDA
    variant, every one of them (the first is the default)."""
    key = synth.brand(profile) if synth.brand(profile) in ("nvidia", "amd") else "nvidia"
    exact = ((variant.get("hardware_overrides") or {}).get(hw_id) or {}).get("docker_image")
    if isinstance(exact, str):
        return exact, []
    for raw in (variant.get("docker_image"), (model.get("model") or {}).get("docker_image")):
        if isinstance(raw, str):
            if key == "nvidia":
                return raw, []
            continue
        if not isinstance(raw, Mapping):
            continue
        value = raw.get(key) if any(k in raw for k in ("nvidia", "amd", "tpu", "intel")) \
            else (raw if key == "nvidia" else None)
        if isinstance(value, str):
            return value, []
        if isinstance(value, Mapping) and key == "nvidia":
            cuda = [(str(k), str(v)) for k, v in value.items() if isinstance(v, str)]
            if cuda:
                return cuda[0][1], cuda
    spec = model.get("model") or {}
    repository = synth.DEFAULT_IMAGE[key]
    if spec.get("nightly_required") is True or version is None:
        return f"{repository}:{'nightly' if spec.get('nightly_required') else 'latest'}", []
    return f"{repository}:v{version}", []


def _version(model: Mapping[str, Any], variant: Mapping[str, Any]) -> str | None:
    value = variant.get("min_vllm_version") or (model.get("model") or {}).get("min_vllm_version")
    if value is None or str(value).lower() == "nightly":
        return None
    return str(value)


def _recipe(model: Mapping[str, Any], relative: str, variant_name: str, hw_id: str,
            state: str, gpu: Gpu, strategy_id: str, strategy: Mapping[str, Any],
            profile: Mapping[str, Any], nodes: int | None) -> dict[str, Any] | str:
    spec = model["model"]
    variant = model["variants"][variant_name]
    pool_nodes = None
    if strategy.get("deploy_type") == "pd_cluster":
        picked = synth.pd_nodes(model, variant, strategy, profile, hw_id)
        if picked == "skip":
            return f"prefill/decode pools would need more than {synth.MAX_POOL_NODES} nodes each"
        pool_nodes = picked if isinstance(picked, dict) else None
    made = synth.synthesize(model, variant_name, strategy_id, strategy, hw_id, profile,
                            nodes or 1, pool_nodes)
    version = _version(model, variant)
    image, images = _image(model, variant, profile, hw_id, version)
    if image is not None and image_parts(image) is None:
        return f"its docker_image {image!r} is not an image reference"
    slug = relative.removeprefix("models/").removesuffix(".yaml").lower()
    recipe: dict[str, Any] = {
        "id": f"vllm-recipes/{slug}/{variant_name}/{hw_id}/{strategy_id}".lower(),
        "match": {"variant": str(variant_name), "quant": str(variant["precision"]),
                  "hw": gpu.id, "gpus": made.gpus, "strategy": strategy_id,
                  "nodes": made.nodes},
        "checkpoint": str(variant.get("model_id") or spec["model_id"]),
        "argv": made.argv,
        "status": STATUS[state],
        "derived": True,
    }
    if image is not None:
        recipe["image"] = image
    if images:
        recipe["images"] = dict(images)
    if version is not None:
        recipe["min_version"] = version
    if made.env:
        recipe["env"] = made.env
    if made.multinode:
        recipe["multinode"] = made.multinode
    if made.pools:
        recipe["pools"] = [{"role": pool.role, "argv": pool.argv, "env": pool.env,
                            "nodes": pool.nodes, **({"multinode": pool.multinode}
                                                    if pool.multinode else {})}
                           for pool in made.pools]
        recipe["router"] = made.router
    notes = []
    if str(spec.get("min_vllm_version", "")).lower() == "nightly":
        notes.append("needs a vLLM nightly newer than the last release (min_vllm_version: "
                     "nightly)")
    needed = synth.vram_minimum(variant)
    if needed:
        notes.append(f"the recipe's vram_minimum_gb: {needed:g}")
    if notes:
        recipe["notes"] = "; ".join(notes)
    return recipe


def _model_document(
    relative: str, model: Mapping[str, Any], taxonomy: Mapping[str, Any],
    strategies: Mapping[str, Mapping[str, Any]], catalog: GpuCatalog, source: str,
    report: ImportReport,
) -> dict[str, Any] | str:
    """The servewise recipe file of one model, or why it is out of scope."""
    profiles = taxonomy["hardware_profiles"]
    spec, meta = model["model"], model["meta"]
    tasks = [str(task) for task in meta.get("tasks") or []]
    if "omni" in tasks or not _strategies_for(model):
        return ("no serving strategy for text generation: a speech, image or video model "
                f"served through vLLM-Omni (tasks: {', '.join(tasks) or 'none'})")
    recipes: list[dict[str, Any]] = []
    gpus_named = 0
    claims = dict(meta.get("hardware") or {})
    # A profile the file does not name is "assumed fine, not claimed": the site offers it
    # (restricted profiles only where named); it becomes an estimated recipe.
    for hw_id, profile in profiles.items():
        if hw_id not in claims and not profile.get("restricted") \
                and synth.generation(profile) not in NOT_GPUS:
            claims[hw_id] = "assumed"
    for hw_id, state in claims.items():
        profile = profiles.get(hw_id)
        if profile is None:
            report.skipped.append(Skipped(relative, f"hardware {hw_id}", "not a hardware "
                                          "profile of taxonomy.yaml (the site ignores it)"))
            continue
        kind = NOT_GPUS.get(synth.generation(profile))
        if kind is not None:
            report.skipped.append(Skipped(relative, f"hardware {hw_id}", f"{kind}: servewise "
                                          "serves CUDA and ROCm GPUs"))
            continue
        gpus_named += 1
        gpu = gpu_for(hw_id, profile, catalog)
        if gpu is None and state == "assumed":
            continue
        if gpu is None:
            report.skipped.append(Skipped(relative, f"hardware {hw_id}",
                                          "not in servewise's GPU catalog"))
            continue
        for variant_name, variant in model["variants"].items():
            if not synth.precision_fits(variant, profile):
                if state == "assumed":
                    continue
                report.skipped.append(Skipped(relative, f"{variant_name} on {hw_id}",
                                              f"{variant.get('precision')} does not run on "
                                              f"{profile.get('generation')} GPUs"))
                continue
            allowed = variant.get("supported_hardware")
            if isinstance(allowed, list) and allowed and hw_id not in allowed:
                if state == "assumed":
                    continue
                report.skipped.append(Skipped(relative, f"{variant_name} on {hw_id}",
                                              "the variant's supported_hardware leaves it out"))
                continue
            for strategy_id in _strategies_for(model):
                strategy = strategies[strategy_id]
                if strategy.get("deploy_type") == "kv_store_lb":
                    continue
                what = f"{variant_name} / {hw_id} / {strategy_id}"
                nodes = _nodes(model, variant, strategy_id, strategy, profile, hw_id)
                if isinstance(nodes, str):
                    if state != "assumed":
                        report.skipped.append(Skipped(relative, what, nodes))
                    continue
                made = _recipe(model, relative, variant_name, hw_id, str(state), gpu,
                               strategy_id, strategy, profile, nodes)
                if isinstance(made, str):
                    report.skipped.append(Skipped(relative, what, made))
                    continue
                recipes.append(made)
    if not recipes:
        if gpus_named == 0:
            return "names no GPU servewise serves (only TPU, CPU, NPU or XPU hardware)"
        return "no combination to import (every one is skipped above)"
    model_id = str(spec["model_id"])
    path_id = relative.removeprefix("models/").removesuffix(".yaml")
    date = meta.get("date_updated") or meta.get("date_added")
    provenance: dict[str, Any] = {"who": "vllm-project/recipes contributors", "source": source}
    if date is not None:
        provenance["date"] = str(date)
    document: dict[str, Any] = {
        "schema": 1, "model": model_id, "engine": "vllm",
        "notes": f"Imported by `servewise recipe import` from {source}.",
        "defaults": {"provenance": provenance}, "recipes": recipes}
    if path_id.lower() != model_id.lower():
        document["aliases"] = [path_id]
    return document


def _read_shared(root: Path, report: ImportReport) -> tuple[Mapping[str, Any],
                                                            dict[str, Mapping[str, Any]]]:
    """The taxonomy and the strategies (``strategies/`` and ``kv_store/``); a problem in
    them refuses the whole import: every model depends on them."""
    problems: list[Problem] = []
    taxonomy_check = Checker(str(root / "taxonomy.yaml"))
    taxonomy = check_taxonomy(_load_yaml(root / "taxonomy.yaml", taxonomy_check),
                              taxonomy_check)
    problems += taxonomy_check.problems
    report.files_read.append(str(root / "taxonomy.yaml"))
    strategies: dict[str, Mapping[str, Any]] = {}
    for folder in ("strategies", "kv_store"):
        for file in sorted((root / folder).glob("*.yaml")):
            check = Checker(str(file))
            if escapes(file, root):
                check.problem("(file)", "a symbolic link leading outside the clone",
                              expected="a file inside the clone", found=os.path.realpath(file))
                problems += check.problems
                continue
            strategy = check_strategy(_load_yaml(file, check), file.stem, check)
            problems += check.problems
            report.files_read.append(str(file))
            if strategy is not None:
                strategies[file.stem] = strategy
    if problems or taxonomy is None:
        raise RecipeDataError(problems, hint="nothing was imported: every model file depends "
                                             "on the taxonomy and the strategies")
    return taxonomy, strategies


def _model_files(path: Path, root: Path) -> list[Path]:
    resolved = path.resolve()
    if resolved.is_dir():
        files = sorted((root / "models").glob("*/*.yaml")) if resolved == root \
            else sorted(resolved.rglob("*.yaml"))
        return [f for f in files if f.relative_to(root).parts[:1] == ("models",)]
    return [resolved] if resolved.relative_to(root).parts[0] == "models" else []


def _flag_problems(document: Mapping[str, Any], file: str) -> list[Problem]:
    """The flags of the made recipes that the engine-flag table refuses, by model-file path
    (every other field is the importer's own: recipe files are checked again when read)."""
    table = load_flag_table()
    problems = []
    for recipe in document["recipes"]:
        lists = [("argv", recipe["argv"])] + [(f"pools.{pool['role']}.argv", pool["argv"])
                                               for pool in recipe.get("pools", ())]
        for where, argv in lists:
            found = argv_problem("vllm", tuple(argv), recipe.get("min_version"), table)
            if found is not None:
                problems.append(Problem(file, f"{recipe['id']}: {where}", found[0],
                                        found=found[1]))
    return problems


def convert_vllm_recipes(
    path: Path, *, catalog: GpuCatalog | None = None, strict: bool = False,
) -> tuple[ImportReport, dict[str, str]]:
    """The servewise recipe files (name → YAML text) of a clone or a file of one, and the
    report; nothing is written. ``strict``: any refused file raises RecipeDataError."""
    path = path.expanduser()
    if not path.exists():
        check = Checker(str(path))
        check.problem("(file)", "no such file or folder")
        raise RecipeDataError(check.problems, hint="give a clone of vllm-project/recipes")
    catalog = catalog or load_gpu_catalog()
    root = find_root(path.resolve())
    report = ImportReport(source=str(path))
    taxonomy, strategies = _read_shared(root, report)
    texts: dict[str, str] = {}
    for file in outside_clone(_model_files(path, root), root, report, strict):
        relative = file.relative_to(root).as_posix()
        check = Checker(str(file))
        model = check_model(_load_yaml(file, check), relative, taxonomy, strategies, check)
        report.files_read.append(str(file))
        if model is None or check.problems:
            report.problems += check.problems
            report.outcomes[relative] = "refused"
            continue
        document = _model_document(relative, model, taxonomy, strategies, catalog,
                                   _source_url(root, relative), report)
        if isinstance(document, str):
            report.skipped.append(Skipped(relative, "model", document))
            report.outcomes[relative] = "out of scope"
            continue
        name = PREFIX + relative.removeprefix("models/").removesuffix(".yaml") \
            .replace("/", ".") + ".vllm.json"
        refused = _flag_problems(document, str(file))
        if refused:  # a flag value the engine table refuses (``--max-model-len four``)
            report.problems += refused
            report.outcomes[relative] = "refused"
            continue
        texts[name] = json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n"
        report.recipes[name] = len(document["recipes"])
        report.outcomes[relative] = "imported"
    if strict and report.problems:
        raise RecipeDataError(report.problems, hint="nothing was imported (--strict); fix the "
                                                    "fields named above")
    return report, texts


def import_vllm_recipes(
    path: Path, *, user_dir: Path | None = None, dry_run: bool = False,
    catalog: GpuCatalog | None = None, strict: bool = False,
) -> ImportReport:
    """Import a clone of vllm-project/recipes (or one file of it) into the user folder.

    The good files are written, all at once; the refused ones are in the report with every
    problem (``report.exit_code`` is 1). With ``strict``, any problem raises
    :class:`RecipeDataError` before anything is written.
    """
    report, texts = convert_vllm_recipes(path, catalog=catalog or load_gpu_catalog(user_dir),
                                         strict=strict)
    return finish_import(report, texts, user_dir, dry_run)


def finish_import(report: Report, texts: Mapping[str, str], user_dir: Path | None,
                  dry_run: bool) -> Report:
    """Write an import's files to the user's recipe folder (unless ``dry_run``), and say
    where in the report."""
    report.dry_run = dry_run
    target = user_recipe_dir(user_dir)
    report.written = [str(target / name) for name in texts]
    if not dry_run and texts:
        write_all(target, texts)
    return report


def write_all(folder: Path, texts: Mapping[str, str]) -> None:
    """Write every file to a temporary name first, then rename them all into place."""
    folder.mkdir(parents=True, exist_ok=True)
    staged: list[tuple[str, Path]] = []
    try:
        for name, text in texts.items():
            handle, temp_name = tempfile.mkstemp(prefix=".import-", suffix=".tmp", dir=folder)
            staged.append((name, Path(temp_name)))
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                stream.write(text)
        for name, staged_path in staged:
            os.replace(staged_path, folder / name)
    except BaseException as exc:
        for _, staged_path in staged:
            staged_path.unlink(missing_ok=True)
        if not isinstance(exc, OSError):
            raise
        check = Checker(str(folder))
        check.problem("(folder)", f"cannot write: {exc}")
        raise RecipeDataError(check.problems, hint="check the folder's permissions and space") \
            from exc


__all__ = ["ImportReport", "Skipped", "convert_vllm_recipes", "find_root", "finish_import",
           "gpu_for", "import_vllm_recipes", "write_all"]
