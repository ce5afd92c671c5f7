"""Model rules and GPU pitfalls: the data files, and what they say about argv lists."""

from __future__ import annotations

from pathlib import Path

import pytest

from servewise.knowledge._load import ENV_VAR, DataFileError, looks_like_source
from servewise.knowledge.model_rules import apply_fixes, load_model_rules, load_pitfalls
from servewise.recipes import check_rules, model_rules_for, pitfalls_for
from support.configs import find_shared

DSV4 = "deepseek-ai/DeepSeek-V4-Flash"


def test_every_rule_and_pitfall_has_sources() -> None:
    rules, pitfalls = load_model_rules(), load_pitfalls()
    assert {rule.id for rule in rules} >= {"deepseek-v4-vllm-kv-cache-fp8",
                                           "deepseek-v4-vllm-block-size-256",
                                           "deepseek-v4-vllm-tokenizer-mode"}
    assert {p.id for p in pitfalls} >= {"sm120-deepgemm-fork-without-sm120", "fa3-hopper-only",
                                        "flashinfer-moe-workspace-headroom"}
    for item in (*rules, *pitfalls):
        assert item.sources and all(looks_like_source(source) for source in item.sources)
    shared = find_shared()
    heldout = shared / "data" / "heldout_sources.txt" if shared else None
    if heldout is None or not heldout.is_file():
        return
    for line in heldout.read_text("utf-8").splitlines():
        if "#" not in line or line.startswith("#"):
            continue
        repo, number = line.strip().split("#")
        forms = {line.strip(), f"github.com/{repo}/issues/{number}",
                 f"github.com/{repo}/pull/{number}"}
        for item in (*rules, *pitfalls):
            for source in item.sources:
                assert not any(form == source or form + "/" in source + "/" for form in forms
                               if "/" in form), (item.id, source)


def test_deepseek_v4_rules_catch_what_the_seed_hit() -> None:
    rules = model_rules_for(DSV4, "vllm", "0.26.1rc1.dev77")
    found = check_rules(rules, ["--tensor-parallel-size", "2", "--kv-cache-dtype", "auto"])
    by_rule = {violation.rule.id: violation for violation in found}
    assert by_rule["deepseek-v4-vllm-kv-cache-fp8"].how == "wrong value"
    assert "fp8_ds_mla layout only supports fp8 kv-cache" in \
        by_rule["deepseek-v4-vllm-kv-cache-fp8"].message
    assert by_rule["deepseek-v4-vllm-block-size-256"].how == "missing"
    fixed = apply_fixes(["--tensor-parallel-size", "2", "--kv-cache-dtype", "auto"], found)
    assert check_rules(rules, fixed) == []
    assert fixed[:2] == ["--tensor-parallel-size", "2"]
    assert "auto" not in fixed


def test_equals_and_underscore_spellings_count() -> None:
    rules = model_rules_for(DSV4, "vllm")
    argv = ["--kv_cache_dtype=fp8", "--block-size=256", "--tokenizer_mode", "deepseek_v4"]
    assert check_rules(rules, argv) == []


def test_rules_are_per_engine_model_and_version() -> None:
    assert model_rules_for(DSV4, "sglang") == []
    assert model_rules_for("meta-llama/Llama-3.1-8B", "vllm") == []
    names = {rule.id for rule in model_rules_for("MJPansa/DeepSeek-V4-Flash-0731-NVFP4", "vllm")}
    assert "deepseek-v4-flash-0731-no-mtp" in names


def test_forbid_rule_matches_value_patterns() -> None:
    rules = [rule for rule in model_rules_for("deepseek-ai/DeepSeek-V4-Flash-0731", "vllm")
             if rule.kind == "forbid"]
    mtp = ["--speculative-config", '{"method":"mtp","num_speculative_tokens":2}']
    dspark = ["--speculative-config", '{"method":"dspark","num_speculative_tokens":7}']
    (violation,) = check_rules(rules, mtp)
    assert violation.how == "forbidden"
    assert check_rules(rules, dspark) == []
    assert "dspark" in apply_fixes(mtp, [violation])[1]


@pytest.fixture
def user_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The test's user data folder (``$SERVEWISE_DATA_DIR``)."""
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "user"))
    return tmp_path / "user"


def test_version_ranges(user_dir: Path) -> None:
    user_dir.mkdir(parents=True)
    (user_dir / "model_rules.toml").write_text('''
[[rule]]
id = "toy-new-flag"
models = ["acme/*"]
engine = "vllm"
kind = "require"
flag = "--new-flag"
fix = ["--new-flag"]
min_version = "0.26.1"
max_version = "0.30"
prevents = "a toy failure"
why = "a test"
source = "measured: a unit test"
''', "utf-8")
    def ids(version: str) -> list[str]:
        return [r.id for r in model_rules_for("acme/x", "vllm", version, user_dir=user_dir)]
    assert ids("0.26.1rc1.dev77") == []          # rc before the release: not yet
    assert ids("0.26.1") == ["toy-new-flag"]
    assert ids("0.30.0") == []
    (rule,) = model_rules_for("acme/x", "vllm", "0.27", user_dir=user_dir)
    assert rule.check(["--new-flag"]) is None


def test_a_broken_rule_file_names_entry_and_field(user_dir: Path) -> None:
    user_dir.mkdir(parents=True)
    (user_dir / "model_rules.toml").write_text(
        '[[rule]]\nid = "x"\nmodels = ["a/*"]\nengine = "tgi"\nkind = "require"\n'
        'flag = "--x"\nfix = ["--x"]\nprevents = "p"\nwhy = "w"\nsource = "measured: t"\n',
        "utf-8")
    with pytest.raises(DataFileError) as caught:
        model_rules_for("a/b", "vllm", user_dir=user_dir)
    assert caught.value.fields["field"] == "engine"
    assert caught.value.fields["file"].endswith("model_rules.toml")


def test_pitfalls_by_gpu_engine_and_library() -> None:
    sm120 = {p.id for p in pitfalls_for(cc="12.0", engine="vllm", libraries={"deep_gemm"})}
    assert "sm120-deepgemm-fork-without-sm120" in sm120
    no_deepgemm = {p.id for p in pitfalls_for(cc="12.0", engine="vllm", libraries={"flash_attn"})}
    assert "sm120-deepgemm-fork-without-sm120" not in no_deepgemm
    hopper = {p.id for p in pitfalls_for(cc="9.0", engine="vllm")}
    assert "sm120-deepgemm-fork-without-sm120" not in hopper
    assert "fa3-hopper-only" not in hopper
    assert "fa3-hopper-only" in {p.id for p in pitfalls_for(cc="12.0", engine="sglang")}


def test_pitfalls_match_the_model_family_and_the_engine_version() -> None:
    pitfall = "sm120-deepgemm-fork-without-sm120"

    def ids(**kwargs: object) -> set[str]:
        return {p.id for p in pitfalls_for(cc="12.0", engine="vllm", **kwargs)}  # type: ignore[arg-type]

    assert pitfall in ids(model="deepseek-v4")
    assert pitfall not in ids(model="llama-3", model_known=True)   # Llama on an RTX 5090
    assert pitfall not in ids(model=None, model_known=True)        # a model of no family
    assert pitfall in ids()                                        # the model is not known
    assert pitfall not in ids(model="deepseek-v4", version="0.26.1rc1.dev77")  # the 07-29 tag
    assert pitfall in ids(model="deepseek-v4", version="0.26.1rc1.dev181")


def test_pitfalls_triggered_by_flags_and_env() -> None:
    def ids(**kwargs: object) -> set[str]:
        return {p.id for p in pitfalls_for(**kwargs)}  # type: ignore[arg-type]
    assert "sm120-sm100-only-kernels" in ids(
        cc="12.0", engine="vllm", argv=["--attention_config.use_fp4_indexer_cache", "True"])
    assert "sm120-sm100-only-kernels" not in ids(
        cc="12.0", engine="vllm", argv=["--attention_config.use_fp4_indexer_cache", "False",
                                        "--moe-backend", "auto"])
    assert "fa3-hopper-only" in ids(cc="8.9", engine="vllm", argv=[],
                                    env={"VLLM_FLASH_ATTN_VERSION": "3"})
    assert "fa3-hopper-only" not in ids(cc="8.9", engine="vllm", argv=[], env={})
    flashinfer = ["--moe-runner-backend", "flashinfer_mxfp4"]
    assert "flashinfer-moe-workspace-headroom" in ids(cc="9.0", engine="sglang", argv=flashinfer)
    assert "flashinfer-moe-workspace-headroom" in ids(
        cc="9.0", engine="sglang", argv=[*flashinfer, "--mem-fraction-static", "0.944"])
    assert "flashinfer-moe-workspace-headroom" not in ids(
        cc="9.0", engine="sglang", argv=[*flashinfer, "--mem-fraction-static", "0.90"])
