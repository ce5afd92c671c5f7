"""The store's launches and searches; ``stop`` never signals a pid that was reused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from servewise.errors import UsageError
from servewise.launch.process import process_start_time
from servewise.launch.records import launch_rows, stop_run, store_recorder
from servewise.store import Store


def test_recorder_and_rows(tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as store:
        record = store_recorder(store, lambda text: None)
        record("launch", {"run_id": "launch-20261204-070000-aaaaaa", "outcome": "starting"},
               None)
        record("launch", {"run_id": "launch-20261204-070000-aaaaaa", "outcome": "ready",
                          "argv": ["vllm", "serve", "m"], "time_to_ready_s": 41.5}, None)
        record("search", {"search_id": "search-20261204-080000-bbbbbb", "param":
                          "max-model-len", "status": "done", "best": 65408, "launches": 2,
                          "argv": ["x"]}, None)
        record("launch", {"run_id": "launch-20261204-080001-cccccc", "outcome": "failed"},
               "search-20261204-080000-bbbbbb")
        rows = launch_rows(store, 10)
        assert [row["kind"] for row in rows] == ["search", "launch"]  # attempts not listed
        assert rows[1]["outcome"] == "ready"
        attempts = store.launches(search_id="search-20261204-080000-bbbbbb")
        assert [a["outcome"] for a in attempts] == ["failed"]


def test_stop_refuses_unknown_and_spares_a_reused_pid(tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as store:
        with pytest.raises(UsageError, match="no launch"):
            stop_run(store, "launch-nope")
        me = os.getpid()
        started = process_start_time(me)
        assert started is not None
        # A record whose pid is now this test process, started at another time.
        store.put_launch("launch-x", {"run_id": "launch-x", "outcome": "ready", "pid": me,
                                      "start_time": started - 1, "stopped": None})
        assert stop_run(store, "launch-x")["stopped"] == "gone"  # and we are still alive


def test_a_store_that_cannot_be_written_warns_once(tmp_path: Path) -> None:
    warnings: list[str] = []
    with Store(tmp_path / "s.db") as store:
        record = store_recorder(store, warnings.append)
        store._db.execute("DROP TABLE launches")  # every write now fails
        record("launch", {"run_id": "a"}, None)
        record("launch", {"run_id": "b"}, None)
    assert len(warnings) == 1 and "not recorded" in warnings[0]
