"""read_version: PEP 440 parts, the engines' conventions, image tags, bad input."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from packaging.version import Version

from servewise.errors import UsageError
from servewise.knowledge.version_reading import CHANNELS, FORMS, read_version

# (input, expected fields) — written from PEP 440, setuptools-scm's documented scheme
# (https://setuptools-scm.readthedocs.io/en/latest/usage/#default-versioning-scheme) and the
# tag conventions in knowledge/data/image_tags.toml, not from servewise's output.
CASES: list[tuple[str, dict[str, Any]]] = [
    # The seed's model card: a dirty local build of a dev version.
    ("0.26.1rc1.dev229+g6f91edf96.d20260731", {
        "form": "version", "channel": "local-build", "release": (0, 26, 1), "pre": ("rc", 1),
        "dev": 229, "commits_since_tag": 229, "commit": "6f91edf96",
        "build_date": "2026-07-31", "dirty": True, "official_build_possible": False,
        "local": "g6f91edf96.d20260731", "base_version": "0.26.1",
        "public": "0.26.1rc1.dev229"}),
    # The seed's two nightlies, as wheel file names.
    ("vllm-0.26.1rc1.dev77+ga6b593d2-cp38-abi3-linux_x86_64.whl", {
        "form": "wheel", "engine": "vllm", "package": "vllm", "channel": "development",
        "dev": 77, "commits_since_tag": 77, "commit": "a6b593d2", "dirty": False,
        "official_build_possible": True}),
    ("/tmp/x/vllm-0.26.1rc1.dev181+gf5a76426-cp38-abi3-linux_x86_64.whl", {
        "form": "wheel", "commit": "f5a76426", "dev": 181}),
    # setuptools-scm: a clean tag, a dirty tag (no distance), a timestamp.
    ("0.33.0", {"channel": "release", "release": (0, 33, 0), "dev": None, "commit": None}),
    ("0.33.0+d20261101", {"channel": "local-build", "dirty": True, "build_date": "2026-11-01",
                          "commit": None}),
    ("1.2.3.dev4+gabcdef1.d20250102123456", {"build_date": "2025-01-02", "dirty": True,
                                            "commit": "abcdef1"}),
    # CUDA and other variants in the local part.
    ("0.10.1+cu126", {"channel": "release", "cuda": "12.6", "local": "cu126"}),
    ("0.11.0+cu130", {"cuda": "13.0"}),
    ("0.32.0+cpu", {"variant": "cpu"}),
    ("2.8.0+rocm6.2", {"variant": "rocm6.2"}),
    ("1.0+weird.g1234567", {"unknown_local_parts": ("weird",), "commit": "1234567"}),
    # PEP 440 phases and normal forms.
    ("1.0a1", {"pre": ("a", 1), "channel": "pre-release"}),
    ("1.0.0-beta.2", {"pre": ("b", 2), "version": "1.0.0b2"}),
    ("0.4.10.post2", {"post": 2, "channel": "post-release"}),
    ("v0.10.1", {"form": "version", "version": "0.10.1"}),
    ("1!2.0", {"epoch": 1, "release": (2, 0)}),
    # NAME==VERSION; a date-numbered dev build (TensorRT-LLM's nightlies).
    ("vllm==0.33.0", {"form": "requirement", "engine": "vllm", "package": "vllm"}),
    ("pypi:sglang==0.5.2", {"form": "requirement", "engine": "sglang"}),
    ("tensorrt-llm==0.12.0.dev2024073000", {
        "engine": "tensorrt-llm", "dev": 2024073000, "build_date": "2024-07-30",
        "commits_since_tag": None, "channel": "development"}),
    # Image tags and references.
    ("nightly-6f91edf96d3f3272945809c04702380053bff4de", {
        "form": "image-tag", "engine": "vllm", "channel": "nightly", "floating": False,
        "commit": "6f91edf96d3f3272945809c04702380053bff4de",
        "tag_convention": "vllm-nightly-commit"}),
    ("vllm/vllm-openai:nightly-6f91edf96d3f3272945809c04702380053bff4de", {
        "form": "image-reference", "repository": "vllm/vllm-openai", "engine": "vllm",
        "commit": "6f91edf96d3f3272945809c04702380053bff4de"}),
    ("docker.io/vllm/vllm-openai:nightly", {"floating": True, "engine": "vllm",
                                            "repository": "vllm/vllm-openai"}),
    ("vllm/vllm-openai:nightly-aarch64", {"floating": True, "variant": "aarch64"}),
    ("vllm/vllm-openai", {"tag": "latest", "floating": True, "channel": "floating"}),
    ("vllm/vllm-openai:v0.20.0-cu130", {"version": "0.20.0", "cuda": "13.0",
                                        "channel": "release"}),
    ("vllm/vllm-openai:v0.11.0rc2", {"pre": ("rc", 2), "channel": "pre-release"}),
    ("lmsysorg/sglang:v0.4.10.post2-cu128-b200", {
        "engine": "sglang", "post": 2, "cuda": "12.8", "variant": "b200"}),
    ("lmsysorg/sglang:dev", {"floating": True, "channel": "nightly", "engine": "sglang"}),
    ("nvcr.io/nvidia/tensorrt-llm/release:1.2.0rc1", {
        "engine": "tensorrt-llm", "pre": ("rc", 1), "repository":
        "nvcr.io/nvidia/tensorrt-llm/release"}),
    ("nvcr.io/nvidia/tritonserver:25.08-trtllm-python-py3", {
        "channel": "monthly", "build_date": "2025-08", "variant": "trtllm-python-py3",
        "engine": None}),
    ("nightly-dev-20250729-6f91edf9", {"build_date": "2025-07-29", "commit": "6f91edf9",
                                       "variant": "dev"}),
    ("latest", {"form": "image-tag", "channel": "floating", "floating": True}),
    ("localhost:5000/engines/vllm:x1", {"repository": "localhost:5000/engines/vllm",
                                        "tag": "x1", "engine": None}),
    ("vllm/vllm-openai@sha256:" + "ab" * 32, {"channel": "pinned", "tag": None,
                                              "digest": "sha256:" + "ab" * 32}),
    ("vllm/vllm-openai:nightly@sha256:" + "cd" * 32, {"channel": "pinned", "floating": False}),
]


@pytest.mark.parametrize(("text", "expected"), CASES, ids=[c[0][:60] for c in CASES])
def test_read_version(text: str, expected: dict[str, Any]) -> None:
    reading = read_version(text)
    for key, value in expected.items():
        assert getattr(reading, key) == value, key
    assert reading.form in FORMS and reading.channel in CHANNELS
    assert reading.meaning and all(sentence.strip() for sentence in reading.meaning)


def test_a_local_build_says_no_official_image_carries_it() -> None:
    reading = read_version("vllm==0.26.1rc1.dev191+gabc123def.d20260731")
    assert reading.meaning[0].startswith("built on 2026-07-31 from a source checkout")
    assert "no official image or wheel" in reading.meaning[0]
    assert "nightly-<the full 40-hex commit starting abc123def>" in reading.meaning[0]


def test_to_dict_is_stable_json() -> None:
    data = read_version("0.26.1rc1.dev229+g6f91edf96.d20260731").to_dict()
    assert data["pre"] == {"phase": "rc", "number": 1}
    assert data["release"] == [0, 26, 1]
    assert data["build_date"] == "2026-07-31" and data["dirty"] is True
    assert set(data) >= {"input", "form", "channel", "engine", "version", "commit", "meaning"}


@pytest.mark.parametrize(
    "text",
    ["", "   ", "hello world", "???", "foo.whl", "vllm/vllm-openai:bad!tag",
     "nvcr.io/nvidia/x:25.13-py3", "vllm==not-a-version", "Upper/Case:tag"],
)
def test_bad_input_is_a_usage_error_with_a_hint(text: str) -> None:
    with pytest.raises(UsageError) as caught:
        read_version(text)
    assert caught.value.exit_code == 2
    assert caught.value.hint and "nightly-<commit>" in caught.value.hint


def test_a_date_that_is_no_date_is_not_taken_for_one() -> None:
    reading = read_version("1.0+d20251340")
    assert reading.build_date is None and not reading.dirty
    assert reading.unknown_local_parts == ("d20251340",)


@given(
    release=st.lists(st.integers(0, 999), min_size=1, max_size=4),
    pre=st.one_of(st.none(), st.tuples(st.sampled_from(["a", "b", "rc"]), st.integers(0, 99))),
    dev=st.one_of(st.none(), st.integers(0, 5000)),
    commit=st.one_of(st.none(), st.text("0123456789abcdef", min_size=7, max_size=12)),
)
def test_every_pep440_version_reads_back(
    release: list[int], pre: tuple[str, int] | None, dev: int | None, commit: str | None
) -> None:
    text = ".".join(map(str, release))
    if pre:
        text += f"{pre[0]}{pre[1]}"
    if dev is not None:
        text += f".dev{dev}"
    if commit:
        text += f"+g{commit}"
    reading = read_version(text)
    assert reading.version == str(Version(text))
    assert reading.release == Version(text).release
    assert reading.pre == pre and reading.dev == dev and reading.commit == commit
