"""Plots of a benchmark run with matplotlib (the ``plot`` extra): one figure, three panels.

1. latency against throughput across the sweep: TTFT p50 and TPOT p50 (ms) against output
   tokens per second, one point per load level;
2. the TTFT distribution of each level (empirical CDF);
3. the per-token ITL distribution of each level (empirical CDF).

It reads the run's JSON document and its raw request records (as stored), so a stored run
can be plotted again later. The file type follows the suffix (``.png``, ``.svg``, ``.pdf``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from servewise.bench.load import short_label
from servewise.bench.metrics import per_token_gaps
from servewise.errors import SourceError, UsageError


def _cdf(values: Sequence[float] | Sequence[tuple[float, int]]
         ) -> tuple[list[float], list[float]]:
    """The empirical CDF of values, or of ``(value, weight)`` weighted samples."""
    pairs = sorted(v if isinstance(v, tuple) else (v, 1) for v in values)
    total = sum(weight for _, weight in pairs)
    xs, ys, seen = [], [], 0
    for value, weight in pairs:
        seen += weight
        xs.append(value)
        ys.append(seen / total)
    return xs, ys


def _level_samples(records: Sequence[dict[str, Any]], level: int
                   ) -> tuple[list[float], list[tuple[float, int]]]:
    """TTFT samples and per-token ITL weighted samples (ms) of one level's completed,
    measured requests."""
    ttft: list[float] = []
    itl: list[tuple[float, int]] = []
    for record in records:
        if record["level"] != level or record["phase"] != "measure" or record["error"]:
            continue
        offsets = record["chunk_offsets_s"]
        if offsets:
            ttft.append(1000 * offsets[0])
        itl.extend((1000 * gap, count) for gap, count in
                   per_token_gaps(offsets, record["chunk_tokens"]))
    return ttft, itl


SUFFIXES = (".png", ".svg", ".pdf")


def check_target(path: Path, option: str) -> None:
    """Raise before any request when ``path`` cannot be written (no folder, a folder, no
    permission), so a finished run is never lost to a bad path at the end."""
    import os

    folder = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise UsageError(f"{option} {path} is a folder", hint=f"give {option} a file path",
                         path=str(path))
    if not folder.is_dir():
        raise UsageError(f"{option} {path}: the folder {folder} does not exist",
                         hint=f"create {folder} or give {option} another path", path=str(path))
    writable = os.access(path, os.W_OK) if path.exists() else os.access(folder, os.W_OK)
    if not writable:
        raise UsageError(f"{option} {path} is not writable",
                         hint=f"give {option} a path you can write", path=str(path))


def check_plot(path: Path) -> None:
    """Raise before any request when ``--plot`` cannot work: no matplotlib, a suffix it
    cannot draw, or a path that cannot be written."""
    if path.suffix.lower() not in SUFFIXES:
        raise UsageError(f"--plot {path}: the file must end in {', '.join(SUFFIXES)}",
                         hint="e.g. --plot run.png", path=str(path))
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise UsageError("--plot needs matplotlib, which is not installed",
                         hint="pip install 'servewise[plot]', or drop --plot (a stored run "
                              "can be drawn later with `servewise runs ID --plot FILE`)"
                         ) from None
    check_target(path, "--plot")


def write_plot(document: dict[str, Any], records: Sequence[dict[str, Any]], path: Path) -> None:
    """Draw the three panels of a run into ``path``."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        from matplotlib import pyplot
    except ImportError:
        raise UsageError("--plot needs matplotlib, which is not installed",
                         hint="pip install 'servewise[plot]'") from None
    entries = document["results"]
    figure, (sweep, ttft_axis, itl_axis) = pyplot.subplots(1, 3, figsize=(16, 4.8))
    figure.suptitle(f"{document['model']} at {document['url']} ({document['run_id']})")
    points = [(e["output_tokens_per_s"], e["ttft_ms"], e["tpot_ms"], short_label(e["workload"]))
              for e in entries if e["output_tokens_per_s"] is not None and e["ttft_ms"]]
    if points:
        xs = [p[0] for p in points]
        sweep.plot(xs, [p[1]["p50"] for p in points], "o-", label="TTFT p50")
        tpot_axis = sweep.twinx()
        tpot_axis.plot(xs, [p[2]["p50"] if p[2] else float("nan") for p in points], "s--",
                       color="tab:orange", label="TPOT p50")
        tpot_axis.set_ylabel("TPOT p50 (ms)")
        for x, ttft, _, label in points:
            sweep.annotate(label, (x, ttft["p50"]), textcoords="offset points", xytext=(4, 4))
        sweep.legend(loc="upper left")
        tpot_axis.legend(loc="lower right")
    sweep.set_xlabel("output tokens/s")
    sweep.set_ylabel("TTFT p50 (ms)")
    sweep.set_title("latency against throughput")
    for index, entry in enumerate(entries):
        ttft, itl = _level_samples(records, index)
        if ttft:
            ttft_axis.plot(*_cdf(ttft), label=short_label(entry["workload"]))
        if itl:
            itl_axis.plot(*_cdf(itl), label=short_label(entry["workload"]))
    for axis, name in ((ttft_axis, "TTFT"), (itl_axis, "ITL per token")):
        axis.set_xlabel(f"{name} (ms)")
        axis.set_ylabel("fraction of samples")
        axis.set_title(f"{name} distribution")
        if axis.lines:
            axis.legend()
    figure.tight_layout()
    try:
        figure.savefig(path)
    except (OSError, ValueError) as error:
        raise SourceError(f"cannot write the plot {path}: {error}",
                          hint="give --plot a writable path ending in .png, .svg or .pdf",
                          path=str(path)) from None
    finally:
        pyplot.close(figure)
