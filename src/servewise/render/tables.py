"""Human-readable tables for the CLI (rich). Only the CLI imports this module."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from servewise.inspect.engine_version import engine_version
from servewise.inspect.gate import GateResult
from servewise.inspect.report import BuildReport, LibraryReport
from servewise.knowledge.gpus import Gpu

_STATUS_STYLE = {"ok": "green", "warning": "yellow", "info": "dim", "error": "bold red"}


def _dispatch_text(names: dict[str, tuple[str, ...]]) -> str:
    return ", ".join(f"{arch}: {len(found)}" for arch, found in names.items()) or "-"


def _library_label(path: str, library_id: str | None, signals: tuple[str, ...] = ()) -> Text:
    label = Text(path)
    if library_id:
        label.append(f"\n{library_id}", style="dim")
        if signals:
            label.append(f" (by {', '.join(signals)})", style="dim")
    return label


def inspect_table(report: BuildReport) -> Table:
    """One row per library: SASS, PTX, JIT-dispatch evidence and provenance."""
    table = Table(title=f"{report.ref} ({report.source_kind})", title_justify="left",
                  show_lines=False, expand=False)
    table.add_column("library")
    table.add_column("package")
    table.add_column("SASS")
    table.add_column("PTX")
    table.add_column("JIT-dispatch (distinct names)")
    table.add_column("compression")
    for library in report.libraries:
        provenance = library.provenance
        package = Text(provenance.package or "-")
        if provenance.package_version:
            package.append(f" {provenance.package_version}")
        if provenance.bundled_version:
            package.append(f"\nbundled {provenance.bundled_version}", style="dim")
        if provenance.library_version:
            package.append(f"\nversion {provenance.library_version}", style="dim")
        if provenance.git_hashes:
            package.append(f"\ngit {', '.join(provenance.git_hashes[:2])}", style="dim")
        table.add_row(
            _library_label(library.path, library.provenance.library_id,
                           library.provenance.identified_by),
            package,
            ", ".join(library.scan.sass) or "-",
            ", ".join(library.scan.ptx) or "-",
            _dispatch_text(library.dispatch),
            ", ".join(c for c in library.compressions if c != "none") or "-",
        )
    return table


def source_line(report: BuildReport) -> Text | None:
    """One line about where the build came from: image digest and date, wheel URL, engine."""
    meta = report.metadata
    parts: list[str] = []
    if meta.get("digest") or meta.get("image_id"):
        parts.append(f"{report.source_kind} {meta.get('reference', report.ref)}")
        parts.append(f"digest {meta.get('digest') or meta.get('image_id')}")
        if meta.get("platform"):
            parts.append(str(meta["platform"]))
        if meta.get("created"):
            parts.append(f"created {meta['created']}")
    elif meta.get("url"):
        parts.append(f"wheel {meta.get('filename') or meta['url']}")
        if meta.get("uploaded"):
            parts.append(f"uploaded {meta['uploaded']}")
    engine = engine_version(report)
    if engine is not None:
        parts.append(f"engine {engine.package} {engine.version}")
    if report.units.kind == "layer":
        parts.append(f"layers read {report.units.read}, from the store {report.units.cached}")
    return Text(" · ".join(parts)) if parts else None


def entries_table(library: LibraryReport) -> Table:
    """Every compiled image of one library, in file order."""
    table = Table(title=library.path, title_justify="left")
    for column in ("offset", "kind", "arch", "origin", "compression", "stored", "uncompressed",
                   "PTX ISA"):
        numeric = column in ("stored", "uncompressed")
        table.add_column(column, justify="right" if numeric else "left")
    for entry in library.scan.entries:
        table.add_row(f"{entry.offset:#x}", entry.kind, entry.arch, entry.origin,
                      entry.compression, str(entry.stored_bytes), str(entry.uncompressed_bytes),
                      entry.ptx_isa or "-")
    return table


def gate_table(result: GateResult) -> Table:
    """One row per library: verdict, status and reason."""
    gpu = result.gpu
    table = Table(
        title=f"{result.ref} on {gpu.name} (CC {gpu.cc}, {gpu.arch.sass_name})",
        title_justify="left",
    )
    table.add_column("library")
    table.add_column("verdict")
    table.add_column("status")
    table.add_column("reason")
    for verdict in result.verdicts:
        style = _STATUS_STYLE.get(verdict.status, "")
        table.add_row(
            _library_label(verdict.path, verdict.library_id),
            Text(verdict.verdict, style=style),
            Text(verdict.status + (" (required)" if verdict.required else ""), style=style),
            Text(verdict.reason),
        )
    for library_id, why in result.absent:
        near = result.closest.get(library_id, ())
        closest = f"; closest in this build: {'; '.join(near)}" if near else ""
        table.add_row(Text(library_id), Text("absent", style="bold red"),
                      Text("error (required)", style="bold red"),
                      Text(f"not in this build; required by {why}{closest}"))
    return table


def gpus_table(gpus: tuple[Gpu, ...]) -> Table:
    """The GPU catalog."""
    table = Table(title="GPU catalog", title_justify="left")
    table.add_column("id")
    table.add_column("name")
    table.add_column("CC / gfx")
    table.add_column("memory")
    table.add_column("family")
    table.add_column("aliases")
    for gpu in gpus:
        table.add_row(Text(gpu.id), Text(gpu.name), str(gpu.cc) if gpu.cc else str(gpu.gfx_arch),
                      f"{gpu.memory_bytes / 1e9:.0f} GB", Text(gpu.family),
                      Text(", ".join(gpu.aliases)))
    return table
