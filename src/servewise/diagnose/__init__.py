"""Diagnose: the root cause of a failed engine log, the library and layer, and the fix.

Data in, data out: a text stream, lines or bytes in; a
:class:`~servewise.diagnose.result.Diagnosis` out. Nothing here opens files or
prints (the CLI and ``servewise.sources.logs`` bring the bytes)::

    from servewise.diagnose import diagnose_text
    result = diagnose_text(log)
    result.root_cause.category     # "oom_workspace_alloc"
    result.root_cause.fix.steps    # ["Lower --mem-fraction-static to 0.93 …", …]
    result.to_dict()               # {"root_cause": {...}, "findings": [...]}

For a log that grows (``--follow``) or a stream of unknown size, use
:class:`~servewise.diagnose.scan.LogScanner` directly: ``feed(chunk)`` as bytes
arrive, ``snapshot()`` at any time, ``finish()`` at the end.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from servewise.diagnose.result import Diagnosis, EvidenceLine, Finding, Fix
from servewise.diagnose.ruleset import RuleSet, load_rules
from servewise.diagnose.scan import LogScanner

if TYPE_CHECKING:
    from servewise.knowledge.gpus import Gpu, GpuSpec

__all__ = [
    "Diagnosis",
    "EvidenceLine",
    "Finding",
    "Fix",
    "LogScanner",
    "diagnose_bytes",
    "diagnose_lines",
    "diagnose_text",
    "new_scanner",
]


def _gpu_memory(gpu: GpuSpec | Gpu | None) -> tuple[float | None, str | None]:
    """The memory one device shows the engine (GiB) and the GPU's name."""
    if gpu is None:
        return None, None
    from servewise.knowledge.gpus import GpuSpec

    if isinstance(gpu, GpuSpec):
        if gpu.is_cpu:
            return None, None
        return gpu.memory_bytes / 2**30, gpu.gpu.name if gpu.gpu is not None else gpu.name
    return gpu.engine_memory[0] / 2**30, gpu.name


def new_scanner(*, rules: RuleSet | None = None, gpu: GpuSpec | Gpu | None = None,
                prefilter: bool = True, matcher: str | None = None) -> LogScanner:
    """A scanner with the shipped (and user) rules; ``gpu`` (the shared ``--gpu NAME[:COUNT]``
    :class:`~servewise.knowledge.gpus.GpuSpec`, or a catalog entry) fills in the GPU's memory.

    The memory is the total the engine sees (the driver's figure where the catalog has it),
    the one its fractions are taken of.

    ``matcher`` picks the pre-filter's matcher (``hyperscan`` or ``aho-corasick``; default:
    the fastest installed).
    """
    total_gib, name = _gpu_memory(gpu)
    return LogScanner(
        rules if rules is not None else load_rules(),
        gpu_total_gib=total_gib,
        gpu_name=name,
        prefilter=prefilter,
        matcher=matcher,
    )


def diagnose_bytes(chunks: Iterable[bytes], *, rules: RuleSet | None = None,
                   gpu: GpuSpec | Gpu | None = None, prefilter: bool = True) -> Diagnosis:
    """Diagnose a log given as consecutive byte chunks (one streaming pass)."""
    scanner = new_scanner(rules=rules, gpu=gpu, prefilter=prefilter)
    for chunk in chunks:
        scanner.feed(chunk)
    return scanner.finish()


def diagnose_lines(lines: Iterable[str], *, rules: RuleSet | None = None,
                   gpu: GpuSpec | Gpu | None = None, prefilter: bool = True) -> Diagnosis:
    """Diagnose a log given as lines of text."""
    scanner = new_scanner(rules=rules, gpu=gpu, prefilter=prefilter)
    scanner.feed_lines(lines)
    return scanner.finish()


def diagnose_text(text: str, *, rules: RuleSet | None = None,
                  gpu: GpuSpec | Gpu | None = None, prefilter: bool = True) -> Diagnosis:
    """Diagnose a whole log held in a string."""
    return diagnose_bytes([text.encode("utf-8", "surrogateescape")], rules=rules, gpu=gpu,
                          prefilter=prefilter)
