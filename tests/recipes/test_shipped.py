"""The shipped recipes say what the seeds and the SGLang cookbook say."""

from __future__ import annotations

import importlib.util
import json
from importlib import resources
from pathlib import Path
from types import ModuleType

from servewise.knowledge import argv as argv_tools
from servewise.recipes import check_rules, load_recipes, model_rules_for, pitfalls_for
from support.paths import ROOT

SEED_ID = "vllm/deepseek-v4-flash-0731-nvfp4/rtx-pro-6000-max-q/tp2"


def transcriber() -> ModuleType:
    path = ROOT / "scripts" / "sglang_cookbook_to_recipes.py"
    spec = importlib.util.spec_from_file_location("sglang_cookbook_to_recipes", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_shipped_cookbook_files_are_what_the_transcriber_writes(cookbook: Path) -> None:
    module = transcriber()
    folder = resources.files("servewise.knowledge").joinpath("data", "recipes")
    written = {}
    for path in sorted(cookbook.glob("*.json")):
        written.update(module.transcribe(path))
    assert set(written) == {"deepseek-v4-flash.sglang.yaml", "deepseek-v4-pro.sglang.yaml",
                            "glm-5.2.sglang.yaml"}
    for name, text in written.items():
        assert folder.joinpath(name).read_text("utf-8") == text, (
            f"{name} differs: rerun scripts/sglang_cookbook_to_recipes.py")


def test_every_cookbook_cell_on_a_known_gpu_is_a_recipe(cookbook: Path) -> None:
    book = load_recipes()
    module = transcriber()
    for file in ("deepseek-v4.json", "glm-5.2.json"):
        data = json.loads((cookbook / file).read_text("utf-8"))
        for cell in data["cells"]:
            m = cell["match"]
            if m["hw"] not in module.HW:
                continue
            model = module.MODELS[(file.removesuffix(".json"), m["variant"])]
            ident = (f"sglang/{model.split('/')[1].lower()}/{module.HW[m['hw']]}/{m['quant']}/"
                     f"{m['strategy']}/{m['nodes']}")
            recipe = book.require(ident)
            assert recipe.status == ("verified" if cell["verified"] else "estimated")
            assert recipe.env_dict == cell.get("env", {})
            flags = [f for f in cell["flags"] if not f.startswith(("--model-path", "--host",
                                                                   "--port"))]
            assert " ".join(recipe.argv).replace("'", "") == " ".join(flags).replace("'", "")


def test_tokens_per_gpu_means_total_for_deepseek_and_output_for_glm(cookbook: Path) -> None:
    book = load_recipes()
    ds = book.require("sglang/deepseek-v4-flash/h200/fp8/low-latency/single").benchmarks[0]
    first = ds.results[0]
    assert first["workload"]["max_concurrency"] == 1
    assert first["tokens_per_sec_per_gpu"] == 631            # the cookbook's number: in + out
    assert first["output_tokens_per_sec_per_gpu"] == round(631 * 1024 / 9216, 1)
    assert first["ttft_ms"] == {"mean": 178}
    assert ds.derived == ("tokens_per_sec_per_gpu",)
    glm = book.require("sglang/glm-5.2/b200/fp8/low-latency/single").benchmarks[0].results[1]
    assert glm["output_tokens_per_sec_per_gpu"] == 164       # the cookbook's number: output only
    assert glm["tokens_per_sec_per_gpu"] == round(164 * 9216 / 1024, 1)
    # the cookbook's own check: 16 * 1024 tokens ÷ (3.188 s + 1024 * 9.12 ms) ÷ 8 GPUs ≈ 164
    ttft, tpot = glm["ttft_ms"]["p50"] / 1000, glm["tpot_ms"]["p50"] / 1000
    assert abs(16 * 1024 / (ttft + 1024 * tpot) / glm["gpus"] - 164) < 1
    nvfp4 = book.require("sglang/deepseek-v4-flash/gb200/nvfp4/low-latency/single").benchmarks[0]
    assert nvfp4.derived == ("output_tokens_per_sec_per_gpu",)
    assert nvfp4.accuracy["gsm8k_pct"] == 96.66


def test_the_first_seed_command() -> None:
    recipe = load_recipes().require(SEED_ID)
    argv = recipe.argv
    assert recipe.image == "vllm/vllm-openai:nightly-6f91edf96d3f3272945809c04702380053bff4de"
    assert recipe.image_pinned
    assert argv_tools.last_value(argv, "--kv-cache-dtype") == "fp8"
    assert argv_tools.last_value(argv, "--block-size") == "256"
    assert argv_tools.has(argv, "--enforce-eager")
    assert argv_tools.last_value(argv, "--tokenizer-mode") == "deepseek_v4"
    assert argv_tools.last_value(argv, "--tensor-parallel-size") == "2"
    assert argv_tools.last_value(argv, "--max-model-len") == "250000"
    assert argv_tools.last_value(argv, "--gpu-memory-utilization") == "0.95"
    assert recipe.match.hw == "rtx-pro-6000-blackwell-max-q" and recipe.match.gpus == 2
    assert recipe.provenance.source == "https://huggingface.co/MJPansa/DeepSeek-V4-Flash-0731-NVFP4"
    rules = model_rules_for(recipe.checkpoint, "vllm", recipe.min_version)
    assert len(rules) == 4
    assert check_rules(rules, argv) == []


def test_sglang_deepseek_v4_on_8_h200_carries_a_mem_fraction_at_most_090() -> None:
    best = load_recipes().match(model="deepseek-ai/DeepSeek-V4-Flash-0731", hw="h200:8",
                                engine="sglang")[0]
    assert best.recipe.status == "verified"
    fraction = argv_tools.last_value(best.recipe.argv, "--mem-fraction-static")
    assert fraction is not None and float(fraction) <= 0.90
    assert best.recipe.provenance.source == "https://github.com/sgl-project/sglang/pull/33109"
    # the pitfall that fraction avoids, and that the cookbook's older cell still has
    assert pitfalls_for(cc="9.0", engine="sglang", argv=best.recipe.argv) == []
    older = load_recipes().require("sglang/deepseek-v4-flash/h200/fp4/balanced/single")
    hit = pitfalls_for(cc="9.0", engine="sglang", argv=older.argv)
    assert [pitfall.id for pitfall in hit] == ["flashinfer-moe-workspace-headroom"]


def test_shipped_vllm_recipes_keep_their_model_rules() -> None:
    for recipe in load_recipes():
        if recipe.engine != "vllm":
            continue
        rules = model_rules_for(recipe.checkpoint, recipe.engine, recipe.min_version)
        assert check_rules(rules, recipe.argv) == [], recipe.id
