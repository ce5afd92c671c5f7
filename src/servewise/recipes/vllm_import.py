"""Importing vLLM's recipe database (github.com/vllm-project/recipes) into the user folder.

``import_vllm_recipes(PATH)`` reads a clone (``models/<org>/<repo>.yaml``, ``strategies/``,
``taxonomy.yaml``) or any one file of it (the clone around it gives the strategies and the
taxonomy). Every file is checked first and every problem reported with its file and
field path; then one servewise recipe file per model is written to
``$SERVEWISE_DATA_DIR/recipes/`` (temporary files renamed into place), so a bad file
leaves nothing half-imported.

A recipe is made for each variant x each hardware profile that ``meta.hardware`` names
(``verified`` → verified, ``supported`` → estimated, ``unsupported`` → unsupported; an
unnamed profile is "assumed fine, not claimed" and is not imported) x each compatible
single-node strategy that fits the profile's GPU count, the way the site synthesises its
command: base args, variant args, strategy args and its parallel flag, hardware overrides
(brand, generation, exact profile; a strategy's own overrides replace the recipe-level
ones), strategy extra args, the features that are on by default, last flag wins. Profiles
the GPU catalog does not know (AMD, TPU, CPU, …) and multi-node or PD strategies are
skipped, each with its reason in the report.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from servewise.knowledge.gpus import Gpu, GpuCatalog, load_gpu_catalog
from servewise.recipes import argv as argv_tools
from servewise.recipes.load import load_yaml, parse_recipe_file, user_recipe_dir
from servewise.recipes.validate import Checker, RecipeDataError
from servewise.recipes.vllm_schema import check_model, check_strategy, check_taxonomy

REPO_URL = "https://github.com/vllm-project/recipes"
STATUS = {"verified": "verified", "supported": "estimated", "unsupported": "unsupported"}


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
    """What an import read, wrote and skipped."""

    source: str
    files_read: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    recipes: dict[str, int] = field(default_factory=dict)
    """Written file → number of recipes in it."""
    skipped: list[Skipped] = field(default_factory=list)
    dry_run: bool = False

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return {"source": self.source, "dry_run": self.dry_run, "files_read": self.files_read,
                "written": self.written, "recipes": self.recipes,
                "recipe_count": sum(self.recipes.values()),
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


def _load_yaml(path: Path, check: Checker) -> Any:
    try:
        return load_yaml(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        check.problem("(file)", f"cannot read: {exc}")
    except yaml.YAMLError as exc:
        check.problem("(file)", f"not valid YAML: {exc}")
    return None


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
        pass
    return f"{REPO_URL}/blob/{ref}/{relative}"


def _gpu_for(profile_id: str, profile: Mapping[str, Any], catalog: GpuCatalog) -> Gpu | None:
    stripped = re.sub(r"_\d+x$", "", profile_id)
    names = [stripped, str(profile.get("display_name", "")), stripped.split("_")[-1]]
    for name in names:
        gpu = catalog.get(name) if name else None
        if gpu is None:
            continue
        per_gpu = float(profile["vram_gb"]) / int(profile["gpu_count"])
        if abs(gpu.memory_bytes / 1e9 - per_gpu) <= 0.15 * per_gpu:
            return gpu
    return None


def _overrides(block: Any, keys: list[str]) -> list[Mapping[str, Any]]:
    if not isinstance(block, Mapping):
        return []
    return [block[key] for key in keys if isinstance(block.get(key), Mapping)]


def _dedupe(argv: list[str]) -> list[str]:
    """Last value of each flag wins, at the flag's first place (the site's dedupeArgs)."""
    segments: list[tuple[str, list[str]]] = []
    index = 0
    while index < len(argv):
        word = argv[index]
        words = [word]
        if word.startswith("--") and "=" not in word and index + 1 < len(argv) \
                and not argv[index + 1].startswith("--"):
            words.append(argv[index + 1])
            index += 1
        segments.append((argv_tools.flag_key(word) if word.startswith("--") else word, words))
        index += 1
    last = {key: words for key, words in segments}
    out: list[str] = []
    seen: set[str] = set()
    for key, _ in segments:
        if key not in seen:
            seen.add(key)
            out.extend(last[key])
    return out


def _env(items: Any) -> dict[str, str]:
    if not isinstance(items, Mapping):
        return {}
    return {str(k): str(v) for k, v in items.items() if v is not None}


def _parallel_size(args: list[str]) -> int:
    size = 1
    for flag in ("--tensor-parallel-size", "--data-parallel-size", "--pipeline-parallel-size"):
        value = argv_tools.last_value(args, flag)
        if value is not None and value.isdigit():
            size *= int(value)
    return size


def _cap(value: Any, keys: list[str]) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, Mapping):
        for key in reversed(keys):
            if isinstance(value.get(key), int):
                return int(value[key])
    return None


def _synthesize(
    model: Mapping[str, Any], variant_name: str, variant: Mapping[str, Any], hw_id: str,
    profile: Mapping[str, Any], strategy_id: str, strategy: Mapping[str, Any],
) -> tuple[list[str], dict[str, str], str | None, str | None]:
    spec = model["model"]
    keys = [str(profile.get("brand", "")).lower(), str(profile.get("generation", "")), hw_id]
    strategy_over = (model.get("strategy_overrides") or {}).get(strategy_id) or {}
    count = int(profile["gpu_count"])
    for cap in (_cap(strategy_over.get("tp"), keys), _cap(variant.get("tp"), keys)):
        if cap is not None:
            count = min(count, cap)
    args = list(spec.get("base_args") or []) + list(variant.get("extra_args") or [])
    args += list(strategy.get("vllm_args") or [])
    args += [str(strategy["parallel_flag"]), str(count)]
    env = {**_env(spec.get("base_env")), **_env(variant.get("extra_env")),
           **_env(strategy.get("env"))}
    image: Any = spec.get("docker_image")
    for over in _hardware_overrides(model, variant, strategy_over, keys):
        args += list(over.get("extra_args") or [])
        env.update(_env(over.get("extra_env")))
    args += list(strategy_over.get("extra_args") or [])
    env.update(_env(strategy_over.get("env")))
    args += _feature_args(model, variant_name, variant, hw_id, keys)
    if isinstance(image, Mapping):
        image = next((image[key] for key in reversed(keys) if key in image), None)
    image = variant.get("docker_image", image)
    for over in _overrides(variant.get("hardware_overrides"), keys):
        image = over.get("docker_image", image)
    version = variant.get("min_vllm_version") or spec.get("min_vllm_version")
    if image is None and version and keys[0] == "nvidia":
        image = f"vllm/vllm-openai:v{version}"
    return _dedupe(args), env, image, str(version) if version else None


def _hardware_overrides(
    model: Mapping[str, Any], variant: Mapping[str, Any], strategy_over: Mapping[str, Any],
    keys: list[str],
) -> list[Mapping[str, Any]]:
    """Per key (brand, generation, profile): the strategy's override replaces the recipe's and
    the variant's for that key; otherwise the recipe's, then the variant's."""
    found: list[Mapping[str, Any]] = []
    for key in keys:
        own = _overrides(strategy_over.get("hardware_overrides"), [key])
        if own:
            found += own
            continue
        found += _overrides(model.get("hardware_overrides"), [key])
        found += _overrides(variant.get("hardware_overrides"), [key])
    return found


def _feature_args(model: Mapping[str, Any], variant_name: str, variant: Mapping[str, Any],
                  hw_id: str, keys: list[str]) -> list[str]:
    opt_in = set(model.get("opt_in_features") or [])
    chosen = dict(variant.get("default_modes") or {})
    args: list[str] = []
    for name, feature in (model.get("features") or {}).items():
        if not isinstance(feature, Mapping):
            continue
        if "modes" not in feature:
            if name not in opt_in:
                args += list(feature.get("args") or [])
            continue
        if name in opt_in and name not in chosen:
            continue
        mode_name = chosen.get(name, feature.get("default_mode"))
        mode = (feature.get("modes") or {}).get(mode_name)
        if not isinstance(mode, Mapping):
            continue
        if mode.get("variants") and variant_name not in mode["variants"]:
            continue
        if (mode.get("hardware") or {}).get(hw_id) == "unsupported":
            continue
        mode_args = list(mode.get("args") or [])
        for over in _overrides(mode.get("hardware_overrides"), keys):
            mode_args = list(over.get("args") or mode_args)
        args += mode_args
    return args


def _fits(strategy: Mapping[str, Any], profile: Mapping[str, Any], model: Mapping[str, Any],
          strategy_id: str, hw_id: str) -> str | None:
    if strategy.get("deploy_type") != "single_node":
        return f"{strategy.get('deploy_type')} strategy: servewise imports single-node ones"
    match = strategy.get("hardware_match") or {}
    count = int(profile["gpu_count"])
    if count < int(match.get("min_gpus", 1)) or count > int(match.get("max_gpus", count)):
        return f"needs {match.get('min_gpus', 1)}-{match.get('max_gpus', '')} GPUs, " \
               f"the profile has {count}"
    if match.get("architecture") and match["architecture"] != model["model"].get("architecture"):
        return f"for {match['architecture']} models only"
    if ((model.get("strategy_hardware") or {}).get(strategy_id) or {}).get(hw_id) == "unsupported":
        return "strategy_hardware marks it unsupported"
    return None


def _model_document(
    path: Path, relative: str, model: Mapping[str, Any], taxonomy: Mapping[str, Any],
    strategies: Mapping[str, Mapping[str, Any]], catalog: GpuCatalog, source: str,
    report: ImportReport,
) -> dict[str, Any] | None:
    profiles = taxonomy["hardware_profiles"]
    spec = model["model"]
    meta = model["meta"]
    model_id = str(spec["model_id"])
    slug = model_id.lower().replace("/", "/")
    recipes = []
    for hw_id, state in (meta.get("hardware") or {}).items():
        gpu = _gpu_for(hw_id, profiles[hw_id], catalog)
        if gpu is None:
            report.skipped.append(Skipped(relative, f"hardware {hw_id}",
                                          "not in servewise's GPU catalog"))
            continue
        for variant_name, variant in model["variants"].items():
            for strategy_id in model.get("compatible_strategies") or []:
                strategy = strategies[strategy_id]
                why = _fits(strategy, profiles[hw_id], model, strategy_id, hw_id)
                if why is not None:
                    report.skipped.append(Skipped(relative, f"{hw_id} / {strategy_id}", why))
                    continue
                args, env, image, version = _synthesize(model, variant_name, variant, hw_id,
                                                        profiles[hw_id], strategy_id, strategy)
                recipe: dict[str, Any] = {
                    "id": f"vllm-recipes/{slug}/{variant_name}/{hw_id}/{strategy_id}".lower(),
                    "match": {"variant": str(variant_name), "quant": str(variant["precision"]),
                              "hw": gpu.id, "gpus": _parallel_size(args),
                              "strategy": strategy_id, "nodes": 1},
                    "checkpoint": str(variant.get("model_id") or model_id),
                    "argv": args,
                    "status": STATUS[state],
                }
                if image is not None:
                    recipe["image"] = image
                if version is not None:
                    recipe["min_version"] = version
                if env:
                    recipe["env"] = env
                recipes.append(recipe)
    if not recipes:
        return None
    date = meta.get("date_updated") or meta.get("date_added")
    provenance: dict[str, Any] = {"who": "vllm-project/recipes contributors", "source": source}
    if date is not None:
        provenance["date"] = str(date)
    return {"schema": 1, "model": model_id, "engine": "vllm",
            "notes": f"Imported by `servewise recipe import` from {source}.",
            "defaults": {"provenance": provenance}, "recipes": recipes}


def import_vllm_recipes(
    path: Path, *, user_dir: Path | None = None, dry_run: bool = False,
    catalog: GpuCatalog | None = None,
) -> ImportReport:
    """Import a clone of vllm-project/recipes (or one file of it) into the user folder.

    Raises :class:`RecipeDataError` with every problem (file and field path) before
    anything is written.
    """
    path = path.expanduser()
    if not path.exists():
        check = Checker(str(path))
        check.problem("(file)", "no such file or folder")
        raise RecipeDataError(check.problems, hint="give a clone of vllm-project/recipes")
    catalog = catalog or load_gpu_catalog(user_dir)
    root = find_root(path.resolve())
    report = ImportReport(source=str(path), dry_run=dry_run)
    problems = []
    taxonomy_check = Checker(str(root / "taxonomy.yaml"))
    taxonomy = check_taxonomy(_load_yaml(root / "taxonomy.yaml", taxonomy_check), taxonomy_check)
    problems += taxonomy_check.problems
    report.files_read.append(str(root / "taxonomy.yaml"))
    strategies: dict[str, Mapping[str, Any]] = {}
    for file in sorted((root / "strategies").glob("*.yaml")):
        check = Checker(str(file))
        strategy = check_strategy(_load_yaml(file, check), file.stem, check)
        problems += check.problems
        report.files_read.append(str(file))
        if strategy is not None:
            strategies[file.stem] = strategy
    if path.resolve().is_dir():
        model_files = sorted((root / "models").glob("*/*.yaml")) if path.resolve() == root \
            else sorted(path.resolve().rglob("*.yaml"))
        model_files = [f for f in model_files if "models" in f.relative_to(root).parts[:1]]
    else:
        model_files = [path.resolve()] if path.resolve().relative_to(root).parts[0] == "models" \
            else []
    documents: dict[str, dict[str, Any]] = {}
    for file in model_files:
        relative = file.relative_to(root).as_posix()
        check = Checker(str(file))
        model = check_model(_load_yaml(file, check), relative, taxonomy, strategies, check)
        problems += check.problems
        report.files_read.append(str(file))
        if model is None or check.problems or taxonomy is None:
            continue
        document = _model_document(file, relative, model, taxonomy, strategies, catalog,
                                   _source_url(root, relative), report)
        if document is None:
            report.skipped.append(Skipped(relative, "model", "no hardware profile to import"))
            continue
        name = "vllm-recipes." + relative.removeprefix("models/").removesuffix(".yaml") \
            .replace("/", ".") + ".vllm.yaml"
        documents[name] = document
    if problems:
        raise RecipeDataError(problems, hint="nothing was imported; fix the fields named above "
                                             "(or import the good files one by one)")
    texts = {}
    for name, document in documents.items():
        text = yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=100)
        recipes = parse_recipe_file(text, name, catalog, user=True)
        texts[name] = text
        report.recipes[name] = len(recipes)
    target = user_recipe_dir(user_dir)
    report.written = [str(target / name) for name in texts]
    if not dry_run and texts:
        _write_all(target, texts)
    return report


def _write_all(folder: Path, texts: Mapping[str, str]) -> None:
    """Write every file to a temporary name first, then rename them all into place."""
    folder.mkdir(parents=True, exist_ok=True)
    staged: list[tuple[str, Path]] = []
    try:
        for name, text in texts.items():
            handle, temp_name = tempfile.mkstemp(prefix=".import-", suffix=".tmp", dir=folder)
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                stream.write(text)
            staged.append((name, Path(temp_name)))
        for name, staged_path in staged:
            os.replace(staged_path, folder / name)
    except OSError as exc:
        for _, staged_path in staged:
            staged_path.unlink(missing_ok=True)
        check = Checker(str(folder))
        check.problem("(folder)", f"cannot write: {exc}")
        raise RecipeDataError(check.problems, hint="check the folder's permissions and space") \
            from exc


__all__ = ["ImportReport", "Skipped", "find_root", "import_vllm_recipes"]
