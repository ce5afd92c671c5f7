"""Commands over series of builds: ``tags`` and ``bisect``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from servewise.cli._common import app, emit_json, out, say
from servewise.cli.build import _catalog_gpu, stored
from servewise.cli.options import (
    IndexUrlOption,
    InsecureOption,
    JsonOption,
    NoCacheOption,
    OptionalGpuOption,
    PlatformOption,
    TimeoutOption,
    network_deadline,
    source_options,
)

if TYPE_CHECKING:
    from rich.table import Table

    from servewise.inspect.bisect import BisectResult, BuildProbe
    from servewise.inspect.tags import TagList

MatchOption = Annotated[str | None, typer.Option(
    "--match", help="Only tags (or versions) matching this regular expression, "
    "e.g. '^nightly-'.", show_default=False)]


@app.command()
def tags(
    repo: Annotated[str, typer.Argument(help="An image repository, [registry/]repo (no tag).",
                                        show_default=False)],
    match: MatchOption = None,
    platform: PlatformOption = None,
    insecure: InsecureOption = False,
    timeout: TimeoutOption = None,
    as_json: JsonOption = False,
    no_cache: NoCacheOption = False,
) -> None:
    """A repository's tags with their created dates (from each config blob), oldest first."""
    from servewise.inspect.tags import list_tags

    with stored(no_cache) as store:
        listed = list_tags(repo, match=match, platform=platform, insecure=insecure,
                           store=store, deadline=network_deadline(timeout))
    if as_json:
        emit_json(listed.to_dict())
        return
    out().print(_tags_table(listed))


def _tags_table(listed: TagList) -> Table:
    from rich.table import Table
    from rich.text import Text

    table = Table(title=f"{listed.repository} ({listed.platform})", title_justify="left")
    for column in ("tag", "created", "digest"):
        table.add_column(column)
    for tag in listed.tags:
        table.add_row(Text(tag.tag), tag.created or "-",
                      Text(tag.digest or tag.error or "-",
                           style="" if tag.digest else "yellow"))
    return table


@app.command()
def bisect(
    refs: Annotated[list[str], typer.Argument(
        help="A repository without a tag (its tags by date), pypi:NAME without a version "
        "(its versions), or several builds in order.", show_default=False)],
    gpu: OptionalGpuOption = None,
    good: Annotated[str | None, typer.Option(
        "--good", help="A tag, version or REF known to work.", show_default=False)] = None,
    bad: Annotated[str | None, typer.Option(
        "--bad", help="A tag, version or REF known to fail.", show_default=False)] = None,
    match: MatchOption = None,
    require: Annotated[list[str] | None, typer.Option(
        "--require", help="A library that must support the GPU (or, with --jit-arch, must "
        "dispatch to the arch). Repeatable.")] = None,
    model: Annotated[str | None, typer.Option(
        "--model", help="A model whose libraries must support the GPU.",
        show_default=False)] = None,
    jit_arch: Annotated[str | None, typer.Option(
        "--jit-arch", help="Instead of the gate: good when the JIT libraries dispatch to this "
        "arch (e.g. sm_120), as `strings | grep sm120_` would show.",
        show_default=False)] = None,
    platform: PlatformOption = None,
    insecure: InsecureOption = False,
    index_url: IndexUrlOption = None,
    timeout: TimeoutOption = None,
    as_json: JsonOption = False,
    no_cache: NoCacheOption = False,
) -> None:
    """Find the first build that lost (or gained) support, judging as few builds as possible."""
    from servewise.inspect.bisect import Predicate, between
    from servewise.inspect.bisect import bisect as run_bisect
    from servewise.inspect.series import series_for

    device = _catalog_gpu(gpu) if gpu else None
    predicate = Predicate(gpu=device, require=tuple(require or ()), model=model,
                          jit_arch=jit_arch)
    options = source_options(platform, insecure, index_url, timeout)
    with stored(no_cache) as store:
        series = series_for(refs, match=match, options=options, store=store)
        for note in series.notes:
            say("note", "dim", note)
        chosen = between(series.candidates, good, bad)
        if not as_json:
            say("bisect", "cyan", f"{len(chosen)} builds, oldest first {series.order}; "
                f"judging at most {_max(len(chosen))}: {predicate.describe()}")
        result = run_bisect(chosen, predicate, store=store,
                            progress=None if as_json else _show_probe,
                            order=series.order, options=options)
        if not as_json:
            for note in result.notes:
                say("note", "dim", note)
    if as_json:
        emit_json(result.to_dict())
    else:
        _render(result)
    raise typer.Exit(result.exit_code)


def _max(n: int) -> int:
    from servewise.inspect.bisect import max_probes

    return max_probes(n)


def _show_probe(probe: BuildProbe) -> None:

    verdict = "good" if probe.good else "bad"
    units = probe.report.units
    say(verdict, "green" if probe.good else "red",
        f"{probe.candidate.label} ({probe.candidate.created or 'no date'}): {probe.why} "
        f"[{units.kind}s read {units.read}, from the store {units.cached}]")


def _render(result: BisectResult) -> None:
    from rich.table import Table
    from rich.text import Text

    if not result.found:
        first = result.probes[0]
        out().print(Text.assemble(
            ("no change", "bold yellow"),
            f": every judged build is {'good' if first.good else 'bad'} "
            f"({result.predicate})"), highlight=False)
        return
    assert result.before is not None and result.after is not None
    good, bad = (result.before, result.after) if result.direction == "lost" else \
        (result.after, result.before)
    out().print(Text.assemble(("last good ", "green"), _label(good)), highlight=False)
    out().print(Text.assemble(("first bad ", "bold red") if result.direction == "lost"
                              else ("last bad  ", "bold red"), _label(bad)), highlight=False)
    if result.direction == "gained":
        out().print("(support was gained: the newer build is the good one)")
    table = Table(title="what changed", title_justify="left")
    for column in ("library", "change", "verdict", "before", "after"):
        table.add_column(column)
    for change in result.changes:
        verdict = f"{change.verdict_before or '-'} → {change.verdict_after or '-'}"
        table.add_row(Text(change.library), Text(change.summary), Text(verdict),
                      Text(_provenance_text(change.to_dict()["before"])),
                      Text(_provenance_text(change.to_dict()["after"])))
    out().print(table)
    out().print(f"builds judged {len(result.probes)} of {len(result.series)}; layer blobs or "
                f"files read for {result.builds_read}", highlight=False)


def _label(probe: BuildProbe) -> str:
    from servewise.render.builds import candidate_label

    return candidate_label(probe.candidate)


def _provenance_text(data: dict[str, object] | None) -> str:
    if data is None:
        return "absent"
    parts = [f"{data.get('package') or '-'} {data.get('package_version') or ''}".strip()]
    if data.get("bundled_version"):
        parts.append(f"bundled {data['bundled_version']}")
    hashes = data.get("git_hashes")
    if isinstance(hashes, list) and hashes:
        parts.append("git " + ", ".join(str(h) for h in hashes[:2]))
    return "\n".join(parts)
