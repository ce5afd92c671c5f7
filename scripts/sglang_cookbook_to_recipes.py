"""Write servewise recipe files from the SGLang cookbook facts in shared/data/recipes/.

    python scripts/sglang_cookbook_to_recipes.py ../shared/data/recipes/sglang-cookbook \
        src/servewise/knowledge/data/recipes

Each cookbook cell becomes a recipe: ``--model-path {{MODEL_NAME}}`` becomes the
``checkpoint`` (through ``model_names``), ``--host {{HOST_IP}}``/``--port {{PORT}}`` are
dropped (the renderers add host and port), every other flag is split into argv words.
Benchmarks keep the cookbook's numbers in servewise's bench shape: DeepSeek-V4's
``tokens_per_sec_per_gpu`` counts input + output (its header says so), GLM-5.2's counts
output only (it matches output-only arithmetic), so each file's number goes to the key
that means that and the other key is derived (listed in ``derived``). Cells on GPUs the
GPU catalog does not know (the AMD ones) are left out and counted in the file header.
``tests/recipes/test_shipped.py`` checks that the shipped files are what this writes.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import yaml

HW = {"b200": "b200", "b300": "b300", "gb200": "gb200", "gb300": "gb300", "h100": "h100-sxm",
      "h200": "h200", "h20": "h20", "rtx6000": "rtx-pro-6000-blackwell-workstation"}
"""Cookbook hardware ids → servewise GPU catalog ids (the AMD ids have no catalog entry)."""

MODELS = {("deepseek-v4", "flash"): "deepseek-ai/DeepSeek-V4-Flash",
          ("deepseek-v4", "pro"): "deepseek-ai/DeepSeek-V4-Pro",
          ("glm-5.2", "default"): "zai-org/GLM-5.2"}

TOTAL_TOKENS = {"deepseek-v4": True, "glm-5.2": False}
"""Whether the file's ``tokens_per_sec_per_gpu`` counts input + output (see SOURCE.md)."""

LATENCY_STAT = {"deepseek-v4": "mean", "glm-5.2": "p50"}
LATENCY_NOTE = {
    "deepseek-v4": "TTFT and TPOT are means (the file sets latencyPercentile: Mean).",
    "glm-5.2": "The file names no latency statistic; stored as p50, the cookbook's convention "
               "where no latencyPercentile is set (research/bench_recipes.md §1.3).",
}


def _url(repo: str, commit: str, path: str) -> str:
    return f"https://github.com/{repo}/blob/{commit}/{path}"


def _argv(flags: list[str]) -> list[str]:
    argv: list[str] = []
    for flag in flags:
        words = shlex.split(flag)
        if words[0] in ("--model-path", "--host", "--port"):
            continue
        argv.extend(words)
    return argv


def _gpus(argv: list[str], nodes: int) -> int:
    sizes = {"--tp": 1, "--pp": 1}
    for index, word in enumerate(argv[:-1]):
        if word in sizes:
            sizes[word] = int(argv[index + 1])
    return sizes["--tp"] * sizes["--pp"] // nodes


def _results(
    name: str, quant: str, speed: list[dict[str, Any]], gpus: int
) -> tuple[list[Any], str, str]:
    stat = LATENCY_STAT[name]
    results = []
    for point in speed:
        workload = dict(point["workload"])
        isl, osl = workload["isl"], workload["osl"]
        value = point["tokens_per_sec_per_gpu"]
        result: dict[str, Any] = {"workload": workload, "gpus": gpus,
                                  "ttft_ms": {stat: point["ttft_ms"]},
                                  "tpot_ms": {stat: point["tpot_ms"]}}
        if TOTAL_TOKENS[name]:
            result["tokens_per_sec_per_gpu"] = value
            result["output_tokens_per_sec_per_gpu"] = round(value * osl / (isl + osl), 1)
        else:
            result["tokens_per_sec_per_gpu"] = round(value * (isl + osl) / osl, 1)
            result["output_tokens_per_sec_per_gpu"] = value
        results.append(result)
    if not TOTAL_TOKENS[name]:
        return results, "tokens_per_sec_per_gpu", (
            "The cookbook's tokens_per_sec_per_gpu counts output tokens only here; "
            "tokens_per_sec_per_gpu is derived as output * (isl + osl) / osl.")
    if quant == "nvfp4":
        return results, "output_tokens_per_sec_per_gpu", (
            "The cookbook measured input + output tok/s/GPU; output_tokens_per_sec_per_gpu is "
            "derived as total * osl / (isl + osl).")
    return results, "tokens_per_sec_per_gpu", (
        "The cookbook measured output tok/s/GPU and published total = output * (isl + osl) / "
        "osl; output_tokens_per_sec_per_gpu is that division undone.")


def _key(match: dict[str, Any]) -> tuple[str, ...]:
    return tuple(str(match[k]) for k in ("hw", "variant", "quant", "strategy", "nodes"))


def transcribe(path: Path) -> dict[str, str]:
    """File name → YAML text for every model of one cookbook JSON file."""
    name = path.stem
    data = json.loads(path.read_text("utf-8"))
    source = data["source"]
    config_url = _url(source["repo"], source["commit"], source["path"])
    bench_url = _url(source["repo"], source["benchmarks_commit"], source["benchmarks_path"])
    benches = {_key(entry["match"]): entry for entry in data["benchmarks"]}
    files: dict[str, dict[str, Any]] = {}
    skipped: dict[str, list[str]] = {}
    for cell in data["cells"]:
        match = cell["match"]
        model = MODELS[(name, match["variant"])]
        slug = model.split("/")[1].lower()
        if match["hw"] not in HW:
            skipped.setdefault(slug, []).append(match["hw"])
            continue
        nodes = 1 if match["nodes"] == "single" else int(match["nodes"].split("-")[1])
        argv = _argv(cell["flags"])
        gpus = _gpus(argv, nodes)
        names = data["model_names"]
        checkpoint = names.get(f"{match['hw']}|{match['variant']}|{match['quant']}",
                               names[f"{match['variant']}|{match['quant']}"])
        bench = benches.get(_key(match))
        version = bench.get("sglang_version") if bench else None
        recipe: dict[str, Any] = {
            "id": f"sglang/{slug}/{HW[match['hw']]}/{match['quant']}/{match['strategy']}/"
                  f"{match['nodes']}",
            "match": {"quant": match["quant"], "hw": HW[match["hw"]], "gpus": gpus,
                      "strategy": match["strategy"], "nodes": nodes},
            "checkpoint": checkpoint,
        }
        if version and version[0].isdigit():
            recipe["min_version"] = version
        recipe["argv"] = argv
        if cell.get("env"):
            recipe["env"] = cell["env"]
        recipe["status"] = "verified" if cell.get("verified") else "estimated"
        provenance: dict[str, Any] = {"engine_version": version} if version else {}
        if cell.get("notes"):
            provenance["notes"] = cell["notes"]
        if provenance:
            recipe["provenance"] = provenance
        if bench and bench.get("speed"):
            results, derived, how = _results(name, match["quant"], bench["speed"],
                                             gpus * nodes)
            run: dict[str, Any] = {"engine_version": version, "source": bench_url,
                                   "derived": [derived],
                                   "notes": " ".join(filter(None, [LATENCY_NOTE[name], how,
                                                                   bench.get("notes")]))}
            if bench.get("accuracy"):
                run["accuracy"] = bench["accuracy"]
            run["results"] = results
            recipe["benchmarks"] = [run]
        document = files.setdefault(slug, {
            "schema": 1, "model": model, "engine": "sglang",
            "notes": f"Transcribed by scripts/sglang_cookbook_to_recipes.py from the SGLang "
                     f"cookbook ({config_url}); no image is named because the cookbook shows "
                     f"lmsysorg/sglang:latest, which is not pinned.",
            "defaults": {"status": "verified", "provenance": {
                "who": "SGLang cookbook maintainers (sgl-project/sglang docs_new)",
                "source": config_url}},
            "recipes": []})
        document["recipes"].append(recipe)
    texts = {}
    for slug, document in files.items():
        if skipped.get(slug):
            document["notes"] += (f" Left out: {len(skipped[slug])} cell(s) on GPUs the catalog "
                                  f"does not know ({', '.join(sorted(set(skipped[slug])))}).")
        header = ("# Generated by scripts/sglang_cookbook_to_recipes.py from "
                  f"shared/data/recipes/sglang-cookbook/{path.name}; do not edit by hand.\n")
        texts[f"{slug}.sglang.yaml"] = header + yaml.safe_dump(
            document, sort_keys=False, allow_unicode=True, width=100)
    return texts


def main(argv: list[str]) -> int:
    """Write every cookbook file's recipes into the output folder."""
    source, target = Path(argv[0]), Path(argv[1])
    for path in sorted(source.glob("*.json")):
        for file_name, text in transcribe(path).items():
            (target / file_name).write_text(text, "utf-8")
            print(f"wrote {target / file_name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
