"""The JavaScript literal reader: what a data module holds, its unknown shapes, its errors."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from servewise.errors import FormatError
from servewise.formats.jsliteral import line_column, read_module, read_value
from support.paths import ROOT

CONFIGS = ROOT / "tests" / "data" / "recipes" / "sglang-configs" / "docs_new" / "src" / \
    "snippets" / "configs"


def test_a_module_of_literals() -> None:
    module = read_module("""
// a comment
/* a block
   comment */
export const config = {
  modelName: "LFM2.5",          // unquoted key, double quotes
  'single': 'it\\'s',
  "double": "a\\tb\\u00e9\\x41\\u{1F600}",
  numbers: [1, -2, 3.5, .5, 1e3, 0x1F, 0o17, 0b101, 1_000, +4, -Infinity],
  flags: [true, false, null, undefined,],
  numPromptsByConc: { 1: 10, 16: 32, },
  nested: { a: [ { b: [] } ] },
  curl: `curl \\\\
-d '{ "model": "{{MODEL_NAME}}" }'`,
};
export const other = [1, 2];
""")
    assert module.exports == ("config", "other")
    config = module.export("config")
    assert config["modelName"] == "LFM2.5"
    assert config["single"] == "it's"
    assert config["double"] == "a\tbéA\U0001F600"
    assert config["numbers"][:-1] == [1, -2, 3.5, 0.5, 1000.0, 31, 15, 5, 1000, 4]
    assert config["numbers"][-1] == -math.inf
    assert isinstance(config["numbers"][0], int) and isinstance(config["numbers"][4], float)
    assert config["flags"] == [True, False, None, None]
    assert config["numPromptsByConc"] == {"1": 10, "16": 32}   # JavaScript's keys are strings
    assert list(config) == ["modelName", "single", "double", "numbers", "flags",
                            "numPromptsByConc", "nested", "curl"]
    assert config["nested"] == {"a": [{"b": []}]}
    assert config["curl"] == "curl \\\n-d '{ \"model\": \"{{MODEL_NAME}}\" }'"
    assert module.export("other") == [1, 2]
    assert module.unknown == ()


def test_constants_resolve_and_spread() -> None:
    module = read_module("""
const BASE = ["--trust-remote-code", "--tp 8"];
const ENV = { A: "1" };
export const config = { flags: [...BASE, "--ep 8"], env: { ...ENV, B: "2" }, base: BASE, ENV };
""")
    config = module.export("config")
    assert config["flags"] == ["--trust-remote-code", "--tp 8", "--ep 8"]
    assert config["env"] == {"A": "1", "B": "2"}
    assert config["base"] == BASE_FLAGS
    assert config["ENV"] == {"A": "1"}
    assert module.exports == ("config",)
    assert set(module.values) == {"BASE", "ENV", "config"}
    assert module.export("BASE") is None              # declared, not exported


BASE_FLAGS = ["--trust-remote-code", "--tp 8"]


def test_what_is_not_a_literal_is_an_unknown_shape_and_the_reading_goes_on() -> None:
    module = read_module("""
import { HARDWARE } from "./_catalog.jsx";
export const config = {
  hw: HARDWARE,
  cells: [makeCell("h100", 8), { flags: [...shared, "--tp 8"] }],
  size: 1024 * 8,
  label: `TP=${tp}`,
  [computed]: 1,
  fn() { return 1; },
  arrow: (x) => x + 1,
  member: HARDWARE.h100,
  ...defaults,
  after: "still read",
};
function helper() { return { a: 1 }; }
export const tail = 1;
""")
    config = module.export("config")
    assert config["after"] == "still read"
    assert module.export("tail") == 1
    kinds = {(shape.path, shape.kind) for shape in module.unknown}
    assert kinds == {
        ("(module)", "import"), ("config.hw", "identifier"), ("config.cells[0]", "call"),
        ("config.cells[1].flags[0]", "spread"), ("config.size", "expression"),
        ("config.label", "template with ${}"), ("config", "computed key"),
        ("config.fn", "method"), ("config.arrow", "function"),
        ("config.member", "expression"), ("config", "spread"), ("(module)", "statement"),
    }
    call = next(shape for shape in module.unknown if shape.kind == "call")
    assert call.text == 'makeCell("h100", 8)' and call.line == 5
    assert config["cells"][0] is call                    # kept in place of the value
    assert [s.path for s in module.unknown_under("config.cells")] == [
        "config.cells[0]", "config.cells[1].flags[0]"]
    assert "makeCell" in str(call)


@pytest.mark.parametrize(("text", "expected", "offset"), [
    ('export const a = "open', '" closing the string', 22),
    ("export const a = { b: 1 c: 2 };", "',' or '}' in the object", 24),
    ("export const a = { b 1 };", "':'", 21),
    ("export const a = [1, 2;", "',' or ']' in the array", 22),
    ("export const a = ", "a value", 17),
    ("export const a = { b: 1 ", "',' or '}' in the object", 24),
    ("export const a = 1.2.3;", "a number", 17),
    ('export const a = "\\u12";', "hexadecimal digits", 20),
    ("export const a = 1; /* open", "'*/' closing the comment", 20),
    ("export const = 1;", "a name to declare", 13),
    ("} export const a = 1;", "a declaration", 0),
    ("export const a = f(1;", "')' closing the bracket", 21),
])
def test_malformed_input_is_a_format_error(text: str, expected: str, offset: int) -> None:
    with pytest.raises(FormatError) as caught:
        read_module(text, source="bad.jsx")
    error = caught.value
    assert expected in error.expected
    assert error.offset == offset
    assert "line 1" in error.found
    assert "bad.jsx" in str(error)


def test_a_string_does_not_run_past_its_line_and_bytes_must_be_utf8() -> None:
    with pytest.raises(FormatError) as caught:
        read_module('export const a = {\n  b: "one\n  two",\n};')
    assert "line 2" in caught.value.found
    with pytest.raises(FormatError) as caught:
        read_module(b'export const a = "\xff";')
    assert caught.value.offset == 18 and caught.value.expected == "UTF-8 text"


def test_read_value_and_line_column() -> None:
    value, unknown = read_value("{ a: [1, 'x'], b: c } // trailing comment")
    assert value["a"] == [1, "x"] and unknown[0].kind == "identifier"
    with pytest.raises(FormatError):
        read_value("[1] 2")
    assert line_column("ab\ncd", 4) == (2, 2)
    assert line_column("ab\ncd", 0) == (1, 1)


def test_the_cookbook_fixtures_read_whole() -> None:
    files = sorted(CONFIGS.glob("*/*.jsx"))
    assert len(files) >= 6
    for file in files:
        module = read_module(file.read_bytes(), source=file.name)
        name = "benchmarks" if file.stem.endswith("-benchmarks") else \
            "srtSlurmConfig" if file.stem.endswith("-srt-slurm") else "config"
        assert module.exports == (name,), file
        assert module.unknown == () or file.stem == "minimax-h3", file
    # MiniMax-H3's page is a diffusion matrix with arrow functions (a curl builder with
    # regular expressions and templates): each is an unknown shape, the literals around them
    # are read.
    h3 = read_module((CONFIGS / "MiniMaxAI" / "minimax-h3.jsx").read_bytes())
    assert len(h3.unknown) == 19 and {shape.kind for shape in h3.unknown} == {"function"}
    assert {shape.path.split(".")[1].split("[")[0] for shape in h3.unknown} == {
        "matchDims", "overlayDims", "curl", "dockerRunCommand", "runModes"}
    assert len(h3.export("config")["cells"]) == 9
    assert h3.export("config")["dockerImages"]["h100"] == "lmsysorg/sglang:dev"
    config = read_module((CONFIGS / "meituan-longcat" / "longcat-2.0.jsx").read_text()) \
        .export("config")
    knob = config["playgroundFeatures"]["attention"]["knobs"][0]
    assert knob["values"][:2] == [None, 8]
    assert knob["values"][2]["disable"] == {"nodes": ["single"]}
    assert config["cells"][1]["match"]["nodes"] == "multi-2"
    assert config["cells"][0]["flags"][9] == (
        "--model-loader-extra-config '{\"enable_multithread_load\":true,\"num_threads\":12}'")


@settings(max_examples=300, deadline=500)
@given(st.text(alphabet="{}[]()'\"`,:;./*-+=$\\\n abc019xe", max_size=60))
def test_random_text_only_raises_format_errors(text: str) -> None:
    try:
        read_module("export const a = " + text)
    except FormatError as error:
        assert error.expected and error.found and error.offset >= 0
