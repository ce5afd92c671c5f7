"""Tests for the local SQLite store: round trips, versions, WAL, migrations, locations."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from servewise.errors import ServewiseError, StoreError
from servewise.store import _MIGRATIONS, Store, default_path


def test_round_trip(tmp_path: Path) -> None:
    data = {"sass": ["sm_90a"], "nested": {"n": 1, "f": 1.5, "none": None}, "ok": True}
    with Store(tmp_path / "s.db") as store:
        assert store.get_scans(["k1"], scanner=3) == {}
        store.put_scan("k1", 3, data)
        store.put_scan("k2", 3, {"x": 2})
        assert store.get_scans(["k1", "k2", "missing"], scanner=3) == {"k1": data, "k2": {"x": 2}}
        store.put_scan("k1", 3, {"replaced": True})
        assert store.get_scans(["k1"], scanner=3) == {"k1": {"replaced": True}}
        assert store.get_scans([], scanner=3) == {}


def test_many_keys_are_batched(tmp_path: Path) -> None:
    keys = [f"zip:{i:08x}:{i}" for i in range(1234)]
    with Store(tmp_path / "s.db") as store:
        for key in keys[::2]:
            store.put_scan(key, 1, {"k": key})
        found = store.get_scans(keys, scanner=1)
    assert found == {key: {"k": key} for key in keys[::2]}


def test_scanner_version_mismatch_returns_nothing(tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as store:
        store.put_scan("k", 1, {"old": True})
        assert store.get_scans(["k"], scanner=2) == {}
        store.put_scan("k", 2, {"new": True})  # the newer scanner replaces the row
        assert store.get_scans(["k"], scanner=2) == {"k": {"new": True}}
        assert store.get_scans(["k"], scanner=1) == {}


def test_reopen_keeps_data_in_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "s.db"
    with Store(path) as store:
        store.put_scan("k", 1, {"v": [1, 2]})
        (mode,) = store._db.execute("PRAGMA journal_mode").fetchone()
        assert mode == "wal"
        # Another connection sees the committed row before this one closes.
        other = sqlite3.connect(path)
        try:
            assert other.execute("SELECT key FROM scan_cache").fetchall() == [("k",)]
        finally:
            other.close()
    with Store(path) as again:
        assert again.get_scans(["k"], scanner=1) == {"k": {"v": [1, 2]}}
        (version,) = again._db.execute("PRAGMA user_version").fetchone()
        assert version == len(_MIGRATIONS)


def test_newer_schema_is_refused_with_a_hint(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    Store(path).close()
    db = sqlite3.connect(path)
    try:
        db.execute("PRAGMA user_version = 99")
        db.commit()
    finally:
        db.close()
    with pytest.raises(StoreError) as info:
        Store(path)
    assert "newer servewise" in info.value.message and "99" in info.value.message
    assert info.value.hint and "SERVEWISE_CACHE_DIR" in info.value.hint
    assert info.value.to_dict()["path"] == str(path)


def test_cache_dir_is_a_regular_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("not a folder")
    monkeypatch.setenv("SERVEWISE_CACHE_DIR", str(blocker))
    with pytest.raises(StoreError) as info:
        Store()
    assert info.value.hint and str(blocker) in info.value.message
    assert isinstance(info.value, ServewiseError)


def test_store_path_is_a_folder(tmp_path: Path) -> None:
    (tmp_path / "s.db").mkdir()
    with pytest.raises(StoreError):
        Store(tmp_path / "s.db")


def test_garbage_file_is_a_store_error(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    path.write_bytes(b"this is not an sqlite database at all" * 100)
    with pytest.raises(StoreError) as info:
        Store(path)
    assert info.value.hint


def test_corrupt_row_is_a_store_error(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with Store(path) as store:
        store._db.execute(
            "INSERT INTO scan_cache VALUES ('bad', 1, '{not json', 0)"
        )
        with pytest.raises(StoreError) as info:
            store.get_scans(["bad"], scanner=1)
        assert info.value.hint


def test_default_path_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERVEWISE_CACHE_DIR", str(tmp_path / "explicit"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_path() == tmp_path / "explicit" / "servewise.db"
    monkeypatch.delenv("SERVEWISE_CACHE_DIR")
    assert default_path() == tmp_path / "xdg" / "servewise" / "servewise.db"
    monkeypatch.setenv("SERVEWISE_CACHE_DIR", "")
    monkeypatch.setenv("XDG_CACHE_HOME", "")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_path() == tmp_path / "home" / ".cache" / "servewise" / "servewise.db"


def test_store_uses_default_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SERVEWISE_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    with Store() as store:
        store.put_scan("k", 1, {})
        assert store.path == tmp_path / "xdg" / "servewise" / "servewise.db"
    assert (tmp_path / "xdg" / "servewise" / "servewise.db").is_file()


def test_hub_metadata_round_trip_and_upgrade(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with sqlite3.connect(path) as db:  # a store written before the Hub table existed
        db.execute("CREATE TABLE scan_cache (key TEXT PRIMARY KEY, scanner INTEGER NOT NULL, "
                   "data TEXT NOT NULL, created_at REAL NOT NULL)")
        db.execute("INSERT INTO scan_cache VALUES ('k', 1, '{\"kept\": true}', 0)")
        db.execute("PRAGMA user_version = 1")
    with Store(path) as store:
        assert store.get_scans(["k"], 1) == {"k": {"kept": True}}
        assert store.get_hub("hub/org/m", "main", 1) is None
        store.put_hub("hub/org/m", "main", "abc", 1, {"files": 2})
        store.put_hub("hub/org/m", "abc", "abc", 1, {"files": 2})
        assert store.get_hub("hub/org/m", "main", 1) == {"files": 2}
        assert store.get_hub("hub/org/m", "main", 2) is None
        (version,) = store._db.execute("PRAGMA user_version").fetchone()
        assert version == len(_MIGRATIONS)


def test_a_store_of_the_release_before_the_hub_table_gains_it(tmp_path: Path) -> None:
    """A store at schema 3 (scan cache and bench tables, no Hub table) keeps its rows."""
    path = tmp_path / "s.db"
    with Store(path) as store:
        store.put_scan("k", 1, {"kept": True})
    with sqlite3.connect(path) as db:  # back to what that release left
        db.execute("DROP TABLE hub_metadata")
        db.execute("PRAGMA user_version = 3")
    with Store(path) as store:
        assert store.get_scans(["k"], 1) == {"k": {"kept": True}}
        store.put_hub("hub/org/m", "main", "abc", 1, {"files": 2})
        assert store.get_hub("hub/org/m", "main", 1) == {"files": 2}


def test_two_openers_of_a_new_store_migrate_it_once(tmp_path: Path) -> None:
    """A second process that read the old schema version waits for the first, then re-reads."""
    import threading

    from servewise import store as store_module

    path = tmp_path / "s.db"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA journal_mode=WAL")
    holder.execute("BEGIN IMMEDIATE")  # the first opener, half-way through migrating
    opened: list[object] = []

    def second_opener() -> None:
        try:
            with Store(path) as second:
                second.put_scan("k", 1, {"ok": True})
                opened.append(second.get_scans(["k"], 1))
        except BaseException as error:  # reported below, in the test's thread
            opened.append(error)

    thread = threading.Thread(target=second_opener)
    thread.start()
    time.sleep(0.3)  # it has read user_version 0 and now waits for the write lock
    for number, step in enumerate(store_module._MIGRATIONS, start=1):
        holder.execute(step)
        holder.execute(f"PRAGMA user_version = {number}")
    holder.execute("COMMIT")
    thread.join(timeout=30)
    holder.close()
    assert opened == [{"k": {"ok": True}}]


def test_bench_runs_round_trip(tmp_path: Path) -> None:
    document = {"run_id": "bench-1", "url": "http://h/v1/completions", "model": "m",
                "results": [{"workload": {"max_concurrency": 1}}]}
    rows = [(0, "warmup", 0, {"seq": 0, "phase": "warmup"}),
            (0, "measure", 1, {"seq": 1, "phase": "measure"}),
            (0, "measure", 0, {"seq": 0, "phase": "measure"})]
    with Store(tmp_path / "s.db") as store:
        store.put_bench_run("bench-1", document, rows)
        store.put_bench_run("bench-2", {**document, "run_id": "bench-2"}, [])
        assert [d["run_id"] for d in store.bench_runs()] == ["bench-2", "bench-1"]
        assert store.bench_runs(limit=1)[0]["run_id"] == "bench-2"
        assert store.bench_run("bench-1") == document
        assert store.bench_run("nope") is None
        found = store.bench_requests("bench-1")
        assert [(r["phase"], r["seq"]) for r in found] == [("warmup", 0), ("measure", 0),
                                                           ("measure", 1)]
        assert all(r["level"] == 0 for r in found)
        with pytest.raises(StoreError):  # the same run id twice; nothing half-written
            store.put_bench_run("bench-1", document, rows)
        assert len(store.bench_requests("bench-1")) == 3


def test_scan_keys_and_data_keep_no_url_credentials(tmp_path: Path) -> None:
    key = "https://alice:pw-secret@index.example/vllm-1.0.whl#sha"
    with Store(tmp_path / "s.db") as store:
        store.put_scan(key, 1, {"metadata": {"url": key}})
        assert store.get_scans([key], 1) == {
            key: {"metadata": {"url": "https://alice:***@index.example/vllm-1.0.whl#sha"}}}
    assert b"pw-secret" not in (tmp_path / "s.db").read_bytes()
