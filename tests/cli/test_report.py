"""``servewise report``: one self-contained page with the plots embedded.

The launch is :func:`support.launch_docs.llama_launch` stored under the port of a synthetic
SSE server, which ``servewise bench`` really measures, so the report finds the benchmark by
itself and draws its plot.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from servewise.cli import run
from servewise.store import Store
from support.launch_docs import CHECK_ARGS, llama_launch
from support.sse_server import Behaviour, SseServerHandle, start_sse_server

RUN_ID = "launch-20261207-040000-abcdef"


@pytest.fixture(scope="module")
def server() -> Iterator[SseServerHandle]:
    with start_sse_server(Behaviour(ttft_s=0.01, itl_s=0.002)) as handle:
        yield handle


@pytest.fixture
def stored(server: SseServerHandle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
           capsys: pytest.CaptureFixture[str]) -> str:
    monkeypatch.setenv("SERVEWISE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("SERVEWISE_DATA_DIR", str(tmp_path / "data"))
    assert run(CHECK_ARGS) == 0
    port = int(server.base_url.rsplit(":", 1)[1].split("/")[0])
    launch = llama_launch(json.loads(capsys.readouterr().out), RUN_ID, port)
    with Store() as store:
        store.put_launch(RUN_ID, launch)
    assert run(["bench", server.base_url, "--model", "synthetic", "--isl", "8", "--osl", "4",
                "--concurrency", "1,2", "--num-prompts", "4", "--gpus", "1", "--json"]) == 0
    bench = json.loads(capsys.readouterr().out)
    return str(bench["run_id"])


def _svgs(page: str) -> list[str]:
    return [base64.b64decode(data).decode() for data in
            re.findall(r"\(data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)\)", page)]


def test_markdown_has_the_whole_trail_with_plots_embedded(
        stored: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["recipe", "save", RUN_ID, "--gpu", "h100:1", "--bench", stored]) == 0
    capsys.readouterr()
    assert run(["report", RUN_ID]) == 0
    page = capsys.readouterr().out
    for heading in ("# servewise report: " + RUN_ID, "## Check", "## Plan",
                    "## Predicted against observed", "## Benchmarks", "## Recipe"):
        assert heading in page
    # the planner's figure (it moves with the planner) beside the engine's own, within 1 %
    assert re.search(r"\| KV cache tokens \| tokens \| 95\d,\d{3} \| 952,032 \| [+-]0\.\d % \|",
                     page), page[:2000]
    assert f"### {stored}" in page
    assert "Saved as `user/vllm/llama-3.1-8b-instruct/h100-sxm/1gpu` (verified)" in page
    svgs = _svgs(page)
    assert len(svgs) == 2 and all("<svg" in svg for svg in svgs)
    assert "latency against throughput" in svgs[1]


def test_html_to_a_file_and_json(stored: str, tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "report.html"
    assert run(["report", RUN_ID, "--format", "html", "--output", str(page)]) == 0
    text = page.read_text()
    assert text.startswith("<!doctype html>") and text.count("<svg") == 2
    assert "<td>KV cache tokens</td>" in text and "data:image" not in text
    capsys.readouterr()
    assert run(["report", RUN_ID, "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["plots"] == sorted(["evidence", stored])
    assert document["trail"]["launch"]["run_id"] == RUN_ID
    assert document["page"].startswith("# servewise report")


def test_unknown_run_and_format(stored: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["report", "launch-none", "--json"]) == 2
    assert "no launch or search" in json.loads(capsys.readouterr().out)["message"]
    assert run(["report", RUN_ID, "--format", "pdf", "--json"]) == 2
    capsys.readouterr()
