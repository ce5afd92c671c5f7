"""A sweep's state file: which configurations ran, which cells are finished, and their results.

One JSON file, rewritten whole after every change (to a temporary file, then renamed over the
old one), so that Ctrl-C or a crash at any moment leaves the last finished cell recorded and
a half-written file never. A resumed sweep reads it and runs only what is not recorded:

* a cell (configuration x workload) whose ``status`` is ``done`` is not run again, nor one
  that ``failed`` (unless ``retry_failed``);
* a configuration whose launch failed (``failed``, ``timeout``, ``check_failed``) is not
  launched again (unless ``retry_failed``); one left ``running`` by a crash is.

Where it lives: beside the plan (``PLAN.sweep.json``), or for a sweep given by flags in the
store's folder (``sweeps/sweep-<plan digest>.json``), so the same command resumes.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from servewise.errors import StoreError, UsageError

__all__ = ["SweepState", "default_state_path"]

VERSION = 1
FAILED = ("failed", "timeout", "check_failed", "start_error", "port_in_use", "log_error")


def default_state_path(plan_source: Path | None, plan_key: str, store_dir: Path) -> Path:
    """``PLAN.sweep.json`` beside a plan file, else ``<store>/sweeps/sweep-KEY.json``."""
    if plan_source is not None:
        return plan_source.with_name(plan_source.stem + ".sweep.json")
    return store_dir / "sweeps" / f"sweep-{plan_key}.json"


class SweepState:
    """The state file's data, and :meth:`save` (safe to call from several threads)."""

    def __init__(self, path: Path, data: dict[str, Any]) -> None:
        self.path = path
        self.data = data
        self._lock = threading.Lock()

    @classmethod
    def open(cls, path: Path, plan: dict[str, Any], *, fresh: bool = False) -> SweepState:
        """Read the state at ``path`` (or start one); ``fresh`` forgets what it held."""
        data: dict[str, Any] | None = None
        if path.exists() and not fresh:
            try:
                data = json.loads(path.read_text("utf-8"))
            except (OSError, ValueError) as error:
                raise UsageError(f"cannot read the sweep state {path}: {error}",
                                 path=str(path), hint="remove it (or pass --fresh) to start "
                                 "the sweep over") from None
            if not isinstance(data, dict) or data.get("version") != VERSION:
                raise UsageError(f"{path} is not a servewise sweep state", path=str(path),
                                 hint="remove it (or pass --fresh) to start over")
        now = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        if data is None:
            data = {"version": VERSION, "sweep_id": time.strftime("sweep-%Y%m%d-%H%M%S"),
                    "created_at": now, "configurations": {}, "cells": {}}
        data["plan"] = plan
        data["resumed"] = int(data.get("resumed", -1)) + 1
        state = cls(path, data)
        state.save()
        return state

    @property
    def sweep_id(self) -> str:
        """The id the sweep got when it first ran."""
        return str(self.data["sweep_id"])

    def configuration(self, key: str) -> dict[str, Any] | None:
        """What is recorded of a configuration (by its key)."""
        found = self.data["configurations"].get(key)
        return found if isinstance(found, dict) else None

    def cell(self, key: str) -> dict[str, Any] | None:
        """What is recorded of a cell (``CONFIG_KEY/WORKLOAD_KEY``)."""
        found = self.data["cells"].get(key)
        return found if isinstance(found, dict) else None

    def finished(self, key: str, retry_failed: bool) -> bool:
        """Whether a cell needs no run."""
        cell = self.cell(key)
        if cell is None:
            return False
        return cell.get("status") == "done" or (cell.get("status") == "failed"
                                                and not retry_failed)

    def launch_failed(self, key: str, retry_failed: bool) -> bool:
        """Whether a configuration's launch failed before (and is not to be tried again)."""
        found = self.configuration(key)
        return (found is not None and found.get("status") in FAILED and not retry_failed)

    def put_configuration(self, key: str, record: dict[str, Any]) -> None:
        """Record (merge) a configuration's status and save."""
        with self._lock:
            self.data["configurations"][key] = {
                **(self.data["configurations"].get(key) or {}), **record}
        self.save()

    def put_cell(self, key: str, record: dict[str, Any]) -> None:
        """Record a cell and save."""
        with self._lock:
            self.data["cells"][key] = record
        self.save()

    def save(self) -> None:
        """Write the file (atomically: a temporary file renamed over it)."""
        with self._lock:
            self.data["updated_at"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
            text = json.dumps(self.data, indent=1) + "\n"
            temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}."
                                            f"{threading.get_ident()}.tmp")
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                temporary.write_text(text, "utf-8")
                os.replace(temporary, self.path)
            except OSError as error:
                with contextlib.suppress(OSError):
                    temporary.unlink()
                raise StoreError(f"cannot write the sweep state {self.path}: {error}",
                                 path=str(self.path), hint="free disk space, or pass --state "
                                 "FILE in a writable folder") from None
