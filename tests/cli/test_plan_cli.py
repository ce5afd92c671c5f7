"""``servewise plan`` and ``servewise model``: the JSON contract, exit codes, bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from servewise.cli import app, run

STARTUP_KEYS = {"fits", "error", "weights_bytes_per_gpu", "kv_bytes_per_token",
                "kv_cache_bytes", "kv_cache_tokens", "max_concurrency"}
SEED = ["MJPansa/DeepSeek-V4-Flash-0731-NVFP4", "--gpu", "rtx-pro-6000-blackwell-max-q:2",
        "--tp", "2", "--max-model-len", "250000", "--max-num-seqs", "8",
        "--max-num-batched-tokens", "4096", "--gpu-memory-utilization", "0.95",
        "--kv-cache-dtype", "fp8", "--enforce-eager", "--engine-version", "0.26.1rc1"]


def _run(command: str, *args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = run([command, *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_seed_plan_json_contract(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run("plan", *SEED, "--json", capsys=capsys)
    data = json.loads(out)
    assert set(data["startup"]) == STARTUP_KEYS
    startup = data["startup"]
    assert code == 0 and startup["fits"] and startup["error"] is None
    # the seed: 175.6 GB over two GPUs, KV cache "comfortably" allocated at 250,000 tokens
    assert 75 * 2**30 < startup["weights_bytes_per_gpu"] < 85 * 2**30
    assert startup["kv_cache_tokens"] >= 250_000 and startup["max_concurrency"] >= 1
    assert data["layouts"] and all("reason" in layout for layout in data["layouts"])


def test_failure_exits_1_with_the_engine_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run("plan", "gpt-oss-120b", "--gpu", "h100:1", "--engine-version",
                        "0.10.1", "--json", capsys=capsys)
    data = json.loads(out)
    assert code == 1 and not data["startup"]["fits"]
    assert data["startup"]["error"].startswith("No available memory for the cache blocks")


def test_recommendations_without_settings(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run("plan", "qwen3-235b-a22b-fp8", "--gpu", "h200:8", "--nodes", "2",
                        "--max-model-len", "32768", "--context", "8192", "--json",
                        capsys=capsys)
    data = json.loads(out)
    rec = data["recommendation"]
    assert code == 0 and rec["gpu_memory_utilization"] <= 0.95
    assert rec["concurrency_at_context"] > 0 and rec["largest_context_tokens"] >= 32768
    assert any(w["name"].startswith("MoE") for w in rec["workspaces"])
    assert {layout["nodes"] for layout in data["layouts"]} >= {1, 2}
    assert data["layouts"][0]["fits"]


def test_sglang_default_fraction_and_seed_note(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run("plan", "deepseek-v4-flash", "--gpu", "h200:8", "--engine", "sglang",
                        "--tp", "8", "--json", capsys=capsys)
    data = json.loads(out)
    assert code == 0
    assert data["startup_detail"]["mem_fraction_static_default"] == 0.897
    assert any("0.944" in note for note in data["startup_detail"]["notes"])


def test_text_output(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run("plan", *SEED, capsys=capsys)
    assert code == 0 and "KV cache tokens" in out and "layouts (the engines' guides first" in out
    code, out, _ = _run("model", "deepseek-v4-flash", capsys=capsys)
    assert code == 0 and "experts" in out and "KV per token" in out


def test_model_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run("model", "gemma-3-27b-it", "--json", "--tensors", capsys=capsys)
    data = json.loads(out)
    assert code == 0 and data["architecture"]["family"] == "dense-hybrid-sliding"
    assert data["kv"]["sliding_windows"] == [1024]
    assert sum(t["bytes"] * t["count"] for t in data["tensors"]) == data["weights"]["total_bytes"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["llama-3.1-8b-instruct", "--gpu", "h100:8", "--tp", "3"], "does not divide"),
        (["llama-3.1-8b-instruct", "--gpu", "nosuchgpu:1"], "unknown GPU"),
        (["llama-3.1-8b-instruct", "--gpu", "h100:x"], "cannot read --gpu"),
        (["deepseek-r1", "--gpu", "h100:8", "--dp", "8", "--ep", "4"], "TP x DP"),
        (["deepseek-r1", "--gpu", "h100:8", "--dp", "3", "--ep", "3"], "does not divide"),
        (["nothing-here", "--gpu", "h100:1"], "not a model folder"),
        (["llama-3.1-8b-instruct", "--gpu", "h100:1", "--tp", "2"], "needs 2 GPUs"),
        (["llama-3.1-8b-instruct", "--gpu", "h100:1", "--gpu-memory-utilization", "1.5"],
         "fraction"),
        (["llama-3.1-8b-instruct", "--gpu", "cpu:1"], "CPU backend"),
    ],
)
def test_bad_input_exits_2(args: list[str], message: str,
                           capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run("plan", *args, "--json", capsys=capsys)
    assert code == 2
    data = json.loads(out)
    assert message in data["message"] and data["hint"]
    assert "Traceback" not in out + err


def test_unknown_gpu_with_memory_is_accepted(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run("plan", "llama-3.1-8b-instruct", "--gpu", "gaudi3:1", "--gpu-memory",
                        "192GiB", "--compute-capability", "9.4", "--max-model-len", "8192",
                        "--json", capsys=capsys)
    data = json.loads(out)
    assert code == 0 and data["gpu"]["memory_source"] == "user"
    assert data["gpu"]["memory_bytes"] == 192 * 2**30


def test_cannot_fit_anywhere_says_by_how_much(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run("plan", "llama-3.1-405b", "--gpu", "rtx-4090:2", capsys=capsys)
    assert code == 1 and "does not fit anywhere" in err and "GiB per GPU short" in err


def test_cpu_plan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run("plan", "llama-3.1-8b-instruct", "--gpu", "cpu:1", "--kv-cache-memory",
                        "4GiB", "--max-model-len", "4096", "--json", capsys=capsys)
    data = json.loads(out)
    assert code == 0 and data["startup"]["kv_cache_bytes"] <= 4 * 2**30
    assert data["startup_detail"]["block_size"] == 128


def test_folder_without_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run("model", str(tmp_path), "--json", capsys=capsys)
    assert code == 2 and "config.json" in json.loads(out)["message"]
    (tmp_path / "config.json").write_text("{broken")
    code, out, _ = _run("model", str(tmp_path), "--json", capsys=capsys)
    assert code == 2 and json.loads(out)["error"] == "format_error"


def test_typer_app_runs_plan() -> None:
    result = CliRunner().invoke(app, ["plan", "llama-3.1-8b-instruct", "--gpu", "h100:1",
                                      "--max-model-len", "8192", "--json"])
    assert result.exit_code == 0
    assert set(json.loads(result.stdout)["startup"]) == STARTUP_KEYS


def test_console_script_does_not_import_rich_for_json() -> None:
    code = ("import sys; sys.argv = ['servewise', 'plan', 'llama-3.1-8b-instruct', "
            "'--gpu', 'h100:1', '--json'];\n"
            "from servewise.cli import run\n"
            "code = run()\n"
            "assert 'rich' not in sys.modules, 'heavy import'\n"
            "sys.exit(code)\n")
    env = {**os.environ, "SERVEWISE_CACHE_DIR": "/nonexistent-unused"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["startup"]["kv_cache_tokens"] > 0


# ---- issue 16: the seed's own deployment with the catalog's figures; issue 19 §4, §5


SEED_ISSUE = ["MJPansa/DeepSeek-V4-Flash-0731-NVFP4", "--gpu", "rtx-pro-6000-blackwell-max-q:2",
              "--tp", "2", "--max-model-len", "250000", "--kv-cache-dtype", "fp8",
              "--gpu-memory-utilization", "0.95"]


def test_seed_deployment_fits_with_the_catalogs_own_memory(
        capsys: pytest.CaptureFixture[str]) -> None:
    """The exact command of the seed, no --gpu-memory: nvidia-smi's 97,887 MiB, not 96 GB."""
    code, out, _ = _run("plan", *SEED_ISSUE, "--json", capsys=capsys)
    data = json.loads(out)
    assert code == 0 and data["startup"]["fits"]
    assert data["gpu"]["memory_pinned_by"] == "nvidia-smi"
    assert data["startup"]["kv_cache_tokens"] > 250_000
    assert data["recommendation"]["verdict"]["risk"] == "low"


def test_other_engines_flag_selects_it_and_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = _run("plan", "llama-3.1-8b-instruct", "--gpu", "h100",
                     "--mem-fraction-static", "0.5", "--json", capsys=capsys)
    data = json.loads(out)
    assert data["engine"] == "sglang"
    assert any("--mem-fraction-static is SGLang's flag" in note for note in data["notes"])
    assert data["startup_detail"]["mem_fraction_static"] == 0.5


@pytest.mark.parametrize("args,flag", [
    (["--engine", "sglang", "--gpu-memory-utilization", "0.5"], "--gpu-memory-utilization"),
    (["--engine", "vllm", "--mem-fraction-static", "0.5"], "--mem-fraction-static"),
    (["--gpu-memory-utilization", "0.5", "--mem-fraction-static", "0.5"],
     "--gpu-memory-utilization and --mem-fraction-static"),
])
def test_other_engines_flag_with_engine_named_is_an_error(
        args: list[str], flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run("plan", "llama-3.1-8b-instruct", "--gpu", "h100", *args,
                          capsys=capsys)
    assert code == 2 and flag in err and "fits" not in out


def test_model_required_kv_dtype_is_applied_and_said(capsys: pytest.CaptureFixture[str]) -> None:
    """Left at its default, DeepSeek-V4's required fp8 KV cache is used (was: 0.00 GiB
    weights and "does not fit with any layout")."""
    code, out, _ = _run("plan", "deepseek-v4-flash", "--gpu", "h200:8", "--json",
                        capsys=capsys)
    data = json.loads(out)
    assert code == 0 and data["startup"]["fits"]
    assert data["startup"]["weights_bytes_per_gpu"] > 10 * 2**30
    assert any("requires --kv-cache-dtype fp8" in note for note in data["notes"])


@pytest.mark.parametrize("args,flag", [
    (["deepseek-v4-flash", "--gpu", "h200:8", "--kv-cache-dtype", "auto"], "--kv-cache-dtype"),
    (["llama-3.1-8b-instruct", "--gpu", "h100", "--max-model-len", "9999999"],
     "--max-model-len"),
])
def test_a_value_breaking_a_model_rule_is_an_error_naming_the_flag(
        args: list[str], flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run("plan", *args, capsys=capsys)
    assert code == 2 and f"error: {flag}" in err and out == ""


@pytest.mark.parametrize("model,gpu,best", [
    ("llama-3.1-70b", "a100-80gb:2", "TP2"),          # TP within a node, not PP2
    ("deepseek-r1", "h200:8", "DP8 EP8"),             # DP+EP for latent-attention MoE
    ("llama-3.1-8b-instruct", "h100:8", "TP8"),
])
def test_layouts_ranked_as_the_engines_guides(model: str, gpu: str, best: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = _run("plan", model, "--gpu", gpu, "--max-model-len", "8192", "--json",
                     capsys=capsys)
    layouts = json.loads(out)["layouts"]
    assert layouts[0]["layout"] == best and layouts[0]["fits"]
    in_node_pp = [i for i, lay in enumerate(layouts) if lay["pp"] > 1 and lay["fits"]]
    tp_only = [i for i, lay in enumerate(layouts) if lay["pp"] == 1 and lay["fits"]]
    assert not in_node_pp or min(in_node_pp) > max(tp_only)


def test_text_labels_say_per_what(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = _run("plan", *SEED_ISSUE, capsys=capsys)
    assert "requests of 250,000 tokens at once, per replica" in out
    assert "full-length reqs, all replicas" in out and "KV tokens/GPU" in out


def test_unpinned_gpu_memory_is_said(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = _run("plan", "llama-3.1-8b-instruct", "--gpu", "rtx-5080",
                       "--max-model-len", "2048", "--json", capsys=capsys)
    verdict = json.loads(out)["recommendation"]["verdict"]
    assert verdict["memory_pinned_by"] == "vendor datasheet only"
    low, high = verdict["memory_range_bytes"]
    assert low == 16 * 10**9 and high == 16 * 2**30


def test_sglang_dp_attention_runs_inside_the_tp_group(capsys: pytest.CaptureFixture[str]) -> None:
    """``--tp 8 --dp 8 --enable-dp-attention`` is 8 GPUs (was: "needs 64 GPUs")."""
    code, out, _ = _run("plan", "deepseek-r1", "--gpu", "h200:8", "--tp", "8", "--dp", "8",
                        "--enable-dp-attention", "--max-model-len", "32768", "--json",
                        capsys=capsys)
    data = json.loads(out)
    assert code == 0 and data["engine"] == "sglang" and data["layout"] == "TP8 DP8-attention"
    plain = json.loads(_run("plan", "deepseek-r1", "--gpu", "h200:8", "--tp", "8",
                            "--engine", "sglang", "--max-model-len", "32768", "--json",
                            capsys=capsys)[1])
    # attention replicated per DP rank (attention TP 1): more weight per GPU than TP8
    assert data["startup"]["weights_bytes_per_gpu"] > plain["startup"]["weights_bytes_per_gpu"]
    best = json.loads(_run("plan", "deepseek-r1", "--gpu", "h200:8", "--engine", "sglang",
                           "--max-model-len", "32768", "--json", capsys=capsys)[1])["layouts"][0]
    assert best["layout"] == "TP8 DP8-attention EP8"


def test_sglang_dp_attention_needs_dp_dividing_tp(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run("plan", "deepseek-r1", "--gpu", "h200:8", "--tp", "8", "--dp", "3",
                        "--enable-dp-attention", capsys=capsys)
    assert code == 2 and "--enable-dp-attention" in err


def test_sglang_no_kv_memory_names_the_lowest_viable_fraction(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run("plan", "qwen3-235b-a22b-fp8", "--gpu", "h100:4", "--tp", "4",
                        "--mem-fraction-static", "0.5", "--engine", "sglang", "--json",
                        capsys=capsys)
    data = json.loads(out)
    assert code == 1
    assert data["startup"]["error"].startswith("Loaded weights leave no GPU memory")
    lowest = data["startup_detail"]["lowest_viable_mem_fraction_static"]
    assert 0.5 < lowest < 1
    assert any(f"{lowest}" in note for note in data["startup_detail"]["notes"])
    # at that fraction SGLang starts
    code, out, _ = _run("plan", "qwen3-235b-a22b-fp8", "--gpu", "h100:4", "--tp", "4",
                        "--mem-fraction-static", str(lowest), "--engine", "sglang",
                        "--max-model-len", "256", "--json", capsys=capsys)
    assert json.loads(out)["startup"]["kv_cache_tokens"] > 0


def test_a_verdict_near_the_edge_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    """At the largest context the pool allows, the margin is tiny: the plan says so, and
    with the catalog's nvidia-smi figure (±260 MiB) that the verdict turns on it."""
    base = [a for a in SEED_ISSUE if a not in ("--max-model-len", "250000")]
    pinned = [*base, "--gpu-memory", "97417MiB"]
    _, out, _ = _run("plan", *pinned, "--json", capsys=capsys)
    largest = json.loads(out)["recommendation"]["largest_context_tokens"]
    code, out, _ = _run("plan", *pinned, "--max-model-len", str(largest), "--json",
                        capsys=capsys)
    data = json.loads(out)
    verdict = data["recommendation"]["verdict"]
    assert code == 0 and verdict["risk"] == "near the edge"
    assert 0 <= verdict["margin_bytes"] < 0.02 * data["gpu"]["memory_bytes"]
    assert any(note.startswith("near the edge") for note in data["notes"])
    code, out, _ = _run("plan", *base, "--max-model-len", str(largest), "--json",
                        capsys=capsys)
    verdict = json.loads(out)["recommendation"]["verdict"]
    assert verdict["risk"] == "depends on unpinned memory"
    assert verdict["fits_at_high"] and not verdict["fits_at_low"]


@pytest.mark.parametrize("card,gpu", [("minimax-m2.5", "h200:8"), ("llama-4-scout", "h100:4")])
def test_families_refused_before_now_plan(card: str, gpu: str,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """MiniMax-M2.x (was exit 2, "unknown family") and Llama 4 plan from bundled cards."""
    code, out, _ = _run("plan", card, "--gpu", gpu, "--max-model-len", "32768", "--json",
                        capsys=capsys)
    data = json.loads(out)
    assert code == 0 and data["startup"]["fits"]
    assert data["startup"]["kv_cache_tokens"] > 32768
