"""Importing SGLang's cookbook from a clone of sgl-project/sglang (the copied config files)."""

from __future__ import annotations

import gzip
import importlib.util
import json
import shutil
from importlib import resources
from pathlib import Path

import pytest
from typer.testing import CliRunner

from servewise.cli import app
from servewise.recipes import RecipeDataError, load_recipes
from servewise.recipes.renderers import render
from servewise.recipes.sglang_import import (
    convert_sglang_cookbook,
    find_configs,
    import_sglang_cookbook,
)
from support.paths import ROOT

CLONE = ROOT / "tests" / "data" / "recipes" / "sglang-configs"
CONFIGS = CLONE / "docs_new" / "src" / "snippets" / "configs"
COHERE_H200 = "sglang-cookbook/coherelabs/command-a-plus/default/h200/bf16/balanced/single"
LONGCAT_2N = "sglang-cookbook/meituan-longcat/longcat-2.0/default/h200/fp8/balanced/multi-2"
LFM_H100 = "sglang-cookbook/liquidai/lfm2.5/8b-a1b/h100-sxm/bf16/default/single"


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """A copy of the fixture clone that a test may break."""
    target = tmp_path / "sglang"
    shutil.copytree(CLONE, target)
    return target


def _edit(clone: Path, relative: str, old: str, new: str) -> None:
    path = clone / "docs_new" / "src" / "snippets" / "configs" / relative
    text = path.read_text("utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), "utf-8")


def test_every_cell_on_a_known_gpu_is_a_recipe(user_dir: Path) -> None:
    report = import_sglang_cookbook(CLONE, user_dir=user_dir)
    assert report.exit_code == 0 and report.problems == []
    assert report.outcomes == {"CohereLabs/command-a-plus.jsx": "imported",
                               "LiquidAI/lfm2.5.jsx": "imported",
                               "baidu/unlimited-ocr.jsx": "imported",
                               "deepreinforce-ai/ornith-1.0.jsx": "imported",
                               "deepseek-ai/deepseek-v4-srt-slurm.jsx": "out of scope",
                               "google/gemma4.jsx": "imported",
                               "meituan-longcat/longcat-2.0.jsx": "imported",
                               "moonshotai/kimi-k2.6.jsx": "imported",
                               "moonshotai/kimi-k3.jsx": "imported",
                               "zai-org/glm-5.1.jsx": "imported",
                               "MiniMaxAI/minimax-m2.7.jsx": "imported",
                               "MiniMaxAI/minimax-h3.jsx": "out of scope",
                               "MiniMaxAI/minimax-m3.jsx": "imported",
                               "nvidia/nemotron3-ultra.jsx": "imported",
                               "poolside/laguna-m1.jsx": "imported",
                               "poolside/laguna-s21.jsx": "imported",
                               "poolside/laguna-xs21.jsx": "imported",
                               "qwen/qwen3.6.jsx": "imported",
                               "tencent/hy3.jsx": "imported"}
    assert set(report.benchmark_outcomes.values()) == {"imported"}
    assert len(report.benchmark_outcomes) == 12
    # Command A+ 10, LFM2.5 21, Unlimited-OCR 6, Ornith 9, LongCat 4, Kimi-K2.6 18 - 2 (MI350X),
    # GLM-5.1 17, MiniMax-M2.7 24 - 1 (Xeon), Nemotron3-Ultra 16, Hy3 20, MiniMax-M3 9 - 1,
    # Kimi-K3 8, Laguna-M.1 14, Laguna-S-2.1 22, Qwen3.6 40 and Laguna-XS-2.1 22 (no
    # benchmarks files copied for these two), Gemma 4 64
    assert sum(report.recipes.values()) == (10 + 21 + 6 + 9 + 4 + 16 + 17 + 23 + 16 + 20 + 8
                                            + 8 + 14 + 22 + 40 + 22 + 64)
    assert len(report.written) == 7 + 3 + 2 + 5 + 13        # one file per model variant
    reasons = {(s.file, s.what): s.why for s in report.skipped}
    assert reasons == {
        ("deepseek-ai/deepseek-v4-srt-slurm.jsx", "model"):
            "not a cookbook config: exports srtSlurmConfig, no `config` with cells",
        ("moonshotai/kimi-k2.6.jsx", "cell mi350x/default/int4/low-latency/single"):
            "GPU 'mi350x' is not in servewise's GPU catalog",
        ("moonshotai/kimi-k2.6.jsx", "cell mi350x/default/int4/high-throughput/single"):
            "GPU 'mi350x' is not in servewise's GPU catalog",
        ("MiniMaxAI/minimax-m3.jsx", "cell mi350x/default/mxfp8/balanced/single"):
            "GPU 'mi350x' is not in servewise's GPU catalog",
        ("MiniMaxAI/minimax-m2.7.jsx", "cell xeon/default/fp8/balanced/single"):
            "Xeon (intel) is not a GPU servewise serves",
        ("MiniMaxAI/minimax-h3.jsx", "model"):
            "its cells are keyed by hw, profile, not hw/variant/quant/strategy/nodes: not a "
            "text-generation recipe matrix (19 non-literal part(s) left unread)",
    }
    book = load_recipes(user_dir)
    imported = [r for r in book if r.id.startswith("sglang-cookbook/") and r.user]
    assert len(imported) == 320
    assert all(r.engine == "sglang" and not any("{{" in word for word in r.argv)
               for r in imported)
    assert {r.origin for r in imported} == {"user import"}


def test_a_known_cell(user_dir: Path) -> None:
    import_sglang_cookbook(CLONE, user_dir=user_dir)
    book = load_recipes(user_dir)
    recipe = book.require(COHERE_H200)
    assert recipe.argv == ("--trust-remote-code", "--tp", "8",
                           "--cuda-graph-backend-prefill", "disabled")
    assert recipe.checkpoint == "CohereLabs/command-a-plus-05-2026-bf16"
    assert recipe.match.hw == "h200" and recipe.match.gpus == 8 and recipe.match.nodes == 1
    assert recipe.status == "verified"
    assert recipe.image is None                    # the cookbook names :latest, not pinned
    assert recipe.provenance.source.endswith("/028e4f1231d5abb44220721e885f1c7396e067d7/"
                                             "docs_new/src/snippets/configs/CohereLabs/"
                                             "command-a-plus.jsx")
    unverified = book.require(COHERE_H200.replace("/h200/", "/b200/"))
    assert unverified.status == "estimated" and unverified.match.gpus == 4
    assert recipe.aliases == ("CohereLabs/command-a-plus",)
    best = book.match(model="CohereLabs/command-a-plus-05-2026-fp8", hw="h200:4",
                      engine="sglang")[0]
    assert best.recipe.id == COHERE_H200.replace("/bf16/", "/fp8/")
    lfm = book.require(LFM_H100)
    assert lfm.image == "lmsysorg/sglang:dev-cu13"
    assert lfm.min_version == "0.0.0.dev1+g631db6c75"
    assert lfm.argv == ("--trust-remote-code", "--tp", "1", "--reasoning-parser", "qwen3",
                        "--tool-call-parser", "lfm2")
    ornith = book.require("sglang-cookbook/deepreinforce-ai/ornith-1.0/35b/h100-sxm/fp8/"
                          "default/single")
    assert ornith.checkpoint == "deepreinforce-ai/Ornith-1.0-35B-FP8"   # its literal --model-path
    assert ornith.argv[:2] == ("--served-model-name", "Ornith-1.0-35B-FP8")  # MODEL_NAME filled
    kimi = book.require("sglang-cookbook/moonshotai/kimi-k2.6/default/mi355x/int4/"
                        "high-throughput/single")
    assert kimi.match.gpus == 4            # --dp 4 with DP attention shares the 4 TP GPUs
    assert kimi.image == "lmsysorg/sglang:v0.5.9-rocm700-mi35x"
    assert kimi.env_dict == {"SGLANG_USE_AITER": "1", "SGLANG_ROCM_FUSED_DECODE_MLA": "0"}
    glm = book.require("sglang-cookbook/zai-org/glm-5.1/default/mi300x/fp8/balanced/single")
    assert glm.status == "verified" and glm.checkpoint == "zai-org/GLM-5.1-FP8"
    assert glm.image == "lmsysorg/sglang:v0.5.16-rocm700-mi30x"
    vl = book.require("sglang-cookbook/liquidai/lfm2.5/vl/b200/bf16/default/single")
    assert vl.env_dict == {"SGLANG_USE_CUDA_IPC_TRANSPORT": "1",
                           "SGLANG_USE_IPC_POOL_HANDLE_CACHE": "1"}


def test_a_multi_node_cell_runs_on_its_nodes(user_dir: Path) -> None:
    import_sglang_cookbook(CLONE, user_dir=user_dir)
    recipe = load_recipes(user_dir).require(LONGCAT_2N)
    assert recipe.match.nodes == 2 and recipe.match.gpus == 8 and recipe.gpus_total == 16
    assert recipe.multinode == "mp" and recipe.status == "estimated"
    assert recipe.argv[recipe.argv.index("--model-loader-extra-config") + 1] == \
        '{"enable_multithread_load":true,"num_threads":12}'
    rendered = render(recipe, "sglang")
    assert len(rendered.commands) == 2
    second = rendered.commands[1].argv
    assert second[second.index("--nnodes") + 1] == "2"
    assert second[second.index("--node-rank") + 1] == "1"
    assert "--dist-init-addr" in second and "--host" not in recipe.argv
    nemotron = load_recipes(user_dir).require(
        "sglang-cookbook/nvidia/nemotron3-ultra/default/h200/bf16/high-throughput/multi-2")
    assert (nemotron.match.nodes, nemotron.match.gpus) == (2, 8)   # --tp 16 over 2 nodes
    assert nemotron.checkpoint == "nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16"
    assert nemotron.image == "lmsysorg/sglang:dev-nemotron3-ultra"
    k3 = load_recipes(user_dir).require(
        "sglang-cookbook/moonshotai/kimi-k3/default/gb300/mxfp4/high-throughput/multi-2")
    assert (k3.match.nodes, k3.match.gpus, k3.status) == (2, 4, "verified")  # 2 x 4 GB300
    assert k3.env_dict["SGLANG_OPT_DEEPGEMM_MEGA_MOE_NUM_MAX_TOKENS_PER_RANK"] == "20480"
    minimax = load_recipes(user_dir).require(
        "sglang-cookbook/minimaxai/minimax-m2.7/default/a100-80gb/fp8/balanced/single")
    assert minimax.match.hw == "a100-80gb"      # the file's own `hardware` entry: A100, 80GB


def test_benchmark_rows_in_the_bench_shape(user_dir: Path) -> None:
    import_sglang_cookbook(CLONE, user_dir=user_dir)
    book = load_recipes(user_dir)
    run = book.require(LFM_H100).benchmarks[0]
    first = run.results[0]
    assert first["workload"] == {"dataset": "random", "isl": 1024, "osl": 1024,
                                 "max_concurrency": 1, "num_prompts": 10}
    assert first["ttft_ms"] == {"p50": 287.24} and first["tpot_ms"] == {"p50": 2.4}
    # LFM2.5's numbers fit output-only arithmetic: 1 x 1024 / (0.287 s + 1024 x 2.4 ms) ≈ 373
    assert first["output_tokens_per_sec_per_gpu"] == 325.11
    assert first["tokens_per_sec_per_gpu"] == 650.2
    assert run.derived == ("tokens_per_sec_per_gpu",)
    assert run.engine_version == "0.0.0.dev1+g631db6c75"
    assert run.accuracy == {"mmlu_pct": 76.61, "gsm8k_pct": 91.96, "gpqa_pct": 52.27,
                            "aime25_pct": 45.21}            # the config's defaultAccuracy
    # Laguna-S-2.1's numbers fit input + output (its header says so): 1 x 1024 / (0.102 s +
    # 1024 x 3.48 ms) / 8 GPUs ≈ 35 output tok/s/GPU, x 9 ≈ 314 against the cookbook's 305
    laguna = book.require("sglang-cookbook/poolside/laguna-s21/default/h200/bf16/low-latency/"
                          "single").benchmarks[0]
    assert laguna.derived == ("output_tokens_per_sec_per_gpu",)
    assert laguna.results[0]["tokens_per_sec_per_gpu"] == 305
    assert laguna.results[0]["output_tokens_per_sec_per_gpu"] == round(305 * 1024 / 9216, 1)
    cohere = book.require(COHERE_H200).benchmarks[0]
    assert cohere.accuracy == {"gsm8k_pct": 90.5}           # the entry's own
    assert [r["workload"]["isl"] for r in cohere.results] == [1000, 8000]
    assert cohere.results[1]["output_tokens_per_sec_per_gpu"] == 151
    assert cohere.results[0]["gpus"] == 8
    longcat = book.require(LONGCAT_2N.replace("h200", "b300").replace("multi-2", "single"))
    assert longcat.benchmarks == ()                         # accuracy only: no speed rows
    assert "gsm8k_pct 95.8904" in longcat.notes and "200 examples" in longcat.notes
    m3 = book.require("sglang-cookbook/minimaxai/minimax-m3/default/b300/mxfp8/balanced/single")
    assert "ttft_ms" not in m3.benchmarks[0].results[0]        # the cookbook's `ttft_ms: null`
    assert m3.benchmarks[0].results[0]["tpot_ms"] == {"p50": 32.8}
    amd = book.require("sglang-cookbook/minimaxai/minimax-m3/default/mi300x/mxfp8/balanced/single")
    assert amd.image is None             # the cookbook's `lmsysorg/sglang:<rocm-tag>-rocm700-mi30x`
    hy3 = book.require("sglang-cookbook/tencent/hy3/default/h200/bf16/balanced/single")
    assert hy3.notes == "the cookbook's accuracy: gsm8k_pct 95.83"   # a score beside `match`
    pending = book.require("sglang-cookbook/tencent/hy3/default/b200/fp8/balanced/single")
    assert pending.notes == "the cookbook's benchmark for this cell is pending"


def test_a_broken_file_is_refused_and_the_rest_imported(clone: Path, user_dir: Path) -> None:
    _edit(clone, "LiquidAI/lfm2.5.jsx", '"--tp 1",\n        "--reasoning-parser qwen3",',
          '"--tp 1"\n        "--reasoning-parser qwen3",')
    _edit(clone, "CohereLabs/command-a-plus-benchmarks.jsx", "ttft_ms: 842,", "ttft_ms: '842',")
    report = import_sglang_cookbook(clone, user_dir=user_dir)
    assert report.exit_code == 1
    assert report.outcomes["LiquidAI/lfm2.5.jsx"] == "refused"
    assert report.outcomes["meituan-longcat/longcat-2.0.jsx"] == "imported"
    assert report.outcomes["CohereLabs/command-a-plus.jsx"] == "imported"
    assert report.benchmark_outcomes["CohereLabs/command-a-plus-benchmarks.jsx"] == "refused"
    assert report.refused == ["LiquidAI/lfm2.5.jsx", "CohereLabs/command-a-plus-benchmarks.jsx"]
    by_file = {Path(p.file).name: p for p in report.problems}
    assert "line 165" in (by_file["lfm2.5.jsx"].found or "")
    assert by_file["command-a-plus-benchmarks.jsx"].path == "benchmarks[0].speed[0].ttft_ms"
    book = load_recipes(user_dir)
    assert book.require(COHERE_H200).benchmarks == ()      # its config still imported
    assert not any(r.id.startswith("sglang-cookbook/liquidai/") and r.user for r in book)
    with pytest.raises(RecipeDataError):
        convert_sglang_cookbook(clone, strict=True)


def test_unknown_shapes_are_reported_per_file(clone: Path) -> None:
    _edit(clone, "CohereLabs/command-a-plus.jsx", 'label: "TP", values: [null, 1, 2, 4, 8]',
          'label: "TP", values: tpValues(8)')
    _edit(clone, "meituan-longcat/longcat-2.0.jsx", '"--tp 8",', "...TP8,")
    report, texts = convert_sglang_cookbook(clone)
    assert report.outcomes["CohereLabs/command-a-plus.jsx"] == "imported"
    skipped = [s for s in report.skipped if s.file == "CohereLabs/command-a-plus.jsx"]
    assert [s.what for s in skipped] == [
        "unknown shape at config.playgroundFeatures.attention.knobs[0].values"]
    assert "call" in skipped[0].why and "tpValues(8)" in skipped[0].why
    assert report.outcomes["meituan-longcat/longcat-2.0.jsx"] == "refused"
    problem = next(p for p in report.problems if p.file.endswith("longcat-2.0.jsx"))
    assert problem.path == "config.cells[0].flags[2]" and "spread" in problem.message
    assert not any("longcat" in name for name in texts)


def test_cells_out_of_scope_and_files_that_are_not_configs(clone: Path) -> None:
    _edit(clone, "meituan-longcat/longcat-2.0.jsx", 'hw: "h20",', 'hw: "tpu-v7",')
    _edit(clone, "meituan-longcat/longcat-2.0.jsx", '"--tp 8",',
          '"--tp 8", "--dist-init-addr {{NODE0_IP}}:5000", "--foo {{BAR}}",')
    (clone / "docs_new" / "src" / "snippets" / "configs" / "deepseek-ai" /
     "deepseek-v4-benchmarks.jsx").write_text("export const benchmarks = [];\n")
    report, _ = convert_sglang_cookbook(clone)
    reasons = {(s.file, s.what): s.why for s in report.skipped}
    assert reasons[("meituan-longcat/longcat-2.0.jsx",
                    "cell tpu-v7/default/fp8/balanced/multi-2")] == \
        "GPU 'tpu-v7' is not in servewise's GPU catalog"
    assert "placeholder" in reasons[("meituan-longcat/longcat-2.0.jsx",
                                     "cell b300/default/fp8/balanced/single")]
    assert report.outcomes["meituan-longcat/longcat-2.0.jsx"] == "imported"
    assert report.recipes["sglang-cookbook.meituan-longcat.longcat-2.0.default.sglang.json"] == 2
    assert report.outcomes["deepseek-ai/deepseek-v4-srt-slurm.jsx"] == "out of scope"
    assert "exports srtSlurmConfig" in reasons[("deepseek-ai/deepseek-v4-srt-slurm.jsx",
                                                "model")]
    assert report.benchmark_outcomes["deepseek-ai/deepseek-v4-benchmarks.jsx"] == "out of scope"
    assert report.exit_code == 0


def test_the_clone_is_found_from_inside_and_only_there(tmp_path: Path) -> None:
    found = find_configs(CONFIGS / "LiquidAI")
    assert found is not None and found.root == CLONE.resolve()
    assert find_configs(CLONE) == find_configs(CONFIGS / "LiquidAI" / "lfm2.5.jsx")
    assert find_configs(tmp_path) is None
    report, texts = convert_sglang_cookbook(CONFIGS / "LiquidAI" / "lfm2.5.jsx")
    assert list(report.outcomes) == ["LiquidAI/lfm2.5.jsx"] and len(texts) == 7
    with pytest.raises(RecipeDataError):
        convert_sglang_cookbook(tmp_path)


def test_a_git_clone_names_its_head_commit_in_every_source(clone: Path) -> None:
    (clone / "SOURCE.md").unlink()
    commit = "0123456789abcdef0123456789abcdef01234567"
    (clone / ".git" / "refs" / "heads").mkdir(parents=True)
    (clone / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (clone / ".git" / "refs" / "heads" / "main").write_text(commit + "\n")
    _, texts = convert_sglang_cookbook(clone / "docs_new" / "src" / "snippets" / "configs" /
                                       "LiquidAI")
    document = json.loads(texts["sglang-cookbook.liquidai.lfm2.5.350m.sglang.json"])
    assert document["defaults"]["provenance"]["source"] == (
        f"https://github.com/sgl-project/sglang/blob/{commit}/docs_new/src/snippets/configs/"
        "LiquidAI/lfm2.5.jsx")
    run = document["recipes"][0]["benchmarks"][0]
    assert run["source"].endswith(f"/{commit}/docs_new/src/snippets/configs/LiquidAI/"
                                  "lfm2.5-benchmarks.jsx")


def test_recipe_import_tells_a_cookbook_clone_from_vllms_database(user_dir: Path) -> None:
    result = CliRunner().invoke(app, ["recipe", "import", str(CLONE), "--json"])
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["recipe_count"] == 320
    assert data["files"] == {"imported": 17, "out of scope": 2}
    assert len(data["benchmark_outcomes"]) == 12
    assert (user_dir / "recipes" / "sglang-cookbook.coherelabs.command-a-plus.default."
            "sglang.json").is_file()
    result = CliRunner().invoke(app, ["recipe", "import", str(CLONE / "README.md")])
    assert result.exit_code == 2 and "vllm-project/recipes" in result.stderr


def test_the_shipped_snapshot_is_what_the_script_writes() -> None:
    path = ROOT / "scripts" / "snapshot_sglang_cookbook.py"
    spec = importlib.util.spec_from_file_location("snapshot_sglang_cookbook", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    data, _ = module.snapshot(CLONE)
    shipped = resources.files("servewise.knowledge").joinpath("data", "recipes",
                                                              "sglang-cookbook.json.gz")
    assert shipped.read_bytes() == data, "rerun scripts/snapshot_sglang_cookbook.py"
    snapshot = json.loads(gzip.decompress(data))
    assert snapshot["commits"]["docs_new/src/snippets/configs/LiquidAI/lfm2.5.jsx"] == \
        "6b0b8a44257f92a3d9d6312078247f5911dd6b3a"
    assert len(snapshot["files"]) == 30


def test_a_fresh_install_knows_the_cookbook() -> None:
    book = load_recipes()
    recipe = book.require(LONGCAT_2N)
    assert recipe.origin == "sglang-cookbook (shipped snapshot)" and not recipe.user
    shipped = [r for r in book if r.id.startswith("sglang-cookbook/")]
    assert len(shipped) == 320
    ids = [r.id for r in book]
    assert len(ids) == len(set(ids))
