"""``sweep --grace``: the seconds between SIGTERM and SIGKILL reach every engine's stop."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import servewise.sweep
from servewise.cli import run
from servewise.launch.process import GRACE_SECONDS

ARGV = ["sweep", "--config", "a=engine --port {port}", "--isl", "8", "--osl", "8",
        "--concurrency", "1", "--json"]


def _options(monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> Any:
    seen: list[Any] = []

    def fake_sweep(plan: Any, state: Any, options: Any, sink: Any) -> None:
        seen.append(options)

    monkeypatch.setattr(servewise.sweep, "run_sweep", fake_sweep)
    run(argv)
    (options,) = seen
    return options


def test_grace_reaches_the_sweep(store_dir: Path, tmp_path: Path,
                                 monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    state = ["--state", str(tmp_path / "state.json")]
    assert _options(monkeypatch, [*ARGV, *state, "--grace", "0.5"]).grace_s == 0.5
    assert _options(monkeypatch, [*ARGV, *state, "--fresh"]).grace_s == GRACE_SECONDS == 15.0
    capsys.readouterr()
