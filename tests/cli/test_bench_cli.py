"""``servewise bench`` and ``servewise runs`` on the command line, against the synthetic server."""

from __future__ import annotations

import json
import shlex
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from servewise.cli import app
from support.sse_server import Behaviour, SseServerHandle, start_sse_server


@pytest.fixture(scope="module")
def server() -> Iterator[SseServerHandle]:
    with start_sse_server(Behaviour(ttft_s=0.01, itl_s=0.002, chunks=[1, 2])) as handle:
        yield handle


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def bench(server: SseServerHandle, *args: str) -> tuple[int, str, str]:
    return run("bench", server.base_url, "--model", "synthetic", *args)


@pytest.mark.parametrize("args", [
    ["--concurrency", "1"],                                           # no workload
    ["--isl", "8", "--concurrency", "1"],                             # --isl without --osl
    ["--isl", "8", "--osl", "2"],                                     # no load
    ["--isl", "8", "--osl", "2", "--concurrency", "1", "--rate", "2"],
    ["--isl", "8", "--osl", "2", "--concurrency", "1,x"],
    ["--isl", "8", "--osl", "2", "--rate", "0"],
    ["--isl", "8", "--osl", "2", "--rate", "2", "--burstiness", "0"],
    ["--isl", "8", "--osl", "2", "--concurrency", "1", "--slo", "ttft"],
    ["--isl", "8", "--osl", "2", "--concurrency", "1", "--slo", "speed:3"],
    ["--isl", "8", "--osl", "2", "--concurrency", "1", "--num-prompts", "2", "--duration", "1"],
    ["--isl", "8", "--osl", "2", "--concurrency", "1", "--endpoint", "embeddings"],
    ["--isl", "8", "--osl", "2", "--concurrency", "1", "--extra-body", "[1]"],
])
def test_bad_usage_exits_2_with_a_hint(server: SseServerHandle, args: list[str]) -> None:
    code, out, _ = bench(server, *args, "--json")
    assert code == 2
    error = json.loads(out)
    assert error["error"] == "usage_error" and error["hint"]


def test_bad_url_and_unknown_model() -> None:
    code, out, _ = run("bench", "localhost:8000", "--model", "m", "--isl", "8", "--osl", "2",
                       "--concurrency", "1", "--json")
    assert code == 2 and "not an HTTP URL" in json.loads(out)["message"]


def test_unknown_model_names_the_served_ones(server: SseServerHandle) -> None:
    code, out, _ = run("bench", server.base_url, "--model", "other", "--isl", "8", "--osl",
                       "2", "--concurrency", "1", "--json")
    assert code == 2 and "synthetic" in json.loads(out)["message"]


def test_json_output_plot_and_stored_run(server: SseServerHandle, tmp_path: Path) -> None:
    output, plot = tmp_path / "run.json", tmp_path / "run.png"
    code, out, err = bench(server, "--isl", "16", "--osl", "6", "--concurrency", "1,2",
                           "--num-prompts", "4", "--warmup", "1", "--gpus", "2",
                           "--slo", "ttft:1000", "--json", "--output", str(output),
                           "--plot", str(plot))
    assert code == 0, err
    document = json.loads(out)
    assert json.loads(output.read_text()) == document
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [e["workload"]["max_concurrency"] for e in document["results"]] == [1, 2]
    first = document["results"][0]
    assert first["workload"] | {"length_distribution": None} == {
        "dataset": "random", "isl": 16, "osl": 6, "max_concurrency": 1, "num_prompts": 4,
        "length_distribution": None}
    for key in ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"):
        assert set(first[key]) == {"mean", "p50", "p90", "p99"}
    assert first["gpus"] == 2 and first["tokens_per_sec_per_gpu"] > 0
    assert set(document["formulas"]) >= {"ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"}

    code, out, _ = run("runs", "--json")
    assert code == 0
    (listed,) = json.loads(out)
    assert listed["run_id"] == document["run_id"] and listed["levels"] == 2
    code, out, _ = run("runs", document["run_id"], "--json", "--requests")
    shown = json.loads(out)
    assert shown["results"] == document["results"]
    assert len(shown["requests"]) == 2 * (4 + 1)  # measured and warm-up, per level
    assert {r["phase"] for r in shown["requests"]} == {"warmup", "measure"}
    again = tmp_path / "again.svg"
    code, _, _ = run("runs", document["run_id"], "--plot", str(again))
    assert code == 0 and again.read_text().lstrip().startswith("<?xml")
    code, out, _ = run("runs")
    assert code == 0 and document["run_id"] in out
    code, out, _ = run("runs", "bench-nope", "--json")
    assert code == 2 and json.loads(out)["error"] == "usage_error"


def test_table_on_stdout_and_failures_exit_1(server: SseServerHandle, tmp_path: Path) -> None:
    dataset = tmp_path / "d.jsonl"
    dataset.write_text('{"prompt": "fine", "max_tokens": 3}\n'
                       '{"prompt": "[[sse {\\"status\\": 503}]]", "max_tokens": 3}\n')
    code, out, err = bench(server, "--dataset", str(dataset), "--rate", "20",
                           "--num-prompts", "2", "--warmup", "0", "--no-store")
    assert code == 1
    assert "TTFT ms p50/p99" in out and "1/1" in out
    assert "1 request(s) failed" in err
    code, out, _ = run("runs", "--json")
    assert json.loads(out) == []  # --no-store kept nothing


BENCH_DOC = (Path(__file__).resolve().parents[2] / "docs" / "bench.md").read_text()


def test_bench_doc_names_every_option() -> None:
    group = get_command(app)
    for command in ("bench", "runs"):
        for param in group.commands[command].params:  # type: ignore[attr-defined]
            for option in (*param.opts, *param.secondary_opts):
                if option.startswith("--") and option != "--help":
                    assert f"`{option}" in BENCH_DOC or f"/{option}`" in BENCH_DOC, option


def _doc_examples() -> list[list[str]]:
    section = BENCH_DOC.split("## Examples", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    return [shlex.split(line)[1:] for line in section.splitlines()
            if line.startswith(".venv/bin/servewise")]


@pytest.mark.parametrize("argv", _doc_examples())
def test_bench_doc_examples_run(server: SseServerHandle, argv: list[str],
                                tmp_path: Path) -> None:
    argv = [a.replace("http://127.0.0.1:8100", server.base_url).replace("/tmp/", f"{tmp_path}/")
            for a in argv]
    code, out, err = run(*argv)
    assert code == 0, err
    assert out.strip()


def test_unwritable_output_and_plot_fail_before_the_first_request(
        server: SseServerHandle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    server.reset()
    workload = ("--isl", "8", "--osl", "2", "--concurrency", "1", "--num-prompts", "2",
                "--json")
    code, out, _ = bench(server, *workload, "--output", str(tmp_path / "no" / "run.json"))
    assert code == 2 and "does not exist" in json.loads(out)["message"]
    code, out, _ = bench(server, *workload, "--output", str(tmp_path))
    assert code == 2 and "is a folder" in json.loads(out)["message"]
    code, out, _ = bench(server, *workload, "--plot", str(tmp_path / "p.gif"))
    assert code == 2 and ".png" in json.loads(out)["message"]
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if the extra were missing
    code, out, _ = bench(server, *workload, "--plot", str(tmp_path / "p.png"))
    assert code == 2 and "matplotlib" in json.loads(out)["message"]
    assert [r for r in server.records()] == []  # no request was sent


def test_a_finished_run_is_stored_whatever_fails_after(
        server: SseServerHandle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from servewise.bench import plot as plot_module
    from servewise.errors import SourceError

    def broken(*_: object) -> None:
        raise SourceError("the disk filled up while drawing", hint="free some space")

    monkeypatch.setattr(plot_module, "write_plot", broken)
    target = tmp_path / "run.json"
    code, out, err = bench(server, "--isl", "8", "--osl", "2", "--concurrency", "1",
                           "--num-prompts", "2", "--output", str(target), "--plot",
                           str(tmp_path / "p.png"), "--json")
    assert code == 1 and "the run is kept" in err
    document = json.loads(out)
    assert json.loads(target.read_text())["run_id"] == document["run_id"]
    code, out, _ = run("runs", document["run_id"], "--json")
    assert code == 0 and json.loads(out)["run_id"] == document["run_id"]


def test_a_server_that_accepts_and_never_answers_holds_the_deadline() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)  # the kernel accepts; nothing ever reads or answers
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        for flag in ("--read-timeout", "--timeout"):
            begin = time.monotonic()
            code, out, err = run("bench", url, "--model", "m", "--isl", "8", "--osl", "2",
                                 "--concurrency", "1", flag, "0.5", "--json")
            assert time.monotonic() - begin < 10  # not the 60 s it once waited regardless
            assert code != 0 and json.loads(out)["error"] == "source_error"
            assert "waiting for" in err and "/v1/models" in err
