"""The recipe types: what a recipe says, where it came from, and how it was measured.

A :class:`Recipe` is one launch that someone ran (or estimated) for one model on one
kind of GPU with one engine: the ``match`` it answers (model, variant, quant, GPU,
GPUs per node, strategy, nodes), the engine and its minimum version, the image, the
engine flags as an argv list (without the model, which the renderers add), the
environment, a status, its provenance and the benchmark runs measured with it (in the
shape of ``servewise bench --json`` results).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from servewise.errors import ServewiseError
from servewise.knowledge.engines import serving_engines
from servewise.versions import EngineVersion

if TYPE_CHECKING:
    from servewise.knowledge.flags import EngineSettings

Status = Literal["verified", "in-progress", "estimated", "unsupported"]
"""How far a recipe is trusted: ran end to end, being verified, estimated, known not to work."""

STATUSES: tuple[Status, ...] = ("verified", "in-progress", "estimated", "unsupported")
"""Every status, best first (the order ranks matches)."""

ENGINES: tuple[str, ...] = serving_engines()
"""Engines a recipe can name."""

MULTINODE_MODES: tuple[str, ...] = ("mp", "dp", "ray")
"""How the nodes of a multi-node recipe join: vLLM's own ``--nnodes/--node-rank`` (``mp``),
data-parallel ranks per node (``dp``: ``--data-parallel-start-rank``), or a Ray cluster."""

FLOATING_TAGS = frozenset({"latest", "nightly", "main", "dev", "edge", "stable"})
"""Image tags that move: a recipe that names one is not pinned."""

_IMAGE_RE = re.compile(
    r"^(?P<name>[a-z0-9]+(?:[._/-][a-z0-9]+)*(?::\d+)?(?:/[a-z0-9]+(?:[._-][a-z0-9]+)*)*)"
    r"(?::(?P<tag>[\w][\w.-]{0,127}))?"
    r"(?:@(?P<digest>sha256:[0-9a-f]{64}))?$"
)


def image_parts(ref: str) -> tuple[str, str | None, str | None] | None:
    """``(name, tag, digest)`` of an image reference, or None when it is not one."""
    found = _IMAGE_RE.match(ref)
    if found is None:
        return None
    return found.group("name"), found.group("tag"), found.group("digest")


def image_pinned(ref: str) -> bool:
    """Whether ``ref`` names a digest, or a tag that does not move (not ``latest``/``nightly``)."""
    parts = image_parts(ref)
    if parts is None:
        return False
    _, tag, digest = parts
    return digest is not None or (tag is not None and tag not in FLOATING_TAGS)


@dataclass(frozen=True)
class Match:
    """What a recipe answers: the model, its variant and quantization, the GPUs and the layout."""

    model: str
    """The model's Hugging Face id (the family, e.g. ``deepseek-ai/DeepSeek-V4-Flash``)."""
    hw: str
    """The GPU's id in servewise's GPU catalog (``h200``, ``rtx-pro-6000-blackwell-max-q``)."""
    gpus: int
    """GPUs per node the recipe uses."""
    nodes: int = 1
    variant: str | None = None
    quant: str | None = None
    strategy: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return {
            "model": self.model, "variant": self.variant, "quant": self.quant, "hw": self.hw,
            "gpus": self.gpus, "strategy": self.strategy, "nodes": self.nodes,
        }


@dataclass(frozen=True)
class Provenance:
    """Who ran or wrote a recipe, with which engine version, when, and where it is written."""

    source: str
    who: str
    engine_version: str | None = None
    date: str | None = None
    notes: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return {"who": self.who, "engine_version": self.engine_version, "date": self.date,
                "source": self.source, "notes": self.notes}


@dataclass(frozen=True)
class BenchmarkRun:
    """One benchmark run of a recipe: results in the shape of ``servewise bench --json``.

    ``results`` holds one entry per load level, each with its ``workload`` and metrics
    (``ttft_ms: {p50: …}``, ``tokens_per_sec_per_gpu`` counting input + output,
    ``output_tokens_per_sec_per_gpu``); ``derived`` names the metrics computed from the
    others rather than measured.
    """

    source: str
    engine_version: str | None
    results: tuple[Mapping[str, Any], ...]
    date: str | None = None
    derived: tuple[str, ...] = ()
    notes: str = ""
    accuracy: Mapping[str, float] = field(default_factory=dict)
    """Accuracy scores measured with the same launch (``gsm8k_pct``, …)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return {"engine_version": self.engine_version, "date": self.date, "source": self.source,
                "derived": list(self.derived), "notes": self.notes,
                "accuracy": dict(self.accuracy),
                "results": [dict(result) for result in self.results]}


@dataclass(frozen=True)
class Pool:
    """One pool of a prefill/decode (disaggregated) recipe: its role, engine flags and nodes."""

    role: str
    """``prefill`` or ``decode``."""
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()
    nodes: int = 1
    """Nodes the pool spans (0: half of one node shared with the other pool)."""
    multinode: str | None = None
    """How the pool's nodes join (see :data:`MULTINODE_MODES`); None on one node."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return {"role": self.role, "argv": list(self.argv), "env": dict(self.env),
                "nodes": self.nodes, "multinode": self.multinode}


@dataclass(frozen=True)
class Recipe:
    """One launch of one model on one kind of GPU with one engine."""

    id: str
    engine: str
    match: Match
    checkpoint: str
    """What the engine loads: a Hugging Face repo id (or a path)."""
    argv: tuple[str, ...]
    """Engine flags, without the model (the renderers put it where each engine wants it)."""
    status: Status
    provenance: Provenance
    file: str
    min_version: str | None = None
    image: str | None = None
    env: tuple[tuple[str, str], ...] = ()
    benchmarks: tuple[BenchmarkRun, ...] = ()
    aliases: tuple[str, ...] = ()
    """Other names of the model (repos of the same weights, local folder names)."""
    notes: str = ""
    user: bool = field(default=False, compare=False)
    """Whether the recipe comes from the user folder."""
    derived: bool = False
    """The command was put together by servewise from a database's claims (a hardware marked
    verified there), not run end to end as written; it ranks below one that was."""
    multinode: str | None = None
    """How the nodes join on several nodes (see :data:`MULTINODE_MODES`; default ``mp``)."""
    pools: tuple[Pool, ...] = ()
    """Prefill/decode recipes: the pools (``argv`` is then the first pool's)."""
    router: tuple[str, ...] = ()
    """Prefill/decode recipes: the router's command line."""
    images: tuple[tuple[str, str], ...] = ()
    """Images per CUDA variant (``cu129``, ``cu130``), first one the default (``image``)."""

    @property
    def env_dict(self) -> dict[str, str]:
        """The environment as a dict, in the recipe's order."""
        return dict(self.env)

    @property
    def image_pinned(self) -> bool:
        """Whether the image is pinned by digest or by a tag that does not move."""
        return self.image is not None and image_pinned(self.image)

    @property
    def engine_version(self) -> EngineVersion | None:
        """The version the recipe was run with: the one its provenance's text starts with
        (``0.26.1rc1.dev77 (the 07-29 nightly)``), else ``min_version``; None when neither
        reads as a version."""
        for text in (self.provenance.engine_version, self.min_version):
            words = (text or "").split()
            if words:
                try:
                    return EngineVersion.parse(words[0])
                except ServewiseError:
                    continue
        return None

    @property
    def min_engine_version(self) -> EngineVersion | None:
        """``min_version`` as the shared engine-version type."""
        return EngineVersion.parse(self.min_version) if self.min_version else None

    @property
    def settings(self) -> EngineSettings:
        """The flags read through the shared flag table (unknown ones in ``extra``)."""
        from servewise.knowledge.flags import from_argv

        return from_argv(self.engine, self.argv, self.min_version).replace(model=self.checkpoint)

    @property
    def origin(self) -> str:
        """Where the recipe comes from: ``servewise`` (shipped), ``vllm-recipes`` (the
        shipped snapshot of vLLM's database), ``user import`` or ``user``."""
        imported = self.id.startswith("vllm-recipes/") or self.id.startswith("sglang-cookbook/")
        if self.user:
            return "user import" if imported else "user"
        if imported:
            return self.id.split("/", 1)[0] + " (shipped snapshot)"
        return "servewise"

    def image_for(self, cuda: str | None) -> str | None:
        """The image for a CUDA variant (``cu130``, ``13.0``, ``12.9``); the default without
        one, or when the recipe has no image for it."""
        if cuda and self.images:
            wanted = cuda.lower().replace(".", "").removeprefix("cu")
            for name, image in self.images:
                if name.lower().removeprefix("cu") == wanted:
                    return image
        return self.image

    @property
    def gpus_total(self) -> int:
        """GPUs over all nodes."""
        return self.match.gpus * self.match.nodes

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return {
            "id": self.id, "engine": self.engine, "min_version": self.min_version,
            "match": self.match.to_dict(), "checkpoint": self.checkpoint,
            "aliases": list(self.aliases), "image": self.image,
            "image_pinned": self.image_pinned, "argv": list(self.argv),
            "env": self.env_dict, "status": self.status,
            "provenance": self.provenance.to_dict(),
            "benchmarks": [run.to_dict() for run in self.benchmarks],
            "notes": self.notes, "file": self.file, "user": self.user,
            "origin": self.origin, "derived": self.derived, "multinode": self.multinode,
            "pools": [pool.to_dict() for pool in self.pools], "router": list(self.router),
            "images": dict(self.images),
        }
