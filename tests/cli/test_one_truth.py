"""One source of truth: the same settings give the same answer from plan, check and launch.

Each test is one of the four wrong answers of a whole-tree review, run from the CLI.
"""

from __future__ import annotations

import json
import shlex

import pytest

from servewise.cli import run


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = run(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("spelling", [["--max_model_len", "999999"],
                                      ["--max-model-len=999999"],
                                      ["--max-model-len", "999999"]])
def test_every_spelling_of_a_flag_gets_the_same_answer(
        capsys: pytest.CaptureFixture[str], spelling: list[str]) -> None:
    code, out, _ = _run(capsys, "check", "gpt-oss-120b", "--gpu", "h100:1", "--json", "--",
                        *spelling)
    data = json.loads(out)
    assert code == 1 and data["will_start"] is False
    assert any("999999" in f["message"] or "999,999" in f["message"]
               for f in data["findings"] if f["level"] == "error")
    # the user's value is in the command once, in the engine's spelling
    argv = data["command"]["argv"]
    assert argv.count("--max-model-len") == 1 and "--max_model_len" not in argv


@pytest.mark.parametrize("dtype", ["fp8_ds_mla", "fp8"])
def test_plan_and_check_read_one_model_rule(capsys: pytest.CaptureFixture[str],
                                            dtype: str) -> None:
    plan_code, _, _ = _run(capsys, "plan", "deepseek-v4-flash", "--gpu", "h200:8",
                           "--kv-cache-dtype", dtype)
    check_code, out, _ = _run(capsys, "check", "deepseek-v4-flash", "--gpu", "h200:8",
                              "--engine", "vllm", "--json", "--", "--kv-cache-dtype", dtype)
    findings = json.loads(out)["findings"]
    assert plan_code == 0 and check_code == 0
    assert not [f for f in findings if f["part"] == "rules" and f["level"] == "error"]


def test_a_dtype_the_rule_refuses_is_refused_by_both(capsys: pytest.CaptureFixture[str]) -> None:
    plan_code, _, plan_err = _run(capsys, "plan", "deepseek-v4-flash", "--gpu", "h200:8",
                                  "--kv-cache-dtype", "bf16")
    check_code, out, _ = _run(capsys, "check", "deepseek-v4-flash", "--gpu", "h200:8",
                              "--engine", "vllm", "--json", "--", "--kv-cache-dtype", "bf16")
    errors = [f["message"] for f in json.loads(out)["findings"] if f["level"] == "error"]
    assert plan_code == 2 and check_code == 1
    assert errors and errors[0].split(":")[0] in plan_err
    assert len(errors) == len(set(errors))  # said once, not again as a memory failure


def test_a_rule_matches_the_architecture_of_a_renamed_copy(
        capsys: pytest.CaptureFixture[str], tmp_path: pytest.TempPathFactory) -> None:
    from servewise.knowledge.model_rules import model_rules_for

    by_name = {r.id for r in model_rules_for("deepseek-ai/DeepSeek-V4-Flash", "vllm")}
    renamed = {r.id for r in model_rules_for("/models/my-quant", "vllm",
                                             architectures=("DeepseekV4ForCausalLM",))}
    assert "deepseek-v4-vllm-kv-cache-fp8" in renamed and renamed <= by_name
    assert model_rules_for("/models/my-quant", "vllm") == []


def test_plan_and_check_refuse_the_same_layout_the_same_way(
        capsys: pytest.CaptureFixture[str]) -> None:
    plan_code, _, plan_err = _run(capsys, "plan", "gpt-oss-120b", "--gpu", "h200:8",
                                  "--engine", "sglang", "--tp", "8", "--ep", "3")
    check_code, out, check_err = _run(capsys, "check", "gpt-oss-120b", "--gpu", "h200:8",
                                      "--engine", "sglang", "--", "--tp", "8", "--ep-size", "3")
    assert plan_code == check_code == 2
    assert "must equal TP x DP (8)" in plan_err
    assert plan_err.splitlines()[0] == check_err.splitlines()[0]
    assert "--ep-size 3" not in out


def test_launch_docker_sglang_gets_what_a_container_needs(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "launch", "--dry-run", "--docker", "lmsysorg/sglang:v0.5.16",
                        "--port", "30000", "--", "python3", "-m", "sglang.launch_server",
                        "--model-path", "Qwen/Qwen3-8B")
    argv = shlex.split(out)
    assert code == 0
    assert "--host" in argv and argv[argv.index("--host") + 1] == "0.0.0.0"
    assert "--shm-size" in argv and "HF_TOKEN" in argv
    assert any(word.endswith(":/root/.cache/huggingface") for word in argv)
    assert argv[argv.index("-p") + 1] == "30000:30000"


def test_launch_docker_passes_secrets_by_name(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "launch", "--dry-run", "--json", "--docker",
                        "vllm/vllm-openai:v0.20.0", "--env", "HF_TOKEN=hf_secretvalue123",
                        "--env", "VLLM_LOGGING_LEVEL=DEBUG", "--", "vllm", "serve",
                        "Qwen/Qwen3-8B")
    assert code == 0
    assert "hf_secretvalue123" not in out
    argv = json.loads(out)["argv"]
    assert argv[argv.index("HF_TOKEN") - 1] == "-e"
    assert "VLLM_LOGGING_LEVEL=DEBUG" in argv


def test_online_quantization_reaches_the_plan(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = _run(capsys, "check", "llama-3.1-70b", "--gpu", "h100:1", "--json")
    bf16 = json.loads(out)["plan"]["startup"]["weights_bytes_per_gpu"]
    _, out, _ = _run(capsys, "check", "llama-3.1-70b", "--gpu", "h100:1", "--json", "--",
                     "--quantization", "fp8", "--cpu-offload-gb", "8")
    data = json.loads(out)
    fp8 = data["plan"]["startup"]["weights_bytes_per_gpu"]
    assert 0.49 < fp8 / bf16 < 0.56  # linear layers in one byte; embeddings and head kept
    notes = [f["message"] for f in data["findings"] if f["part"] == "memory"]
    assert any(n.startswith("--quantization fp8") for n in notes)
    assert any(n.startswith("--cpu-offload-gb is not modelled") for n in notes)
    _, out, _ = _run(capsys, "plan", "llama-3.1-70b", "--gpu", "h100:1", "--quantization",
                        "fp8", "--json")
    assert json.loads(out)["startup"]["weights_bytes_per_gpu"] == fp8


def test_an_unmodelled_method_is_named_not_ignored(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = _run(capsys, "check", "llama-3.1-8b-instruct", "--gpu", "h100:1", "--json",
                     "--", "--quantization", "bitsandbytes")
    notes = [f["message"] for f in json.loads(out)["findings"] if f["part"] == "memory"]
    assert any("--quantization bitsandbytes is not modelled" in n for n in notes)
