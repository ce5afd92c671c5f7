"""A refused command line: which engine and version a flag belongs to, from the flag table."""

from __future__ import annotations

from servewise.diagnose import diagnose_text
from servewise.diagnose.flag_advice import advise_flag
from servewise.knowledge.flags import FlagSpelling, FlagTable, Setting
from servewise.versions import EngineVersion


def _root(log: str):  # type: ignore[no-untyped-def]
    root = diagnose_text(log).root_cause
    assert root is not None and root.category == "engine_args_invalid", root
    return root


def test_sglang_flags_given_to_vllm_get_vllm_spellings() -> None:
    root = _root("usage: vllm serve [model_tag] [options]\n"
                 "vllm serve: error: unrecognized arguments: --context-length 32768 "
                 "--mem-fraction-static 0.9\n")
    # vLLM's command line refusing an argument is its front end's (as the corpus labels it).
    assert root.library == "vllm-frontend"
    advice = root.fix.steps[0]
    assert "--context-length is SGLang's flag; vLLM spells it --max-model-len." in advice
    assert "vLLM spells it --gpu-memory-utilization (its counterpart setting)" in advice


def test_vllm_flags_given_to_sglang_get_sglang_spellings() -> None:
    root = _root("launch_server.py: error: unrecognized arguments: --max-model-len 4096\n")
    assert root.library == "sglang-config"
    assert root.fix.steps[0] == ("--max-model-len is vLLM's flag; SGLang spells it "
                                 "--context-length.")


def test_an_engine_not_named_still_says_whose_flag_it_is() -> None:
    root = _root("error: unrecognized arguments: --tp-size 2\n")
    assert "--tp-size is SGLang's flag (tensor-parallel-size)." in root.fix.steps


def test_a_flag_no_engine_knows_gets_the_general_fix_only() -> None:
    root = _root("vllm serve: error: unrecognized arguments: --turbo\n")
    assert len(root.fix.steps) == 1 and "does not know --turbo" in root.fix.steps[0]


def test_a_value_outside_the_choices() -> None:
    root = _root("api_server.py: error: argument --kv-cache-dtype: invalid choice: 'fp4' "
                 "(choose from 'auto', 'fp8', 'fp8_e5m2')\n")
    assert root.fix.steps == ("--kv-cache-dtype does not accept 'fp4' in this version: use one "
                              "of 'auto', 'fp8', 'fp8_e5m2'.",)


def test_a_flag_renamed_between_versions() -> None:
    table = FlagTable([Setting(
        id="swap_space", kind="float", description="CPU swap space per GPU",
        spellings=(FlagSpelling("vllm", "--swap-space", until=EngineVersion.coerce("0.10")),
                   FlagSpelling("vllm", "--cpu-swap-gib", since=EngineVersion.coerce("0.10"))),
        sources=("test",))])
    assert advise_flag(table, "--swap-space", "vllm", EngineVersion.coerce("0.11.0")) == (
        "--swap-space is vLLM's spelling before 0.10; this version spells it --cpu-swap-gib.")
    assert advise_flag(table, "--cpu-swap-gib", "vllm", EngineVersion.coerce("0.9.2")) == (
        "--cpu-swap-gib is vLLM's spelling from 0.10 on; this version spells it --swap-space.")
    assert advise_flag(table, "--swap-space", "vllm", EngineVersion.coerce("0.9.2")) is None
