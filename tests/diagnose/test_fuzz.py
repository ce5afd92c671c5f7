"""Hostile input: long, binary and pathological lines against every rule, with a time bound.

A quadratic regex on pasted text (a 64 KB base64 blob before an OOM message) used to take
minutes. The bounds here are hang detectors, far above what a linear pass takes (tens of
milliseconds): a quadratic pattern over these inputs takes minutes, not seconds.
"""

from __future__ import annotations

import random
import time

import pytest

from servewise.diagnose import diagnose_bytes, diagnose_text
from servewise.diagnose.attribute import paths_in
from servewise.diagnose.ruleset import load_rules
from servewise.diagnose.tables import bound, written
from servewise.formats.logline import MAX_LINE_CHARS, clip_text

RULES = load_rules()
HANG = 10.0
"""Seconds one diagnosis may take before it counts as a hang (linear: well under one)."""
FILLERS = {
    "letters": "a" * 65536,
    "digits_and_dots": "0." * 32768,
    "path_segments": "a/" * 32768,
    "spaces": " " * 65536,
    "brackets": "(" * 32768 + "[" * 32768,
    "quotes": "'" * 65536,
    "base64": "".join(random.Random(7).choice(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/") for _ in range(65536)),
}


def _timed(func: object, *args: object) -> float:
    start = time.perf_counter()
    func(*args)  # type: ignore[operator]
    return time.perf_counter() - start


@pytest.mark.parametrize("rule", [r for r in RULES.rules if r.signatures], ids=lambda r: r.id)
def test_every_rule_survives_long_pathological_lines(rule: object) -> None:
    keywords = list(rule.keywords)  # type: ignore[attr-defined]
    for index, (name, filler) in enumerate(FILLERS.items()):
        keyword = keywords[index % len(keywords)]
        for text in (f"{filler} {keyword}\n",
                     f"ERROR 01-01 00:00:00 [x.py:1] {filler}{keyword}{filler}\n"):
            elapsed = _timed(diagnose_text, text)
            assert elapsed < HANG, (rule.id, name, keyword, elapsed)  # type: ignore[attr-defined]
    text = f"RuntimeError: {(keywords[0] + ' ') * 4000}\n"
    assert _timed(diagnose_text, text) < HANG


@pytest.mark.parametrize("rule", [r for r in RULES.rules if r.signatures], ids=lambda r: r.id)
def test_every_rule_pattern_is_linear_on_clipped_text(rule: object) -> None:
    """What the rules see is clipped; each pattern over it stays well under the bound."""
    patterns = [s.pattern for s in rule.signatures] + list(rule.extract)  # type: ignore[attr-defined]
    for filler in FILLERS.values():
        for keyword in list(rule.keywords)[:2]:  # type: ignore[attr-defined]
            text = clip_text(f"{filler} {keyword} {filler}")
            assert len(text) <= MAX_LINE_CHARS + 8
            for pattern in patterns:
                assert _timed(pattern.search, text) < HANG / 10, (rule.id, pattern.pattern[:60])  # type: ignore[attr-defined]


def test_binary_and_invalid_utf8_lines_are_read_not_crashed_on() -> None:
    rng = random.Random(11)
    noise = bytes(rng.randrange(1, 256) for _ in range(200_000))
    log = (b"INFO 01-01 00:00:00 [x.py:1] starting\n" + b"\x00" * 0 + b"x" * 9000 + b"\n"
           + noise + b"\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n")
    start = time.perf_counter()
    diagnosis = diagnose_bytes([log[i:i + 4096] for i in range(0, len(log), 4096)])
    assert time.perf_counter() - start < HANG
    assert diagnosis.root_cause is not None
    assert diagnosis.root_cause.category.startswith("oom")


@pytest.mark.parametrize("size", [65536, 262144, 4 * 2**20])
def test_a_long_token_before_the_message_still_finds_the_oom(size: int) -> None:
    """The issue's case: a run of characters before an OOM message on the same line."""
    text = "x" * size + " torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
    start = time.perf_counter()
    diagnosis = diagnose_text(text)
    assert time.perf_counter() - start < HANG
    assert diagnosis.root_cause is not None and diagnosis.root_cause.category.startswith("oom")


def test_an_endless_line_is_held_at_a_bounded_size() -> None:
    """50 MB without a newline: the scanner keeps only its ends, and still reads the tail."""
    from servewise.diagnose import new_scanner
    from servewise.diagnose.scan import MAX_RAW_LINE

    scanner = new_scanner()
    chunk = b"A" * 2**20
    for _ in range(50):
        scanner.feed(chunk)
        assert len(scanner._pending) <= MAX_RAW_LINE + 8
    scanner.feed(b" RuntimeError: CUDA error: out of memory\n")
    diagnosis = scanner.finish()
    assert diagnosis.root_cause is not None and diagnosis.root_cause.category.startswith("oom")


def test_clip_text_keeps_short_lines_and_the_ends_of_blobs() -> None:
    assert clip_text("RuntimeError: boom") == "RuntimeError: boom"
    blob = "Q" * 5000
    clipped = clip_text(f"ValueError: image {blob} is too large")
    assert clipped.startswith("ValueError: image QQQ") and clipped.endswith("is too large")
    assert len(clipped) < 400
    assert clip_text("a" + " " * 500 + "b") == "a b"
    long = " ".join(["word"] * 3000)
    assert len(clip_text(long)) <= MAX_LINE_CHARS + 8


def test_bound_rewrites_every_unbounded_repeat_and_nothing_else() -> None:
    assert bound(r"[\d.,]+(?:\s*[KMGT]i?B)?") == r"[\d.,]{1,256}(?:\s{0,256}[KMGT]i?B)?"
    assert bound(r"(?:[\w.+-]+/)+x") == r"(?:[\w.+-]{1,256}/){1,256}x"
    assert bound(r".*?b") == r".{0,256}?b"
    assert bound(r"\++[+*]") == r"\+{1,256}[+*]"
    assert bound(r"[^]+*]+") == r"[^]+*]{1,256}"
    assert bound(r"a{2,}b{3}") == r"a{2,256}b{3}"
    for text in (r"[\d.,]+(?:\s*[KMGT]i?B)?", r"(?P<x>.+?) GPU", r"a{2,}"):
        assert written(bound(text)) == text


def test_paths_in_is_linear_and_finds_paths() -> None:
    assert paths_in("Assertion error (/x/deepgemm-src/csrc/apis/layout.hpp:60): bad") == [
        "/x/deepgemm-src/csrc/apis/layout.hpp"]
    assert paths_in("ImportError: /v/vllm/_C.abi3.so: undefined symbol: _Z") == [
        "/v/vllm/_C.abi3.so"]
    start = time.perf_counter()
    paths_in("a." * 500_000 + " " + "a/" * 500_000)
    assert time.perf_counter() - start < HANG
