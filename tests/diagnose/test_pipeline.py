"""Reading on a second core changes speed, not the diagnosis (``servewise.diagnose.pipeline``)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from servewise.cli import app
from servewise.diagnose import new_scanner, pipeline
from servewise.diagnose.pipeline import feed_in_parallel, feed_log, parallel_possible
from servewise.diagnose.result import Diagnosis
from servewise.errors import LogInputError
from support.diagnose import LOG_FIXTURES, RULE_FIXTURES, SGLANG_SAMPLE

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the pipeline forks (Linux)")

LOGS = sorted(RULE_FIXTURES.glob("*/*.log")) + sorted(LOG_FIXTURES.glob("*.log")) + [
    SGLANG_SAMPLE]


def _pieces(data: bytes, size: int) -> Iterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start:start + size]


def _both(data: bytes, chunk: int) -> tuple[Diagnosis, Diagnosis, tuple[int, int], tuple[int, int]]:
    one = new_scanner()
    for piece in _pieces(data, chunk):
        one.feed(piece)
    two = new_scanner()
    feed_in_parallel(two, _pieces(data, chunk))
    return one.finish(), two.finish(), (one.lines, one.parsed_lines), (two.lines,
                                                                        two.parsed_lines)


@pytest.mark.parametrize("path", LOGS[::7], ids=lambda p: f"{p.parent.name}/{p.name}")
def test_each_log_gets_the_same_diagnosis(path: Path) -> None:
    seq, par, seq_counts, par_counts = _both(path.read_bytes(), 997)
    assert par.to_dict() == seq.to_dict()
    assert par_counts == seq_counts


def test_a_long_log_of_many_runs_and_failures_gets_the_same_diagnosis() -> None:
    """Every fixture log one after another (over 1 MiB, so read once, in order), in chunks
    that cut lines and tracebacks: the same root cause, findings, evidence lines and counts."""
    whole = b"".join(path.read_bytes().rstrip(b"\n") + b"\n" for path in LOGS)
    data = whole * (1 + 2**20 // len(whole))
    for chunk in (4096, 2**20):
        seq, par, seq_counts, par_counts = _both(data, chunk)
        assert par.to_dict() == seq.to_dict()
        assert par_counts == seq_counts
        assert seq.findings  # the log has failures to agree on


def test_a_binary_log_is_refused_as_in_one_process() -> None:
    scanner = new_scanner()
    with pytest.raises(LogInputError, match="NUL bytes") as refused:
        feed_in_parallel(scanner, iter([b"\x00\x01binary"]))
    assert refused.value.hint and refused.value.fields["found"] == "binary data"


def test_only_a_large_regular_file_with_a_core_to_spare_is_read_on_two_cores(
        monkeypatch: pytest.MonkeyPatch) -> None:
    spare = [2.0]
    monkeypatch.setattr(pipeline, "_spare_cores", lambda: spare[0])
    assert not parallel_possible(None)  # standard input, a pipe
    assert not parallel_possible(pipeline.PARALLEL_BYTES - 1)
    assert parallel_possible(pipeline.PARALLEL_BYTES)
    spare[0] = 0.0  # one CPU, or every other one busy
    assert not parallel_possible(pipeline.PARALLEL_BYTES)


def test_spare_cores_are_the_cpus_less_the_other_running_processes(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import builtins

    real_open = builtins.open
    loadavg = tmp_path / "loadavg"

    def fake_open(path: object, *args: object, **kwargs: object) -> object:
        return real_open(loadavg if path == "/proc/loadavg" else path, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", fake_open)
    monkeypatch.setattr(pipeline.os, "sched_getaffinity", lambda _: {0, 1, 2, 3})
    loadavg.write_text("3.10 2.50 1.00 2/812 40000\n")  # this process and one other
    assert pipeline._spare_cores() == 3.0
    loadavg.write_text("0.10 0.20 0.30 5/812 40000\n")
    assert pipeline._spare_cores() == 0.0
    monkeypatch.setattr(pipeline.os, "sched_getaffinity", lambda _: {0})
    loadavg.write_text("0.00 0.00 0.00 1/812 40000\n")
    assert pipeline._spare_cores() == 0.0  # one CPU
    loadavg.write_text("garbled\n")
    assert pipeline._spare_cores() == 0.0


def test_feed_log_below_the_threshold_reads_in_this_process(monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    def refuse(*_: object) -> None:
        raise AssertionError("no second process for a small log")

    monkeypatch.setattr(pipeline, "feed_in_parallel", refuse)
    scanner = new_scanner()
    feed_log(scanner, iter([SGLANG_SAMPLE.read_bytes()]), SGLANG_SAMPLE.stat().st_size)
    assert scanner.finish().findings


def test_the_command_reads_a_large_file_on_two_cores(monkeypatch: pytest.MonkeyPatch,
                                                     tmp_path: Path) -> None:
    """`servewise diagnose FILE --json` answers the same with the threshold at one byte."""
    log = tmp_path / "engine.log"
    log.write_bytes(SGLANG_SAMPLE.read_bytes())
    calls: list[int] = []
    real = pipeline.feed_in_parallel

    def counted(scanner: object, chunks: object) -> None:
        calls.append(1)
        real(scanner, chunks)  # type: ignore[arg-type]

    first = CliRunner().invoke(app, ["diagnose", str(log), "--json"])
    monkeypatch.setattr(pipeline, "PARALLEL_BYTES", 1)
    monkeypatch.setattr(pipeline, "feed_in_parallel", counted)
    monkeypatch.setattr(pipeline, "_spare_cores", lambda: 2.0)
    second = CliRunner().invoke(app, ["diagnose", str(log), "--json"])
    assert calls == [1]
    assert second.exit_code == first.exit_code == 1
    assert json.loads(second.stdout) == json.loads(first.stdout)
