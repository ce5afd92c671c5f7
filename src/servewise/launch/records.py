"""Launches and searches in the store: recording as they go, stopping a detached run.

:func:`store_recorder` turns the store into the ``record`` callback of
:func:`~servewise.launch.search.run_search`; a store that cannot be written (a full disk)
is reported once through ``warn`` and the launch goes on. :func:`stop_run` ends a detached
launch by the process group and start time it was recorded with, so a reused pid is never
signalled.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from servewise.errors import StoreError, UsageError
from servewise.launch.process import GRACE_SECONDS, process_start_time, stop_group
from servewise.store import Store

__all__ = ["launch_rows", "stop_run", "store_recorder"]


def store_recorder(store: Store | None, warn: Callable[[str], None]
                   ) -> Callable[[str, dict[str, Any], str | None], None]:
    """``record(kind, document, search_id)`` writing to ``store`` (nothing when it is None)."""
    failed = False

    def record(kind: str, document: dict[str, Any], search_id: str | None) -> None:
        nonlocal failed
        if store is None or failed:
            return
        try:
            if kind == "search":
                store.put_search(str(document["search_id"]), document)
            else:
                store.put_launch(str(document["run_id"]), document, search_id=search_id)
        except StoreError as error:
            failed = True
            warn(f"{error.message}; this run is not recorded")

    return record


def stop_run(store: Store, run_id: str, grace: float = GRACE_SECONDS) -> dict[str, Any]:
    """Stop the detached launch ``run_id``; its updated document."""
    document = store.launch(run_id)
    if document is None:
        raise UsageError(f"no launch {run_id!r} in the store",
                         hint="`servewise runs` lists launches and their ids", found=run_id)
    pid = document.get("pid")
    if not isinstance(pid, int) or document.get("stopped") is not None:
        how = document.get("stopped") or "gone"
        return {**document, "stopped": how, "stop_message": f"the run had already ended ({how})"}
    recorded = document.get("start_time")
    current = process_start_time(pid)
    if current is None or (recorded is not None and current != recorded):
        how = "gone"
    else:
        how = stop_group(pid, grace=grace)
    updated = {**document, "stopped": how, "outcome": document.get("outcome", "ready"),
               "stop_message": {"gone": "the engine had already exited",
                                "terminated": "stopped with SIGTERM",
                                "killed": "killed with SIGKILL after the grace period"}[how]}
    store.put_launch(run_id, updated, search_id=document.get("search_id"))
    return updated


def launch_rows(store: Store, limit: int) -> list[dict[str, Any]]:
    """Launches (not a search's attempts) and searches for ``servewise runs``, newest first."""
    rows: list[dict[str, Any]] = []
    for doc in store.launches(limit, alone=True):
        rows.append({"kind": "launch", "run_id": doc.get("run_id"),
                     "outcome": doc.get("outcome"), "stopped": doc.get("stopped"),
                     "time_to_ready_s": doc.get("time_to_ready_s"),
                     "command": " ".join(doc.get("argv") or [])})
    for doc in store.searches(limit):
        rows.append({"kind": "search", "run_id": doc.get("search_id"),
                     "outcome": doc.get("status"), "param": doc.get("param"),
                     "best": doc.get("best"), "launches": doc.get("launches"),
                     "command": " ".join(doc.get("argv") or [])})
    rows.sort(key=lambda row: str(row["run_id"]).split("-", 1)[-1], reverse=True)
    return rows[:limit]
