"""The command line over images and series: tags, bisect, gate and inspect on an image."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from servewise.cli import app
from support.images import SITE, Entry, Image, build_tar, push_image, wheel_entries
from support.paths import BAD_NIGHTLY, GOOD_NIGHTLY
from support.registry import Registry

pytestmark = pytest.mark.registry
REPO = "cli/vllm"


@pytest.fixture(scope="module")
def series(registry: Registry) -> str:
    base = build_tar([Entry("etc/os-release", b"ID=cli\n")])
    for day in range(5):
        wheel = GOOD_NIGHTLY if day < 3 else BAD_NIGHTLY
        layer = build_tar([*wheel_entries(wheel), Entry(f"{SITE}/vllm/_b.py", bytes([day]))])
        push_image(registry, REPO, f"nightly-{day}", Image([base, layer],
                                                           created=f"2026-07-2{day}T00:00:00Z"))
    return f"{registry.host}/{REPO}"


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout


def test_tags_json(series: str) -> None:
    code, stdout = run("tags", series, "--match", "nightly-[0-3]", "--json")
    assert code == 0
    data = json.loads(stdout)
    assert [t["tag"] for t in data["tags"]] == [f"nightly-{d}" for d in range(4)]
    assert data["tags"][0]["created"] == "2026-07-20T00:00:00Z"


def test_bisect_json_and_text(series: str) -> None:
    code, stdout = run("bisect", series, "--gpu", "rtx-pro-6000", "--require", "deep_gemm",
                       "--json")
    assert code == 0
    data = json.loads(stdout)
    assert data["last_good"]["label"] == "nightly-2"
    assert data["first_bad"]["label"] == "nightly-3"
    assert data["changes"][0]["library"] == "deep_gemm"
    assert "sm_120" in data["changes"][0]["lost"]["jit_dispatch"]
    assert data["builds_judged"] <= data["max_builds_judged"]
    code, text = run("bisect", series, "--jit-arch", "sm_120", "--good", "nightly-0",
                     "--bad", "nightly-4")
    assert code == 0 and "first bad nightly-3" in text and "deep_gemm" in text


def test_bisect_without_a_change_exits_1(series: str) -> None:
    code, stdout = run("bisect", series, "--gpu", "h200", "--good", "nightly-0", "--bad",
                       "nightly-2", "--json")
    assert code == 1 and json.loads(stdout)["found"] is False


def test_gate_on_an_image(series: str) -> None:
    code, stdout = run("gate", f"{series}:nightly-4", "--gpu", "rtx-pro-6000", "--model",
                       "deepseek-v4", "--json")
    assert code == 1
    data = json.loads(stdout)
    assert data["source_kind"] == "image" and data["metadata"]["created"].startswith("2026-07-24")
    assert data["engine"]["version"] == "0.26.1rc1.dev181+gf5a76426"
    code, text = run("inspect", f"{series}:nightly-0")
    assert code == 0 and "created 2026-07-20" in text and "engine vllm" in text


def test_diff_of_two_image_tags(series: str) -> None:
    code, stdout = run("diff", f"{series}:nightly-2", f"{series}:nightly-3",
                       "--platform", "linux/amd64", "--json")
    assert code == 1
    data = json.loads(stdout)
    assert data["summary"]["archs_lost"] == ["sm_120", "sm_120f"]
    assert data["b"]["engine"]["commit"] == "f5a76426"


@pytest.mark.parametrize(("args", "message"), [
    (["bisect", "cli/none", "--jit-arch", "sm_120"], "error"),
    (["tags", "127.0.0.1:1/nothing"], "cannot reach"),
    (["bisect", "a.whl", "b.whl", "--match", "x", "--jit-arch", "sm_120"], "--match"),
    (["gate", "127.0.0.1:1/x:y", "--gpu", "h200", "--platform", "linux"], "platform"),
    (["diff", "127.0.0.1:1/x:y", "127.0.0.1:1/x:z", "--platform", "linux"], "platform"),
])
def test_bad_input_exits_2(args: list[str], message: str) -> None:
    result = CliRunner().invoke(app, [*args, "--json"])
    assert result.exit_code == 2, result.output
    assert message in json.loads(result.stdout)["message"] or message == "error"
