"""Checks of vllm-project/recipes files: taxonomy, strategies and model recipes.

The repository has no schema file; these checks follow its contributor docs and what its
site builder relies on (see shared/data/recipes/vllm-project-recipes/SOURCE.md): every id
a model names (hardware, strategies, features, variants, modes) must be defined, lists of
arguments are lists of strings, ``variants.default`` exists. Each check records every
problem with its field path and returns the document (or None when it cannot be used).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from servewise.recipes.validate import Checker, short

DEPLOY_TYPES = ("single_node", "multi_node", "pd_cluster", "kv_store_lb")
HARDWARE_STATES = ("verified", "supported", "unsupported")


def _args(check: Checker, data: Mapping[str, Any], key: str, path: str) -> None:
    value = data.get(key)
    if value is None:
        return
    if not isinstance(value, list):
        check.problem(f"{path}.{key}", "must be a list of arguments", found=type(value).__name__)
        return
    for index, item in enumerate(value):
        if not isinstance(item, str):
            check.problem(f"{path}.{key}[{index}]", "must be a string (quote numbers)",
                          found=short(item))


def _env(check: Checker, data: Mapping[str, Any], key: str, path: str) -> None:
    value = data.get(key)
    if value is None:
        return
    env = check.mapping(value, f"{path}.{key}")
    if env is None:
        return
    for name, item in env.items():
        if item is not None and not isinstance(item, str | int | float):
            check.problem(f"{path}.{key}.{name}", "must be a string", found=short(item))


def _min_version(check: Checker, data: Mapping[str, Any], path: str) -> None:
    """``min_vllm_version``: a version, or ``nightly`` (newer than the last release)."""
    if str(data.get("min_vllm_version", "")).lower() != "nightly":
        check.version(data, "min_vllm_version", path)


def check_taxonomy(document: Any, check: Checker) -> Mapping[str, Any] | None:
    """``taxonomy.yaml``: hardware profiles (brand, generation, GPU count, VRAM) and ids."""
    if document is None:
        return None
    data = check.mapping(document, "(file)")
    if data is None:
        return None
    profiles = check.mapping(data.get("hardware_profiles"), "hardware_profiles")
    if profiles is not None:
        for ident, profile in profiles.items():
            path = f"hardware_profiles.{ident}"
            entry = check.mapping(profile, path)
            if entry is None:
                continue
            check.string(entry, "brand", path)
            check.string(entry, "generation", path)
            check.positive_int(entry, "gpu_count", path)
            vram = entry.get("vram_gb")
            if isinstance(vram, bool) or not isinstance(vram, int | float) or vram <= 0:
                check.problem(f"{path}.vram_gb", "must be a positive number", found=short(vram))
    strategies = data.get("strategies")
    if not isinstance(strategies, list) or not all(isinstance(s, str) for s in strategies):
        check.problem("strategies", "must be a list of strategy ids", found=short(strategies))
    return data if not check.problems else None


def check_strategy(document: Any, stem: str, check: Checker) -> Mapping[str, Any] | None:
    """``strategies/NAME.yaml``: name, deploy type, hardware match, args, parallel flag."""
    if document is None:
        return None
    data = check.mapping(document, "(file)")
    if data is None:
        return None
    name = check.string(data, "name", "")
    if name is not None and name != stem:
        check.problem("name", "must be the file's name", expected=stem, found=name)
    deploy = check.choice(data, "deploy_type", "", DEPLOY_TYPES)
    if deploy == "kv_store_lb":  # Mooncake deployments: composed around a strategy
        return data if not check.problems else None
    match = check.mapping(data.get("hardware_match"), "hardware_match")
    if match is not None:
        check.positive_int(match, "min_gpus", "hardware_match", default=1)
        if "max_gpus" in match:
            check.positive_int(match, "max_gpus", "hardware_match")
    flag = check.string(data, "parallel_flag", "")
    if flag is not None and not flag.startswith("--"):
        check.problem("parallel_flag", "must be a flag", expected="--name", found=flag)
    _args(check, data, "vllm_args", "")
    _env(check, data, "env", "")
    return data if not check.problems else None


def _overrides(check: Checker, value: Any, path: str, variants: set[str] | None) -> None:
    if value is None:
        return
    block = check.mapping(value, path)
    if block is None:
        return
    for key, over in block.items():
        entry = check.mapping(over, f"{path}.{key}") if over is not None else None
        if entry is None:
            continue
        _args(check, entry, "extra_args", f"{path}.{key}")
        _args(check, entry, "args", f"{path}.{key}")
        _env(check, entry, "extra_env", f"{path}.{key}")
        if "docker_image" in entry:
            check.string(entry, "docker_image", f"{path}.{key}")


def check_model(
    document: Any, relative: str, taxonomy: Mapping[str, Any] | None,
    strategies: Mapping[str, Any], check: Checker,
) -> Mapping[str, Any] | None:
    """``models/ORG/REPO.yaml``: meta, model, variants, features and strategy references."""
    if document is None:
        return None
    data = check.mapping(document, "(file)")
    if data is None:
        return None
    meta = check.mapping(data.get("meta"), "meta")
    if meta is not None and meta.get("hardware") is not None:
        # an id the taxonomy lacks is ignored by the site (the importer reports it skipped)
        hardware = check.mapping(meta["hardware"], "meta.hardware")
        for ident, state in (hardware or {}).items():
            if state not in HARDWARE_STATES:
                check.problem(f"meta.hardware.{ident}", "unknown state",
                              expected=" | ".join(HARDWARE_STATES), found=short(state))
    spec = check.mapping(data.get("model"), "model")
    if spec is not None:
        # model_id may differ from the path (an NVFP4 checkpoint of the model the path names)
        check.string(spec, "model_id", "model")
        _min_version(check, spec, "model")
        _args(check, spec, "base_args", "model")
        _env(check, spec, "base_env", "model")
    variants = check.mapping(data.get("variants"), "variants")
    names: set[str] = set()
    if variants is not None:
        names = set(variants)
        if "default" not in variants:
            check.problem("variants", "has no `default` variant",
                          expected="variants.default (mandatory)")
        for name, variant in variants.items():
            path = f"variants.{name}"
            entry = check.mapping(variant, path)
            if entry is None:
                continue
            check.string(entry, "precision", path)
            _min_version(check, entry, path)
            _args(check, entry, "extra_args", path)
            _env(check, entry, "extra_env", path)
            _overrides(check, entry.get("hardware_overrides"), f"{path}.hardware_overrides",
                       names)
    features = data.get("features") or {}
    feature_block = check.mapping(features, "features") or {}
    for name, feature in feature_block.items():
        path = f"features.{name}"
        entry = check.mapping(feature, path)
        if entry is None:
            continue
        if "args" in entry and "modes" in entry:
            check.problem(path, "declares both args and modes", expected="one of them")
        _args(check, entry, "args", path)
        modes = entry.get("modes")
        if modes is not None:
            mode_block = check.mapping(modes, f"{path}.modes") or {}
            if not mode_block:
                check.problem(f"{path}.modes", "is empty")
            if entry.get("default_mode") is not None and entry["default_mode"] not in mode_block:
                check.problem(f"{path}.default_mode", "names no mode of the feature",
                              found=short(entry["default_mode"]))
            for mode_name, mode in mode_block.items():
                mode_path = f"{path}.modes.{mode_name}"
                mode_entry = check.mapping(mode, mode_path)
                if mode_entry is None:
                    continue
                _args(check, mode_entry, "args", mode_path)
                for index, variant in enumerate(mode_entry.get("variants") or []):
                    if variant not in names:
                        check.problem(f"{mode_path}.variants[{index}]", "not a variant",
                                      found=short(variant))
                _overrides(check, mode_entry.get("hardware_overrides"),
                           f"{mode_path}.hardware_overrides", names)
    for index, name in enumerate(data.get("opt_in_features") or []):
        if name not in feature_block:
            check.problem(f"opt_in_features[{index}]", "not a feature", found=short(name))
    compatible = data.get("compatible_strategies")
    if compatible is None:
        compatible = []
    if not isinstance(compatible, list):  # empty is valid: a vLLM-Omni model
        check.problem("compatible_strategies", "must be a list of strategy ids",
                      found=short(compatible))
        compatible = []
    for index, ident in enumerate(compatible):
        if ident not in strategies:
            check.problem(f"compatible_strategies[{index}]", "not a strategy of strategies/",
                          expected=" | ".join(sorted(strategies)), found=short(ident))
    for ident in (check.mapping(data.get("strategy_hardware") or {}, "strategy_hardware") or {}):
        if ident not in strategies:
            check.problem(f"strategy_hardware.{ident}", "not a strategy of strategies/",
                          expected=" | ".join(sorted(strategies)))
    for name, variant in (variants or {}).items():
        chosen = variant.get("default_modes") if isinstance(variant, Mapping) else None
        for feature_name, mode_name in (chosen or {}).items() if isinstance(chosen, Mapping) \
                else ():
            modes = (feature_block.get(feature_name) or {}).get("modes") \
                if isinstance(feature_block.get(feature_name), Mapping) else None
            if not isinstance(modes, Mapping) or mode_name not in modes:
                check.problem(f"variants.{name}.default_modes.{feature_name}",
                              "names no mode of a feature with modes", found=short(mode_name))
    if data.get("default_strategy") is not None and data["default_strategy"] not in compatible:
        check.problem("default_strategy", "not one of compatible_strategies",
                      found=short(data["default_strategy"]))
    _overrides(check, data.get("hardware_overrides"), "hardware_overrides", names)
    over = data.get("strategy_overrides")
    if over is not None:
        for ident, entry in (check.mapping(over, "strategy_overrides") or {}).items():
            if ident not in strategies:
                check.problem(f"strategy_overrides.{ident}", "not a strategy of strategies/")
            if isinstance(entry, Mapping):
                _args(check, entry, "extra_args", f"strategy_overrides.{ident}")
                _overrides(check, entry.get("hardware_overrides"),
                           f"strategy_overrides.{ident}.hardware_overrides", names)
    return data if not check.problems else None
