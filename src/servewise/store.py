"""The local store: one SQLite database (standard library) that operations may use.

It lives in ``$SERVEWISE_CACHE_DIR`` (default ``$XDG_CACHE_HOME/servewise``, else
``~/.cache/servewise``) as ``servewise.db``, in WAL mode so a crash loses nothing
committed. It holds scan results keyed by content identity and Hub model metadata keyed by
repository and revision; later capabilities add their tables through :data:`_MIGRATIONS`.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from servewise.errors import StoreError
from servewise.folders import cache_folder
from servewise.formats.redact import redact_data, redact_text, redact_url

#: Schema steps, applied in order; ``PRAGMA user_version`` records how many ran.
_MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE scan_cache (
        key TEXT PRIMARY KEY,
        scanner INTEGER NOT NULL,
        data TEXT NOT NULL,
        created_at REAL NOT NULL
    )
    """,
    # bench: one row per run (the JSON document), one per request (the raw record).
    """
    CREATE TABLE bench_runs (
        run_id TEXT PRIMARY KEY,
        created_at REAL NOT NULL,
        url TEXT NOT NULL,
        model TEXT NOT NULL,
        document TEXT NOT NULL
    )
    """,
    """
    CREATE TABLE bench_requests (
        run_id TEXT NOT NULL REFERENCES bench_runs(run_id),
        level INTEGER NOT NULL,
        phase TEXT NOT NULL,
        seq INTEGER NOT NULL,
        record TEXT NOT NULL,
        PRIMARY KEY (run_id, level, phase, seq)
    )
    """,
    # Hub metadata of models (the planner). Steps are only ever appended: a store records how
    # many ran, so a step put before others would be skipped in stores that had those.
    """
    CREATE TABLE hub_metadata (
        repo TEXT NOT NULL,
        revision TEXT NOT NULL,
        sha TEXT NOT NULL,
        reader INTEGER NOT NULL,
        data TEXT NOT NULL,
        created_at REAL NOT NULL,
        PRIMARY KEY (repo, revision)
    )
    """,
    # launch: one row per engine launch (a search's attempts too), one per search.
    """
    CREATE TABLE IF NOT EXISTS launches (
        run_id TEXT PRIMARY KEY,
        search_id TEXT,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        outcome TEXT NOT NULL,
        document TEXT NOT NULL
    )
    """,
    "CREATE INDEX IF NOT EXISTS launches_by_search ON launches (search_id, created_at)",
    """
    CREATE TABLE IF NOT EXISTS searches (
        search_id TEXT PRIMARY KEY,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        param TEXT NOT NULL,
        status TEXT NOT NULL,
        document TEXT NOT NULL
    )
    """,
)


def _redacted_json(document: Any) -> str:
    """A document as compact JSON with every secret masked (:mod:`servewise.formats.redact`):
    what a user or a server put in a run (an API key, a password in a URL) is never stored."""
    return json.dumps(redact_data(document), separators=(",", ":"))


def default_path() -> Path:
    """Where the store lives unless told otherwise."""
    return cache_folder() / "servewise.db"


class Store:
    """A connection to the store; use as a context manager or call :meth:`close`."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or default_path()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=10, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._migrate()
        except (OSError, sqlite3.Error) as error:
            raise StoreError(
                f"cannot open the store at {self.path}: {error}",
                hint="set SERVEWISE_CACHE_DIR to a writable folder, or pass --no-cache",
                path=str(self.path),
            ) from None

    def _migrate(self) -> None:
        (done,) = self._db.execute("PRAGMA user_version").fetchone()
        self._check_schema(done)
        if done == len(_MIGRATIONS):
            return
        # Two processes may open a new store at once: the version is read again under the
        # write lock, so each step runs exactly once.
        self._db.execute("BEGIN IMMEDIATE")
        try:
            (done,) = self._db.execute("PRAGMA user_version").fetchone()
            self._check_schema(done)
            for number, step in enumerate(_MIGRATIONS[done:], start=done + 1):
                self._db.execute(step)
                self._db.execute(f"PRAGMA user_version = {number}")
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

    def _check_schema(self, done: int) -> None:
        if done > len(_MIGRATIONS):
            raise StoreError(
                f"the store at {self.path} was written by a newer servewise "
                f"(schema {done}, this one knows {len(_MIGRATIONS)})",
                hint="upgrade servewise, or set SERVEWISE_CACHE_DIR to another folder",
                path=str(self.path),
            )

    def get_scans(self, keys: list[str], scanner: int) -> dict[str, dict[str, Any]]:
        """Cached scan results for ``keys`` written by scanner version ``scanner``."""
        found: dict[str, dict[str, Any]] = {}
        stored = {redact_url(key): key for key in keys}  # keys are kept without credentials
        names = list(stored)
        try:
            for start in range(0, len(names), 500):
                batch = names[start : start + 500]
                marks = ",".join("?" * len(batch))
                rows = self._db.execute(
                    f"SELECT key, data FROM scan_cache WHERE scanner = ? AND key IN ({marks})",
                    [scanner, *batch],
                )
                for key, data in rows:
                    found[stored[key]] = json.loads(data)
        except (sqlite3.Error, json.JSONDecodeError) as error:
            raise StoreError(
                f"cannot read the store at {self.path}: {error}",
                hint="pass --no-cache, or delete the file to start a fresh store",
                path=str(self.path),
            ) from None
        return found

    def put_scan(self, key: str, scanner: int, data: dict[str, Any]) -> None:
        """Remember one scan result."""
        self._write(
            "INSERT OR REPLACE INTO scan_cache (key, scanner, data, created_at) "
            "VALUES (?, ?, ?, ?)",
            (redact_url(key), scanner, redact_url(json.dumps(data, separators=(",", ":"))),
             time.time()),
        )

    def _write(self, sql: str, params: tuple[Any, ...]) -> None:
        """Run one write; a failure is a :class:`StoreError` with a hint."""
        try:
            self._db.execute(sql, params)
        except sqlite3.Error as error:
            raise StoreError(
                f"cannot write the store at {self.path}: {error}",
                hint="check free disk space, or pass --no-cache",
                path=str(self.path),
            ) from None

    def get_hub(self, repo: str, revision: str, reader: int) -> dict[str, Any] | None:
        """Hub metadata of ``repo`` (endpoint + id) at ``revision``, or None."""
        try:
            row = self._db.execute(
                "SELECT data FROM hub_metadata WHERE repo = ? AND revision = ? AND reader = ?",
                (repo, revision, reader),
            ).fetchone()
            return None if row is None else dict(json.loads(row[0]))
        except (sqlite3.Error, json.JSONDecodeError, TypeError, ValueError) as error:
            raise StoreError(
                f"cannot read the store at {self.path}: {error}",
                hint="pass --no-cache, or delete the file to start a fresh store",
                path=str(self.path),
            ) from None

    def put_hub(self, repo: str, revision: str, sha: str, reader: int,
                data: dict[str, Any]) -> None:
        """Remember Hub metadata read at commit ``sha`` under ``revision``."""
        self._write(
            "INSERT OR REPLACE INTO hub_metadata (repo, revision, sha, reader, data, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?)",
            (repo, revision, sha, reader, redact_url(json.dumps(data, separators=(",", ":"))),
             time.time()),
        )

    def put_bench_run(self, run_id: str, document: dict[str, Any],
                      requests: Sequence[tuple[int, str, int, dict[str, Any]]]) -> None:
        """Keep one benchmark run: its document and ``(level, phase, seq, record)`` rows."""
        try:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute(
                "INSERT INTO bench_runs (run_id, created_at, url, model, document) "
                "VALUES (?, ?, ?, ?, ?)",
                (run_id, time.time(), redact_text(str(document.get("url", ""))),
                 str(document.get("model", "")), _redacted_json(document)),
            )
            self._db.executemany(
                "INSERT INTO bench_requests (run_id, level, phase, seq, record) "
                "VALUES (?, ?, ?, ?, ?)",
                [(run_id, level, phase, seq, _redacted_json(record))
                 for level, phase, seq, record in requests],
            )
            self._db.execute("COMMIT")
        except sqlite3.Error as error:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise StoreError(
                f"cannot write the store at {self.path}: {error}",
                hint="check free disk space, or pass --no-store",
                path=str(self.path),
            ) from None

    def bench_runs(self, limit: int = 50) -> list[dict[str, Any]]:
        """The latest benchmark runs' documents, newest first."""
        rows = self._read("SELECT document FROM bench_runs ORDER BY created_at DESC LIMIT ?",
                          (limit,))
        return [json.loads(document) for (document,) in rows]

    def bench_run(self, run_id: str) -> dict[str, Any] | None:
        """One run's document, or None when there is no such run."""
        rows = self._read("SELECT document FROM bench_runs WHERE run_id = ?", (run_id,))
        return json.loads(rows[0][0]) if rows else None

    def bench_requests(self, run_id: str) -> list[dict[str, Any]]:
        """One run's raw request records, each with its ``level`` index, in order."""
        rows = self._read("SELECT level, record FROM bench_requests WHERE run_id = ? "
                          "ORDER BY level, phase DESC, seq", (run_id,))
        return [{"level": level, **json.loads(record)} for level, record in rows]

    def _read(self, query: str, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        try:
            return list(self._db.execute(query, args))
        except sqlite3.Error as error:
            raise StoreError(
                f"cannot read the store at {self.path}: {error}",
                hint="delete the file to start a fresh store",
                path=str(self.path),
            ) from None

    # -- launches and searches (servewise.launch) ----------------------------------------

    def put_launch(self, run_id: str, document: dict[str, Any], *,
                   search_id: str | None = None) -> None:
        """Keep (or update) one launch's document; ``search_id`` ties an attempt to its search."""
        now = time.time()
        self._write(
            "INSERT INTO launches (run_id, search_id, created_at, updated_at, outcome, document) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(run_id) DO UPDATE SET "
            "updated_at = excluded.updated_at, outcome = excluded.outcome, "
            "document = excluded.document",
            (run_id, search_id, now, now, str(document.get("outcome", "")),
             _redacted_json(document)),
        )

    def launches(self, limit: int = 50, *, search_id: str | None = None,
                 alone: bool = False) -> list[dict[str, Any]]:
        """Launch documents, newest first: a search's attempts (oldest first), or every launch
        (``alone``: only those that are no search's attempt)."""
        if search_id is not None:
            rows = self._read("SELECT document FROM launches WHERE search_id = ? "
                              "ORDER BY created_at, rowid", (search_id,))
        else:
            where = "WHERE search_id IS NULL " if alone else ""
            rows = self._read(f"SELECT document FROM launches {where}"
                              "ORDER BY created_at DESC LIMIT ?", (limit,))
        return [json.loads(document) for (document,) in rows]

    def launch(self, run_id: str) -> dict[str, Any] | None:
        """One launch's document, or None."""
        rows = self._read("SELECT document FROM launches WHERE run_id = ?", (run_id,))
        return json.loads(rows[0][0]) if rows else None

    def put_search(self, search_id: str, document: dict[str, Any]) -> None:
        """Keep (or update) one search's document."""
        now = time.time()
        self._write(
            "INSERT INTO searches (search_id, created_at, updated_at, param, status, document) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(search_id) DO UPDATE SET "
            "updated_at = excluded.updated_at, status = excluded.status, "
            "document = excluded.document",
            (search_id, now, now, str(document.get("param", "")),
             str(document.get("status", "")), _redacted_json(document)),
        )

    def searches(self, limit: int = 50) -> list[dict[str, Any]]:
        """Search documents, newest first."""
        rows = self._read("SELECT document FROM searches ORDER BY created_at DESC LIMIT ?",
                          (limit,))
        return [json.loads(document) for (document,) in rows]

    def search(self, search_id: str) -> dict[str, Any] | None:
        """One search's document, or None."""
        rows = self._read("SELECT document FROM searches WHERE search_id = ?", (search_id,))
        return json.loads(rows[0][0]) if rows else None

    def close(self) -> None:
        """Close the connection."""
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
