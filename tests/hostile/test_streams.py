"""Hostile streams: a server that streams forever, reports absurd token counts or sends one
huge event, and an engine that writes a 100 MB line. Each within the issue's limits."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from servewise.bench.metrics import per_token_gaps, weighted_distribution_ms
from servewise.errors import FormatError
from servewise.formats.openai_stream import MAX_TOKENS, parse_chunk
from servewise.formats.sse import SseDecoder
from servewise.launch.run import EngineRun, LaunchSpec
from support.hostile import bounded, within_limits
from support.hostile_server import serve

TESTS = str(Path(__file__).resolve().parents[1])

SEND_ONE = """
    import asyncio, itertools, json
    from servewise.bench.client import ClientOptions, Outgoing, StreamClient
    from support.hostile_server import serve

    def events():
        {events}

    async def go(url):
        async with StreamClient(ClientOptions(url + "/v1/completions")) as client:
            body = b'{{"model":"m","prompt":"x","max_tokens":16,"stream":true}}'
            return await client.send(Outgoing(0, "measure", "r0", body, 16, None))

    with serve(events) as url:
        record = asyncio.run(go(url))
    error = record.error
    print(json.dumps({{"kind": error.kind if error else None,
                      "message": error.message if error else None,
                      "output_tokens": record.output_tokens}}))
"""


def send_one(events: str) -> tuple[dict[str, object], float, float]:
    """One bench request against a server whose answer ``events`` (Python lines) yields."""
    outcome = bounded(SEND_ONE.format(events=events), env={"PYTHONPATH": TESTS})
    within_limits(outcome)
    return json.loads(outcome.stdout.strip().splitlines()[-1]), outcome.seconds, outcome.rss_mb


def test_a_server_that_streams_forever_is_stopped() -> None:
    # No --timeout, no silence: the server ignores max_tokens and never ends the answer.
    found, _, _ = send_one(
        'chunk = b\'data: {"choices":[{"text":"xxxxxxxx"}]}\\n\\n\'\n'
        '        return itertools.repeat(chunk * 64)')
    assert found["kind"] == "oversized"
    assert "max_tokens" in str(found["message"])


@pytest.mark.parametrize("count", [300_000_000, -5])
def test_an_absurd_token_count_fails_the_request_not_the_client(count: int) -> None:
    found, _, _ = send_one(
        f'yield b\'data: {{"choices":[{{"text":"a"}}],"usage":{{"completion_tokens":{count}}}}}'
        '\\n\\n\'\n        yield b"data: [DONE]\\n\\n"')
    assert found["kind"] == "malformed"
    assert f"usage.completion_tokens = {count}" in str(found["message"])


def test_the_largest_accepted_count_costs_one_sample() -> None:
    # A server may report up to MAX_TOKENS in one chunk: one (gap, count) pair, not 10^8.
    gaps = per_token_gaps([0.0, 0.5, 2000.5], [1, 3, MAX_TOKENS])
    assert len(gaps) == 2 and gaps[1][1] == MAX_TOKENS
    summary = weighted_distribution_ms(gaps)
    assert summary is not None and summary["p50"] == pytest.approx(0.02)


def test_usage_figures_are_range_checked() -> None:
    with pytest.raises(FormatError, match="from 0 to"):
        parse_chunk('{"choices":[],"usage":{"prompt_tokens":-1}}')
    assert parse_chunk('{"choices":[],"usage":{"completion_tokens":7}}').completion_tokens == 7


def test_a_100_mb_event_is_refused_in_linear_time_and_bounded_memory() -> None:
    outcome = bounded("""
        from servewise.errors import FormatError
        from servewise.formats.sse import SseDecoder
        decoder = SseDecoder()
        piece = b"x" * 65536
        decoder.feed(b"data: ")
        try:
            for _ in range(1600):  # 100 MiB of one line, as the network delivers it
                decoder.feed(piece)
        except FormatError as error:
            print(error.expected)
    """)
    within_limits(outcome)
    assert "at most 16777216 bytes" in outcome.stdout


def test_a_large_event_under_the_limit_decodes_in_linear_time() -> None:
    decoder = SseDecoder()
    piece = b"y" * 4096
    begin = time.monotonic()
    decoder.feed(b"data: ")
    for _ in range(3000):  # 12 MB in 4 kB reads: quadratic joining would take minutes
        assert decoder.feed(piece) == []
    (event,) = decoder.feed(b"\n\n")
    assert len(event.data) == 3000 * 4096 and time.monotonic() - begin < 5


ENGINE_100MB = (
    "import sys\n"
    "piece = b'z' * (1 << 20)\n"
    "out = sys.stdout.buffer\n"
    "out.write(b'\\x1b]0;pwned\\x07 --api-key sk-hostilesecret12345678 INFO start\\n')\n"
    "for _ in range(100):\n"
    "    out.write(piece)\n"
    "out.write(b'\\nINFO done\\n')\n"
    "out.flush()\n")


@pytest.mark.hostile_heavy
def test_a_100_mb_engine_line_is_pumped_in_linear_time(tmp_path: Path) -> None:
    script = tmp_path / "engine.py"
    script.write_text(ENGINE_100MB)
    log = tmp_path / "run.log"
    outcome = bounded(f"""
        import json
        from pathlib import Path
        from servewise.launch.run import EngineRun, LaunchSpec
        lines = []
        spec = LaunchSpec(argv=({sys.executable!r}, {str(script)!r}), engine=None, port=1,
                          log_path=Path({str(log)!r}), timeout_s=60, grace_s=1)
        with EngineRun(spec, on_line=lambda line: lines.append(len(line))) as run:
            result = run.wait_ready()
        print(json.dumps({{"outcome": result.outcome, "lines": len(lines)}}))
    """, timeout=120)
    within_limits(outcome)
    assert '"outcome": "failed"' in outcome.stdout  # it exited before it was ready
    assert log.stat().st_size > 100 * 2**20


def test_engine_output_reaches_the_terminal_and_log_without_escapes_or_secrets(
        tmp_path: Path) -> None:
    script = tmp_path / "engine.py"
    script.write_text(ENGINE_100MB.replace("range(100)", "range(0)"))
    log = tmp_path / "run.log"
    lines: list[str] = []
    spec = LaunchSpec(argv=(sys.executable, str(script), "--api-key", "sk-argvsecret987654321"),
                      engine=None, port=1, log_path=log, timeout_s=30, grace_s=1)
    with EngineRun(spec, on_line=lines.append) as run:
        result = run.wait_ready()
    assert result.outcome == "failed"
    text = log.read_text()
    assert "sk-hostilesecret12345678" not in text and "sk-argvsecret987654321" not in text
    assert "--api-key ***" in text
    assert lines and all("\x1b" not in line and "\x07" not in line for line in lines)
    assert all("hostilesecret" not in line for line in lines)


def _short_answer() -> Iterator[bytes]:
    yield b'data: {"choices":[{"text":"a","finish_reason":null}]}\n\n'
    yield (b'data: {"choices":[{"text":"b","finish_reason":"length"}],'
           b'"usage":{"completion_tokens":2,"prompt_tokens":8}}\n\n')
    yield b"data: [DONE]\n\n"


def test_a_finished_run_is_never_lost_to_an_unwritable_output(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # /dev/full passes the check before the run (it exists and is writable) and fails at
    # the end: with --no-store the run must still be somewhere, and the message must say where.
    from servewise.cli import run

    with serve(_short_answer) as url:
        code = run(["bench", url, "--model", "\x1b]0;pwned\x07m", "--isl", "8", "--osl", "2",
                    "--num-prompts", "2", "--concurrency", "1", "--no-store",
                    "--output", "/dev/full"])
    captured = capsys.readouterr()
    err = captured.err
    assert code == 1 and "the run is kept" not in err
    saved = list((tmp_path / "cache" / "runs").glob("bench-*.json"))
    assert len(saved) == 1 and f"saved to {saved[0]}" in err
    assert json.loads(saved[0].read_text())["results"][0]["completed"] == 2
    assert "\x1b" not in err + captured.out and "\x07" not in err + captured.out
    assert "m at http" in captured.out  # the model id is shown, without its escapes
