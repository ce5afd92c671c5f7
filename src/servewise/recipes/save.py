"""A launch that became ready, saved as a verified recipe in the user's folder.

:func:`recipe_from_run` turns a stored launch document (``servewise launch``'s JSON with its
prediction and the engine's observed start-up facts) and benchmark documents (``servewise
bench --json``) into a recipe file: the match (model, GPU and count, engine), the image as
given (a digest when it had one), the engine flags and environment, status ``verified``, and
provenance (who, when, the engine version and the driver and GPU where the engine or NVML told
them). The evidence a recipe file has no fields for -- the observed facts, predicted against
observed, the gate's verdict from check -- is kept in ``evidence/<file name>.json`` beside the
recipe folder (inside it, a JSON file would be read as a recipe), and ``recipe show`` prints it
(:func:`read_evidence`).

It works on plain documents, so it needs neither the launch nor the bench package.
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from servewise.errors import UsageError
from servewise.knowledge.engines import serving_engines
from servewise.knowledge.gpus import load_gpu_catalog
from servewise.recipes.library import user_recipe_dir
from servewise.recipes.load import SCHEMA, parse_recipe_file
from servewise.recipes.model import Recipe

__all__ = ["SavedRecipe", "evidence_path", "read_evidence", "recipe_from_run", "write_recipe"]

#: Result keys a recipe keeps from a bench level (the cookbook's shape).
_RESULT_KEYS = ("workload", "completed", "failed", "duration_s", "ttft_ms", "tpot_ms",
                "itl_ms", "e2e_ms", "request_throughput_per_s", "output_tokens_per_s",
                "total_tokens_per_s", "gpus", "tokens_per_sec_per_gpu",
                "output_tokens_per_sec_per_gpu")
_WORKLOAD_KEYS = ("dataset", "isl", "osl", "max_concurrency", "request_rate", "burstiness",
                  "num_prompts")
#: Flags that belong to the machine, not the recipe (the model is the checkpoint).
_DROP_WITH_VALUE = {"--host", "--port", "--model", "--model-path", "--served-model-name"}
COUNTS = ("tokens_per_sec_per_gpu counts input + output tokens per second per GPU, "
          "output_tokens_per_sec_per_gpu output tokens only; TTFT and TPOT as the client saw "
          "them (servewise bench)")


@dataclass(frozen=True)
class SavedRecipe:
    """A recipe made from a run: its file text, evidence and where they go."""

    recipe: Recipe
    text: str
    evidence: dict[str, Any]
    path: Path

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data (``recipe save --json``)."""
        return {"id": self.recipe.id, "file": str(self.path),
                "evidence_file": str(evidence_path(self.path)),
                "recipe": self.recipe.to_dict(), "evidence": self.evidence}


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9.]+", "-", text.lower()).strip("-") or "model"


def _file_stem(ident: str) -> str:
    return ident.replace("/", "--")


def engine_flags(args: Sequence[str]) -> tuple[str | None, list[str]]:
    """The model named by an engine's arguments and its flags without the machine's own
    (host, port, the model, the served name)."""
    model = None
    flags: list[str] = []
    skip = False
    for index, token in enumerate(args):
        if skip:
            skip = False
            continue
        name = token.split("=", 1)[0]
        if name in _DROP_WITH_VALUE:
            if name in ("--model", "--model-path"):
                model = token.split("=", 1)[1] if "=" in token else (
                    args[index + 1] if index + 1 < len(args) else None)
            skip = "=" not in token
            continue
        if not flags and not token.startswith("-") and model is None:
            model = token  # vllm serve MODEL
            continue
        flags.append(token)
    return model, flags


def _benchmarks(benches: Sequence[Mapping[str, Any]], version: str | None,
                date: str) -> list[dict[str, Any]]:
    runs = []
    for bench in benches:
        results = []
        for entry in bench.get("results") or []:
            result = {key: entry[key] for key in _RESULT_KEYS if entry.get(key) is not None}
            workload = entry.get("workload") or {}
            result["workload"] = {key: workload[key] for key in _WORKLOAD_KEYS
                                  if workload.get(key) is not None}
            if "ttft_ms" in result or "tokens_per_sec_per_gpu" in result or \
                    "output_tokens_per_sec_per_gpu" in result:
                results.append(result)
        if results:
            runs.append({"engine_version": version, "date": date,
                         "source": f"measured: servewise bench {bench.get('run_id')}",
                         "notes": COUNTS, "results": results})
    return runs


def recipe_from_run(
    launch: Mapping[str, Any], *, engine_args: Sequence[str],
    benches: Sequence[Mapping[str, Any]] = (), gpu: str | None = None, gpu_count: int | None = None,
    model: str | None = None, who: str = "you", device: Mapping[str, str] | None = None,
    today: datetime.date | None = None, user_dir: Path | None = None,
) -> SavedRecipe:
    """The verified recipe of a ready launch (see the module's docstring).

    ``engine_args`` are the launch's arguments after the engine's entry point; the model is
    ``model``, else the prediction's, else the command's, else the served model list's (an
    ``org/name`` among ``/v1/models``); ``gpu`` is a catalog id or name (from ``--gpu``, NVML
    or the launch), ``gpu_count`` the GPUs it used;
    ``device`` what NVML or the log said of the driver and GPU (``driver``, ``gpu_name``).
    """
    if launch.get("outcome") != "ready" and not launch.get("ready"):
        raise UsageError(f"run {launch.get('run_id')} did not become ready "
                         f"({launch.get('outcome')}): only a launch that served is a recipe",
                         hint="`servewise runs` lists the launches and their outcomes")
    engine = launch.get("engine")
    if engine not in serving_engines():
        raise UsageError("the launch's command is not a vLLM or SGLang server",
                         hint="recipes are for `vllm serve` and `sglang.launch_server`")
    prediction = launch.get("prediction") or {}
    evidence = launch.get("evidence") or {}
    observed = evidence.get("observed") or {}
    checkpoint, flags = engine_flags(engine_args)
    served = [m for m in launch.get("models") or [] if isinstance(m, str) and "/" in m]
    name = model or prediction.get("model") or checkpoint or (served[0] if served else None)
    if not name:
        raise UsageError("the launch names no model", hint="give --model ORG/NAME")
    if "/" not in name:
        raise UsageError(f"the model {name!r} is not a Hugging Face id (org/name) or a path",
                         hint="give --model ORG/NAME")
    catalog = load_gpu_catalog(user_dir)
    if gpu is None:
        raise UsageError("no GPU known for this run (no NVML, and the launch had no --gpu)",
                         hint="give --gpu NAME:COUNT (the GPUs the run used)")
    entry = catalog.get(gpu)
    if entry is None:
        catalog.find(gpu)  # raises, naming close matches
        raise AssertionError("unreachable")
    count = gpu_count or 1
    version = observed.get("engine_version") or prediction.get("engine_version")
    today = today or datetime.date.today()
    run_id = str(launch.get("run_id"))
    ident = f"user/{engine}/{_slug(Path(name).name)}/{entry.id}/{count}gpu"
    notes = [f"saved from servewise launch {run_id}"]
    if device:
        notes += [f"{key} {value}" for key, value in device.items() if value]
    provenance = {"who": who, "date": today.isoformat(),
                  "source": f"measured: servewise launch {run_id}", "notes": "; ".join(notes)}
    if version:
        provenance["engine_version"] = str(version)
    item: dict[str, Any] = {
        "id": ident, "match": {"hw": entry.id, "gpus": count},
        "checkpoint": checkpoint or name, "argv": flags, "status": "verified",
        "provenance": provenance,
    }
    image = launch.get("docker_image")
    if image:
        item["image"] = image
    env = {key: value for key, value in (launch.get("env") or {}).items()
           if not key.startswith("SERVEWISE_")}
    if env:
        item["env"] = env
    runs = _benchmarks(benches, version, today.isoformat())
    if runs:
        item["benchmarks"] = runs
    document = {"schema": SCHEMA, "model": name, "engine": engine, "recipes": [item]}
    text = ("# Saved by `servewise recipe save` from a launch that served; its evidence is in "
            f"../evidence/{_file_stem(ident)}.json\n"
            + yaml.safe_dump(document, sort_keys=False, allow_unicode=True))
    path = user_recipe_dir(user_dir) / f"{_file_stem(ident)}.yaml"
    recipe = parse_recipe_file(text, str(path), catalog, user=True)[0]
    check = prediction.get("check") or {}
    trail = {
        "recipe": ident, "run_id": run_id, "saved": today.isoformat(),
        "argv": list(launch.get("argv") or []), "env": env, "image": image,
        "observed": observed, "comparison": evidence.get("comparison") or [],
        "findings": evidence.get("findings") or [],
        "prediction": {key: prediction.get(key) for key in ("source", "from", "model",
                                                            "engine_version")},
        "gate": check.get("gate"), "check_recipe": check.get("recipe"),
        "time_to_ready_s": launch.get("time_to_ready_s"), "device": dict(device or {}),
        "benchmarks": [bench.get("run_id") for bench in benches],
    }
    return SavedRecipe(recipe, text, trail, path)


def evidence_path(recipe_file: Path | str) -> Path:
    """Where a recipe file's evidence is kept: ``evidence/`` beside the recipe folder."""
    path = Path(recipe_file)
    return path.parent.parent / "evidence" / (path.stem + ".json")


def write_recipe(saved: SavedRecipe) -> None:
    """Write the recipe and its evidence (the folder is made when missing)."""
    try:
        saved.path.parent.mkdir(parents=True, exist_ok=True)
        evidence_path(saved.path).parent.mkdir(parents=True, exist_ok=True)
        saved.path.write_text(saved.text, "utf-8")
        evidence_path(saved.path).write_text(json.dumps(saved.evidence, indent=2) + "\n",
                                             "utf-8")
    except OSError as error:
        raise UsageError(f"cannot write {saved.path}: {error.strerror or error}",
                         hint="set SERVEWISE_DATA_DIR to a writable folder",
                         path=str(saved.path)) from None


def read_evidence(recipe: Recipe) -> dict[str, Any] | None:
    """The evidence saved beside a user recipe's file, or None."""
    if not recipe.user:
        return None
    try:
        data = json.loads(evidence_path(recipe.file).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
