"""Name and path-pattern helpers: literal prefixes, tails, name keys, close matches."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from servewise.knowledge.libraries import load_library_table
from servewise.knowledge.patterns import (
    close_names,
    literal_prefix,
    module_folder,
    name_key,
    normalize_package,
    required_literal,
    required_literals,
    tails,
)


@pytest.mark.parametrize(
    ("pattern", "prefix"),
    [
        (r"^vllm/_C(_stable_libtorch)?\.[^/]*so$", "vllm/_C"),
        (r"^lib(64)?/libcudart\.so(\.\d+)*$", "lib"),
        (r"^ab?c$", "a"),
        (r"^a*b$", ""),
        (r"^a+b$", "a"),
        (r"^(a|b)$", ""),
        (r"^ab|cd$", ""),  # alternation at the top: no common prefix
        (r"^a(b|c)d$", "a"),
        (r"^a[|]b$", "a"),
        (r"^x\d+$", "x"),
        (r"^x\.y$", "x.y"),
        ("no-anchor", ""),
    ],
)
def test_literal_prefix(pattern: str, prefix: str) -> None:
    assert literal_prefix(pattern) == prefix


PATH_PATTERNS = sorted({p.pattern for lib in load_library_table() for p in lib.paths})


@settings(max_examples=10, deadline=None)
@given(st.data())
@pytest.mark.parametrize("pattern", PATH_PATTERNS)
def test_every_match_of_a_shipped_pattern_starts_with_its_prefix(
    pattern: str, data: st.DataObject
) -> None:
    text = data.draw(st.from_regex(re.compile(pattern), fullmatch=True))
    assert text.startswith(literal_prefix(pattern))


def test_tails_and_folders() -> None:
    assert list(tails("a/b/c.so", "/")) == ["a/b/c.so", "b/c.so", "c.so"]
    assert list(tails("", "/")) == []
    assert module_folder("vllm/third_party/deep_gemm/_C.so") == "vllm.third_party.deep_gemm"
    assert module_folder("flash_attn_2_cuda.so") == ""


def test_name_keys() -> None:
    assert name_key("Deep-GEMM") == name_key("deep_gemm") == "deepgemm"
    assert name_key("MSCCL++") == "msccl"
    assert normalize_package("SGL_Kernel") == "sgl-kernel"
    assert close_names("flash-attn-3", ["flash_attn_3", "flashmla", "nccl"])[0] == "flash_attn_3"


@pytest.mark.parametrize(("pattern", "literal"), [
    (r"(?P<m>[\w./-]{1,256}) does not appear to have a file named (?P<f>\w+)",
     " does not appear to have a file named "),
    (r"(?:gemm|GEMM) (?:is|are) not implemented for Blackwell", " not implemented for Blackwell"),
    (r"foo(?:bar)?baz", "foo"),
    (r"x\.y\d+zz", "x.y"),
    (r"(?i:abc)defg", "defg"),
    (r"(?i)kv cache", ""),
    (r"a|bcd", ""),
    (r"(", ""),
])
def test_required_literal(pattern: str, literal: str) -> None:
    assert required_literal(pattern) == literal


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["ab", "c", r"\d", "(?:x|y)", "(?:zz)?", "[pq]", "e+", "(?P<g>fg)",
                                 r"\.", " "]), min_size=1, max_size=6),
       st.text(alphabet="abcxyzpqefg. 0123", max_size=30))
def test_a_text_without_the_required_literal_never_matches(parts: list[str], text: str) -> None:
    """The shortcut diagnose takes (no literal, no regex) never skips a real match."""
    pattern = "".join(parts).replace("(?P<g>", "(?:") if "".join(parts).count("(?P<g>") > 1 else (
        "".join(parts))
    literal = required_literal(pattern)
    if re.search(pattern, text) is not None:
        assert literal in text


@pytest.mark.parametrize(("pattern", "literals"), [
    ("Can't load tokenizer|Failed to load the tokenizer",
     ("Can't load tokenizer", "Failed to load the tokenizer")),
    ("(?:CUDA out of memory|OutOfMemoryError): x", ("CUDA out of memory", "OutOfMemoryError")),
    (r"(?P<call>ibv_reg_mr|ibv_get) failed|ibv_open", (" failed", "ibv_open")),
    (r"(?P<call>ibv_reg_mr|ibv_get)\d|ibv_open", ("ibv_", "ibv_open")),
    (r"a long literal|\d", ()),  # a branch with no literal of its own: no shortcut
    ("(?i)Error one|Error two", ()),  # case ignored: literals mean nothing
    ("(?i:abcd)|efgh", ()),
    ("prefix (?:a|b) words", ("prefix ",)),  # one run long enough is enough
    ("ab|cd", ("ab", "cd")),
])
def test_required_literals(pattern: str, literals: tuple[str, ...]) -> None:
    assert required_literals(pattern) == literals


@settings(max_examples=400, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["ab", "c", "dd", r"\d", "(?:x|yy)", "(?:zz)?", "[pq]",
                                          "e+", "(?:fg|hi)", r"\.", " "]),
                         min_size=1, max_size=4), min_size=1, max_size=4),
       st.text(alphabet="abcdxyzpqefghi. 0123", max_size=30))
def test_a_text_without_any_required_literal_never_matches(branches: list[list[str]],
                                                           text: str) -> None:
    """The shortcut for an alternation (none of its branches' literals, no regex) never skips
    a real match."""
    pattern = "|".join("".join(parts) for parts in branches)
    literals = required_literals(pattern)
    if literals and re.search(pattern, text) is not None:
        assert any(literal in text for literal in literals)
    if len(branches) > 1:
        grouped = f"q(?:{pattern})q"
        found = required_literals(grouped)
        if found and re.search(grouped, text) is not None:
            assert any(literal in text for literal in found)


def test_compiled_literals_know_the_flag_given_to_compile() -> None:
    from servewise.knowledge.patterns import compiled_literals

    assert compiled_literals(re.compile("Error one|Error two")) == ("Error ",)  # shared prefix
    assert compiled_literals(re.compile("Error one|Error two", re.IGNORECASE)) == ()
