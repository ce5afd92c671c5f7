"""Human output for the commands about builds as a whole: ``version`` and ``diff``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text

from servewise.inspect.diff import ArchChange, BuildDiff, BuildEngine
from servewise.knowledge.version_reading import VersionReading

if TYPE_CHECKING:
    from servewise.inspect.bisect import Candidate

_VERSION_FIELDS = (
    ("form", "read as"), ("engine", "engine"), ("package", "package"),
    ("repository", "repository"), ("tag", "tag"), ("digest", "digest"),
    ("channel", "channel"), ("version", "version"), ("base_version", "release"),
    ("pre", "pre-release"), ("post", "post-release"), ("dev", "dev number"),
    ("commits_since_tag", "commits since tag"), ("local", "local part"),
    ("commit", "commit"), ("build_date", "build date"), ("cuda", "CUDA"),
    ("variant", "variant"),
)


def version_table(reading: VersionReading) -> Table:
    """The parts of one version string or tag, then what they mean."""
    table = Table(title=reading.input, title_justify="left", show_header=False)
    table.add_column("field", style="dim")
    table.add_column("value")
    for key, label in _VERSION_FIELDS:
        value = getattr(reading, key)
        if value is None or value == "":
            continue
        if key == "pre":
            value = f"{value[0]}{value[1]}"
        table.add_row(label, Text(str(value)))
    table.add_row("floating", "yes: the publisher moves it" if reading.floating else "no")
    table.add_row("official build possible",
                  "yes" if reading.official_build_possible else Text("no (a local build)",
                                                                      style="bold yellow"))
    for index, sentence in enumerate(reading.meaning):
        table.add_row("meaning" if index == 0 else "", Text(sentence))
    return table


def _arch_text(change: ArchChange) -> Text:
    if not change.changed:
        return Text(", ".join(change.b) or "-", style="dim")
    text = Text()
    for arch in change.gained:
        text.append(f"+{arch} ", style="green")
    for arch in change.lost:
        text.append(f"-{arch} ", style="bold red")
    kept = sorted(set(change.a) & set(change.b))
    if kept:
        text.append("= " + ", ".join(kept), style="dim")
    return text


def _engine_text(engine: BuildEngine | None) -> str:
    if engine is None:
        return "no engine distribution found"
    parts = [f"{engine.package} {engine.version}"]
    if engine.reading.commit:
        parts.append(f"commit {engine.reading.commit}")
    if engine.reading.dirty:
        parts.append("local build")
    return ", ".join(parts)


def diff_header(diff: BuildDiff) -> Text:
    """Which build is A and which is B, with the engine version of each."""
    return Text.assemble(
        ("A: ", "bold"), f"{diff.a.ref} ({_engine_text(diff.engine_a)})\n",
        ("B: ", "bold"), f"{diff.b.ref} ({_engine_text(diff.engine_b)})",
    )


def diff_table(diff: BuildDiff, *, everything: bool = False) -> Table | None:
    """Libraries that changed (all with ``everything``), arch sets, provenance; None if none."""
    table = Table()
    table.add_column("library")
    table.add_column("change")
    table.add_column("SASS")
    table.add_column("PTX")
    table.add_column("JIT-dispatch")
    table.add_column("provenance")
    if diff.gpu is not None:
        table.add_column(f"verdict on {diff.gpu.id}")
    for name, before, after in diff.packages:
        if everything or not _is_engine(diff, name):
            table.add_row(Text(f"{name} (distribution)", style="dim"),
                          Text("added" if before is None else "removed" if after is None
                               else "changed"), "", "", "",
                          Text(f"version: {before or '-'} → {after or '-'}"),
                          *([""] if diff.gpu is not None else []))
    for change in diff.libraries:
        if change.status == "unchanged" and not everything:
            continue
        label = Text(change.path)
        if change.renamed and change.a is not None:
            label.append(f"\nwas {change.a.path}", style="dim")
        if change.library_id:
            label.append(f"\n{change.library_id}", style="dim")
        status = change.status
        if status == "changed" and not change.gpu_code_changed:
            status = "changed (host code)"
        provenance = Text()
        for name, (before, after) in change.provenance.items():
            provenance.append(f"{name}: {_short(before)} → {_short(after)}\n")
        row = [label, Text(status), _arch_text(change.sass), _arch_text(change.ptx),
               _arch_text(change.jit_dispatch), provenance]
        if diff.gpu is not None and change.verdicts is not None:
            before, after = change.verdicts
            style = "bold red" if change.verdict_changed else "dim"
            row.append(Text(f"{before or '-'} → {after or '-'}", style=style))
        table.add_row(*row)
    return table if table.row_count else None


def _is_engine(diff: BuildDiff, name: str) -> bool:
    return any(engine is not None and engine.package == name
               for engine in (diff.engine_a, diff.engine_b))


def _short(value: object) -> str:
    if isinstance(value, tuple):
        return ", ".join(str(v) for v in value[:3]) or "-"
    return "-" if value is None else str(value)


def diff_summary(diff: BuildDiff) -> Text:
    """The last line of ``diff``: same or differ, and why."""
    counts = diff.counts()
    tally = ", ".join(f"{counts[s]} {s}" for s in ("added", "removed", "changed") if counts[s])
    if diff.gpu is not None:
        changed = [c.path for c in diff.libraries if c.verdict_changed]
        if changed:
            libraries = "1 library" if len(changed) == 1 else f"{len(changed)} libraries"
            return Text.assemble(("DIFFER", "bold red"), f": the verdict on {diff.gpu.name} "
                                 f"changed for {libraries} ({tally})")
        return Text.assemble(("SAME", "green"), f": every verdict on {diff.gpu.name} is "
                             f"unchanged ({tally or 'nothing changed'})")
    if diff.coverage_changed:
        lost = sorted({a for c in diff.libraries for a in (*c.sass.lost, *c.ptx.lost,
                                                            *c.jit_dispatch.lost)})
        gained = sorted({a for c in diff.libraries for a in (*c.sass.gained, *c.ptx.gained,
                                                              *c.jit_dispatch.gained)})
        detail = "; ".join(part for part in (
            f"lost {', '.join(lost)}" if lost else "", f"gained {', '.join(gained)}"
            if gained else "", tally) if part)
        return Text.assemble(("DIFFER", "bold red"), f": GPU coverage changed ({detail})")
    return Text.assemble(("SAME", "green"),
                         f": the same GPU coverage ({tally or 'nothing changed'})")


def candidate_label(candidate: Candidate) -> str:
    """A judged build in one line: label, other tags, date, and the REF when it says more."""
    alias = f" (also {', '.join(candidate.aliases)})" if candidate.aliases else ""
    parts = [f"{candidate.label}{alias}"]
    if candidate.created:
        parts.append(candidate.created)
    if candidate.ref != candidate.label:
        parts.append(candidate.ref)
    return "  ".join(parts)
