"""The diagnose corpus: real failure excerpts from public issue threads, labelled.

``tests/data/diagnose/corpus/*.toml`` (see its README). Each excerpt belongs, once and for
all, to the rule-writing part (``write``) or the measure-only part (``measure``): a keyed hash
of its id with a fixed seed decides, so adding excerpts never moves the old ones.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from support.paths import ROOT

CORPUS = ROOT / "tests" / "data" / "diagnose" / "corpus"
SECOND_LABELS = ROOT / "tests" / "data" / "diagnose" / "second_labels.toml"
SEED = "servewise-diagnose-corpus-2026-12"
MEASURE_SHARE = 40
"""Percent of the excerpts kept for measuring only."""

FIELDS = {"id", "source", "engine", "category", "library", "phase", "confirmed", "text"}
OPTIONAL = {"fix", "cause", "root_line"}
ENGINES = {"vllm", "sglang", "tgi", "tensorrt_llm", "llama.cpp", "none"}
PHASES = {"startup", "distributed_init", "weight_load", "profile_run", "kv_cache_init",
          "cuda_graph_capture", "workspace", "serving", "unknown"}
_SOURCE = re.compile(r"https://github\.com/(?P<repo>[\w.-]+/[\w.-]+)/(?:issues|pull)/(?P<n>\d+)$")


@dataclass(frozen=True)
class Excerpt:
    """One labelled excerpt."""

    id: str
    source: str
    engine: str
    category: str
    library: str
    phase: str
    confirmed: bool
    text: str
    fix: str | None
    cause: str | None
    file: str
    round: int | None = None
    """The fresh round the excerpt was gathered in (13 on), set by its file's top-level
    ``round``; None for the rounds split into a rule-writing and a measure-only part."""
    root_lines: tuple[int, ...] = ()
    """1-based lines of the text holding the root error (the first is the labeller's pick);
    a fresh round labels them, so that a located answer can be checked."""

    @property
    def part(self) -> str:
        """``write`` or ``measure``, fixed by the seed; ``roundN`` for a fresh round."""
        if self.round is not None:
            return f"round{self.round}"
        digest = hashlib.sha256(f"{SEED}:{self.id}".encode()).digest()
        return "measure" if int.from_bytes(digest[:4], "big") % 100 < MEASURE_SHARE else "write"

    @property
    def thread(self) -> str:
        """``owner/repo#N`` of the source."""
        found = _SOURCE.match(self.source)
        assert found is not None, self.source
        return f"{found['repo']}#{found['n']}"


def load_corpus(folder: Path = CORPUS) -> list[Excerpt]:
    """Every excerpt, validated (a wrong field fails with the file and the id)."""
    excerpts: list[Excerpt] = []
    for path in sorted(folder.glob("*.toml")):
        document = tomllib.loads(path.read_text(encoding="utf-8"))
        fresh = document.get("round")
        assert fresh is None or isinstance(fresh, int), path.name
        for raw in document.get("excerpt", []):
            where = f"{path.name}: {raw.get('id')}"
            missing = FIELDS - raw.keys()
            unknown = raw.keys() - FIELDS - OPTIONAL
            assert not missing and not unknown, (where, missing, unknown)
            assert raw["engine"] in ENGINES, where
            assert raw["phase"] in PHASES, where
            assert _SOURCE.match(raw["source"]), where
            lines = tuple(raw.get("root_line", ()))
            text_lines = raw["text"].count("\n") + 1
            assert all(isinstance(n, int) and 1 <= n <= text_lines for n in lines), where
            assert fresh is None or lines, (where, "a fresh round labels its root lines")
            excerpts.append(Excerpt(
                id=raw["id"], source=raw["source"], engine=raw["engine"],
                category=raw["category"], library=raw["library"], phase=raw["phase"],
                confirmed=bool(raw["confirmed"]), text=raw["text"], fix=raw.get("fix"),
                cause=raw.get("cause"), file=path.name, round=fresh, root_lines=lines,
            ))
    return excerpts


UNNAMED = frozenset({"unknown", "unclassified", "root_cause_missing"})
"""Answers that name no category (precision counts the others)."""


def same_category(found: str, label: str) -> bool:
    """Equal, with ``unknown`` and ``unclassified`` counted as the same answer."""
    alias = {"unknown": "unclassified"}
    return alias.get(found, found) == alias.get(label, label)


def same_library(found: str | None, expected: str) -> bool:
    """Exact match after case and ``-``/``_`` are set aside (``sgl_kernel`` = ``sgl-kernel``)."""
    def norm(name: str | None) -> str:
        return (name or "none").lower().replace("_", "-")
    return norm(found) == norm(expected)


@dataclass(frozen=True)
class SecondLabel:
    """A blind second labeller's category, library and phase for one excerpt."""

    id: str
    labeller: str
    category: str
    library: str
    phase: str
    determinable: bool
    """False where the labeller found the excerpt alone not enough to be sure of the category."""
    seen_thread: bool
    note: str | None


_LABEL_FIELDS = {"id", "labeller", "category", "library", "phase", "determinable"}


def load_second_labels(path: Path = SECOND_LABELS) -> dict[str, SecondLabel]:
    """The second labelling, by excerpt id, validated."""
    labels: dict[str, SecondLabel] = {}
    for raw in tomllib.loads(path.read_text(encoding="utf-8"))["label"]:
        missing = _LABEL_FIELDS - raw.keys()
        unknown = raw.keys() - _LABEL_FIELDS - {"seen_thread", "note"}
        assert not missing and not unknown, (raw.get("id"), missing, unknown)
        assert raw["phase"] in PHASES, raw["id"]
        assert raw["id"] not in labels, raw["id"]
        labels[raw["id"]] = SecondLabel(
            id=raw["id"], labeller=raw["labeller"], category=raw["category"],
            library=raw["library"], phase=raw["phase"], determinable=bool(raw["determinable"]),
            seen_thread=bool(raw.get("seen_thread", False)), note=raw.get("note"))
    return labels
