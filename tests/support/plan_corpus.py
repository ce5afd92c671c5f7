"""The planner's calibration corpus: real startup logs from public sources, one record each.

``tests/data/plan_corpus.jsonl`` holds one JSON object per line: ``id``, ``source`` (the
public URL), ``engine``, ``engine_version`` (as the log states it), ``model``, ``gpu``,
``gpu_count``, ``card`` and ``catalog_gpu`` (the bundled card and catalog GPU to replay it
with, or null), ``settings`` (the planner's :class:`~servewise.plan.startup.Settings`
fields; ``layout`` as ``{tp, pp, dp, expert_parallel}``), ``logged`` (the engine's numbers:
``kv_cache_tokens``, ``available_kv_gib``, ``max_concurrency``, ``weights_gib``,
``startup_failed`` ...), ``failure_phrase`` (a phrase of the engine's error, for failed
startups) and ``incomplete`` (why the record cannot be replayed, or null).
Every source was checked against ``shared/data/heldout_sources.txt``.

``SERVEWISE_PLAN_CORPUS`` names more files of records (``os.pathsep`` between them): the
``servewise plan accuracy --export`` output of your own runs, whose source is ``measured: …``
and whose CPU records (``catalog_gpu`` ``cpu``) replay with their ``kv_cache_memory_bytes``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servewise.plan.startup import Settings
from servewise.plan.weights import Parallel

CORPUS = Path(__file__).resolve().parents[1] / "data" / "plan_corpus.jsonl"
FIELDS = frozenset({"id", "source", "engine", "engine_version", "model", "gpu", "gpu_count",
                    "card", "catalog_gpu", "settings", "logged", "failure_phrase",
                    "incomplete", "from"})


@dataclass(frozen=True)
class Record:
    """One real startup and how to replay it."""

    id: str
    source: str
    engine: str
    engine_version: str | None
    card: str | None
    catalog_gpu: str | None
    settings: dict[str, Any]
    logged: dict[str, Any]
    failure_phrase: str | None
    incomplete: str | None

    @property
    def complete(self) -> bool:
        """Whether the record states every fact the planner needs."""
        return self.incomplete is None and self.card is not None and bool(self.catalog_gpu)

    @property
    def failed(self) -> bool:
        """Whether the engine failed to start."""
        return bool(self.logged.get("startup_failed"))

    def planner_settings(self) -> Settings:
        """The :class:`Settings` the log states."""
        values = dict(self.settings)
        layout = values.pop("layout", None)
        if layout is not None:
            values["layout"] = Parallel(int(layout["tp"]), int(layout["pp"]), int(layout["dp"]),
                                        bool(layout["expert_parallel"]))
        values.setdefault("engine", self.engine)
        return Settings(**values)


def extra_files() -> list[Path]:
    """The files ``SERVEWISE_PLAN_CORPUS`` names (``plan accuracy --export`` output)."""
    named = os.environ.get("SERVEWISE_PLAN_CORPUS", "")
    return [Path(part) for part in named.split(os.pathsep) if part.strip()]


def load_corpus(path: Path | None = None) -> list[Record]:
    """Every record of the corpus (and of ``SERVEWISE_PLAN_CORPUS``), checked for its
    fields; with ``path``, that file's records only."""
    if path is None:
        return [record for file in (CORPUS, *extra_files()) for record in load_corpus(file)]
    records = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        data = json.loads(line)
        unknown = set(data) - FIELDS
        missing = FIELDS - set(data)
        if unknown or missing:
            raise ValueError(f"{path}:{number}: unknown fields {sorted(unknown)}, "
                             f"missing {sorted(missing)}")
        measured = str(data["source"]).startswith("measured: ") and path != CORPUS
        if not str(data["source"]).startswith("https://") and not measured:
            raise ValueError(f"{path}:{number}: source must be a public URL (a user's "
                             "exported run: 'measured: ...')")
        records.append(Record(data["id"], data["source"], data["engine"],
                              data["engine_version"], data["card"], data["catalog_gpu"],
                              data["settings"], data["logged"], data["failure_phrase"],
                              data["incomplete"]))
    return records
