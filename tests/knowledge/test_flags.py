"""The engine-flag table: valid, complete, and both ways exact."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from servewise.errors import UsageError
from servewise.knowledge._load import DataFileError, looks_like_source
from servewise.knowledge.flags import (
    SETTING_IDS,
    EngineSettings,
    flag_for,
    from_argv,
    load_flag_table,
    to_argv,
)


def test_every_setting_has_a_row_and_sources() -> None:
    table = load_flag_table()
    assert {setting.id for setting in table} == set(SETTING_IDS)
    for setting in table:
        assert setting.sources and all(looks_like_source(s) for s in setting.sources)


def test_seed_command_round_trips() -> None:
    seed = ["MJPansa/DeepSeek-V4-Flash-0731-NVFP4", "--tensor-parallel-size", "2",
            "--max-model-len", "250000", "--gpu-memory-utilization", "0.95",
            "--kv-cache-dtype", "fp8", "--block-size", "256", "--enforce-eager",
            "--tokenizer-mode", "deepseek_v4", "--trust-remote-code"]
    settings = from_argv("vllm", seed)
    assert settings.model == "MJPansa/DeepSeek-V4-Flash-0731-NVFP4"
    assert settings.tensor_parallel_size == 2 and settings.gpu_memory_utilization == 0.95
    assert settings.enforce_eager is True and settings.extra == ()
    assert sorted(to_argv("vllm", settings, model_positional=True)) == sorted(seed)


def test_engines_spell_the_same_setting_differently() -> None:
    settings = from_argv("vllm", ["-tp", "8", "--max-model-len=32768", "--block-size", "64"])
    assert to_argv("sglang", settings) == ["--tp-size", "8", "--context-length", "32768",
                                           "--page-size", "64"]
    assert flag_for("sglang", "max_num_seqs") == "--max-running-requests"


def test_inverted_and_negative_bools() -> None:
    sglang = from_argv("sglang", ["--disable-radix-cache", "--disable-cuda-graph"])
    assert sglang.enable_prefix_caching is False and sglang.enforce_eager is True
    assert to_argv("vllm", sglang) == ["--enforce-eager", "--no-enable-prefix-caching"]
    assert to_argv("sglang", sglang) == ["--disable-cuda-graph", "--disable-radix-cache"]


def test_other_engines_setting_names_the_counterpart() -> None:
    with pytest.raises(UsageError) as caught:
        to_argv("vllm", EngineSettings(mem_fraction_static=0.88))
    assert "--gpu-memory-utilization" in (caught.value.hint or "")


def test_unknown_arguments_are_kept_in_order() -> None:
    settings = from_argv("vllm", ["m", "--foo", "bar", "--baz", "-tp", "2"])
    assert settings.tensor_parallel_size == 2
    assert settings.extra == ("--foo", "bar", "--baz")
    assert to_argv("vllm", settings)[-3:] == ["--foo", "bar", "--baz"]


@pytest.mark.parametrize("argv", [["--max-model-len", "lots"], ["--gpu-memory-utilization"],
                                  ["--speculative-config", "{not json"]])
def test_bad_values_name_the_flag(argv: list[str]) -> None:
    with pytest.raises(UsageError) as caught:
        from_argv("vllm", argv)
    assert argv[0] in caught.value.message


def test_version_aware_spelling(tmp_path: Path) -> None:
    (tmp_path / "engine_flags.toml").write_text(
        'version = 1\n[[setting]]\nid = "max_num_seqs"\nkind = "int"\n'
        'description = "x"\nsource = ["https://example.org/a"]\n'
        '[[setting.flag]]\nengine = "vllm"\nname = "--max-seqs-old"\nuntil = "0.5.0"\n'
        '[[setting.flag]]\nengine = "vllm"\nname = "--max-num-seqs"\nsince = "0.5.0"\n')
    table = load_flag_table(tmp_path)
    settings = EngineSettings(max_num_seqs=4)
    assert to_argv("vllm", settings, "0.4.2", table=table) == ["--max-seqs-old", "4"]
    assert to_argv("vllm", settings, "0.5.0rc1", table=table) == ["--max-seqs-old", "4"]
    assert to_argv("vllm", settings, "0.5.0", table=table) == ["--max-num-seqs", "4"]
    assert to_argv("vllm", settings, table=table) == ["--max-num-seqs", "4"]
    assert from_argv("vllm", ["--max-seqs-old", "3"], "0.9.0", table=table).max_num_seqs == 3


def test_bad_user_file_names_file_and_field(tmp_path: Path) -> None:
    (tmp_path / "engine_flags.toml").write_text(
        'version = 1\n[[setting]]\nid = "port"\nkind = "int"\ndescription = "x"\n'
        'source = ["https://example.org/a"]\n[[setting.flag]]\nengine = "tgi"\nname = "--port"\n')
    with pytest.raises(DataFileError) as caught:
        load_flag_table(tmp_path)
    assert "engine_flags.toml" in caught.value.message
    assert caught.value.fields["field"] == "flag[0].engine"


_VALUES = {
    "int": st.integers(min_value=1, max_value=10**7),
    "float": st.floats(min_value=0.01, max_value=1.0).map(lambda x: round(x, 3)),
    "str": st.from_regex(r"[a-z][a-z0-9_./-]{0,20}", fullmatch=True),
    "bool": st.booleans(),
    "json": st.just('{"method":"mtp","num_speculative_tokens":2}'),
}


@st.composite
def _settings(draw: st.DrawFn, engine: str) -> EngineSettings:
    table = load_flag_table()
    chosen = {}
    for setting in table:
        spelling = setting.spelling(engine)
        if spelling is None or setting.id == "model":
            continue
        if setting.kind == "bool" and not spelling.false_name:
            # one flag: it can only say the value that is not the engine's default
            value = draw(st.sampled_from([None, not spelling.inverted]))
        else:
            value = draw(st.one_of(st.none(), _VALUES[setting.kind]))
        if value is not None:
            chosen[setting.id] = value
    return EngineSettings(**chosen)


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
@given(data=st.data())
def test_round_trip_any_settings(engine: str, data: st.DataObject) -> None:
    settings = data.draw(_settings(engine))
    back = from_argv(engine, to_argv(engine, settings))
    assert back == settings, [f.name for f in fields(settings)
                              if getattr(back, f.name) != getattr(settings, f.name)]


def test_the_nearest_spelling_falls_back_to_the_counterpart() -> None:
    table = load_flag_table()
    own = table.nearest_spelling("max_model_len", "sglang")
    assert own is not None and (own[0].name, own[1]) == ("--context-length", False)
    other = table.nearest_spelling("gpu_memory_utilization", "sglang")
    assert other is not None and (other[0].name, other[1]) == ("--mem-fraction-static", True)
