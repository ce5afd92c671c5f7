"""``servewise report RUN_ID``: the whole evidence trail of one launch as one page.

:func:`gather` collects it from the store (the launch, the check answer and prediction it
kept, a search's attempts, the benchmark runs against it, the user recipe saved from it);
:func:`render_report` writes Markdown or HTML with every plot embedded as an SVG data URI
(Markdown) or inline SVG (HTML), so the page is one self-contained file.
"""

from __future__ import annotations

import base64
import html
import io
import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from servewise.errors import UsageError
from servewise.render.evidence import figure_text, percent
from servewise.store import Store

__all__ = ["gather", "render_report"]


def _stamp(run_id: str) -> datetime | None:
    found = re.search(r"(\d{8}-\d{6})", run_id)
    return datetime.strptime(found.group(1), "%Y%m%d-%H%M%S") if found else None


def _benches(store: Store, launch: dict[str, Any], given: Sequence[str] | None
             ) -> list[dict[str, Any]]:
    if given:
        found = []
        for ident in given:
            document = store.bench_run(ident)
            if document is None:
                raise UsageError(f"no benchmark run {ident!r} in the store", found=ident,
                                 hint="`servewise runs` lists the benchmark runs")
            found.append(document)
        return found
    port, started = launch.get("port"), _stamp(str(launch.get("run_id")))
    chosen = []
    for document in store.bench_runs(200):
        when = _stamp(str(document.get("run_id")))
        if port and f":{port}" in str(document.get("url")) and (
                started is None or when is None or when >= started):
            chosen.append(document)
    return list(reversed(chosen))


def gather(store: Store, run_id: str, benches: Sequence[str] | None = None) -> dict[str, Any]:
    """The trail of launch (or search) ``run_id``: a JSON-ready document."""
    search = store.search(run_id)
    attempts: list[dict[str, Any]] = []
    if search is not None:
        attempts = store.launches(search_id=run_id)
        ready = [a for a in attempts if a.get("outcome") == "ready"]
        launch = ready[-1] if ready else (attempts[-1] if attempts else None)
    else:
        launch = store.launch(run_id)
    if launch is None:
        raise UsageError(f"no launch or search {run_id!r} in the store", found=run_id,
                         hint="`servewise runs` lists the launches and their ids")
    documents = _benches(store, launch, benches)
    plots: dict[str, str] = {}
    for document in documents:
        svg = _bench_svg(document, store.bench_requests(str(document.get("run_id"))))
        if svg is not None:
            plots[str(document.get("run_id"))] = svg
    evidence_svg = _evidence_svg(launch)
    if evidence_svg is not None:
        plots["evidence"] = evidence_svg
    from servewise.recipes import load_recipes
    from servewise.recipes.save import read_evidence

    recipe = None
    for candidate in load_recipes().all():
        trail = read_evidence(candidate)
        if trail is not None and trail.get("run_id") == launch.get("run_id"):
            recipe = {"id": candidate.id, "file": candidate.file, "status": candidate.status,
                      "recipe": candidate.to_dict()}
    return {"launch": launch, "search": search, "attempts": attempts,
            "benchmarks": documents, "recipe": recipe, "plots": plots}


def _svg(figure: Any) -> str:
    from matplotlib import pyplot

    buffer = io.StringIO()
    try:
        figure.savefig(buffer, format="svg")
    finally:
        pyplot.close(figure)
    return buffer.getvalue()


def _bench_svg(document: dict[str, Any], records: list[dict[str, Any]]) -> str | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
    except ImportError:
        return None
    import tempfile
    from pathlib import Path

    from servewise.bench.plot import write_plot

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "plot.svg"
        write_plot(document, records, path)
        return path.read_text("utf-8")


def _evidence_svg(launch: dict[str, Any]) -> str | None:
    rows = [row for row in ((launch.get("evidence") or {}).get("comparison") or [])
            if row.get("relative_error") is not None]
    if not rows:
        return None
    try:
        import matplotlib

        matplotlib.use("Agg")
        from matplotlib import pyplot
    except ImportError:
        return None
    figure, axis = pyplot.subplots(figsize=(8, 0.5 + 0.45 * len(rows)))
    labels = [row["label"] for row in rows]
    errors = [100 * float(row["relative_error"]) for row in rows]
    colors = ["tab:red" if abs(e) > 5 else "tab:green" for e in errors]
    axis.barh(labels, errors, color=colors)
    axis.axvline(0, color="black", linewidth=0.8)
    for limit in (-5, 5):
        axis.axvline(limit, color="grey", linestyle="--", linewidth=0.8)
    axis.set_xlabel("predicted / observed - 1 (%)")
    axis.set_title("the plan against the engine's log")
    figure.tight_layout()
    return _svg(figure)


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    def cell(value: Any) -> str:
        return str(value).replace("|", "\\|").replace("\n", " ")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return [*lines, ""]


def _image(name: str, svg: str) -> list[str]:
    data = base64.b64encode(svg.encode()).decode()
    return [f"![{name}](data:image/svg+xml;base64,{data})", ""]


def _check_part(prediction: dict[str, Any]) -> list[str]:
    check = prediction.get("check")
    lines = ["## Check", ""]
    if not check:
        lines += [f"No saved check answer: the prediction is {prediction.get('from') or 'none'}.",
                  ""]
        return lines
    gate = check.get("gate") or {}
    lines += [f"- will start: **{check.get('will_start')}**",
              f"- recipe: {check.get('recipe') or 'none'} ({check.get('recipe_status') or '-'})",
              f"- gate: {'passed' if gate.get('passed') else 'not run' if not gate else 'FAILED'}",
              ""]
    findings = check.get("findings") or []
    if findings:
        lines += _table(("part", "level", "finding"),
                        [(f.get("part"), f.get("level"), f.get("message")) for f in findings])
    return lines


def _markdown(trail: dict[str, Any]) -> str:
    launch = trail["launch"]
    prediction = launch.get("prediction") or {}
    evidence = launch.get("evidence") or {}
    lines = [f"# servewise report: {launch.get('run_id')}", "",
             f"- command: `{' '.join(launch.get('argv') or [])}`",
             f"- engine: {launch.get('engine')} "
             f"{(evidence.get('observed') or {}).get('engine_version') or ''}".rstrip(),
             f"- outcome: **{launch.get('outcome')}** — {launch.get('message')}",
             f"- time to ready: {figure_text(launch.get('time_to_ready_s'))} s", ""]
    lines += _check_part(prediction)
    plan = prediction.get("plan") or {}
    lines += ["## Plan", "", f"- source: {prediction.get('from') or 'no prediction'}",
              f"- layout: {plan.get('layout') or '-'}, engine version "
              f"{prediction.get('engine_version') or '-'}", ""]
    lines += ["## Predicted against observed", ""]
    comparison = evidence.get("comparison") or []
    if comparison:
        lines += _table(("figure", "unit", "predicted", "observed", "error"),
                        [(r["label"], r.get("unit", ""), figure_text(r.get("predicted")),
                          figure_text(r.get("observed")), percent(r.get("relative_error")))
                         for r in comparison])
    else:
        lines += ["Observed only: " + ", ".join(
            f"{k} = {figure_text(v)}" for k, v in (evidence.get("observed") or {}).items()), ""]
    for finding in evidence.get("findings") or []:
        lines += [f"> **Finding ({finding.get('part')})**: {finding.get('message')}", ""]
    if "evidence" in trail["plots"]:
        lines += _image("predicted against observed", trail["plots"]["evidence"])
    if trail.get("attempts"):
        lines += ["## Search attempts", ""]
        lines += _table(("run", "outcome", "ready s", "KV tokens"),
                        [(a.get("run_id"), a.get("outcome"), figure_text(a.get("time_to_ready_s")),
                          figure_text((a.get("kv_numbers") or {}).get("kv_cache_tokens")))
                         for a in trail["attempts"]])
    lines += ["## Benchmarks", ""]
    if not trail["benchmarks"]:
        lines += ["No benchmark run against this launch.", ""]
    for bench in trail["benchmarks"]:
        lines += [f"### {bench.get('run_id')} ({bench.get('url')})", ""]
        lines += _table(("load", "ISL", "OSL", "TTFT p50 ms", "TPOT p50 ms", "tok/s/GPU",
                         "out tok/s/GPU"), [
            (w.get("max_concurrency", w.get("request_rate")), w.get("isl"), w.get("osl"),
             figure_text((e.get("ttft_ms") or {}).get("p50")),
             figure_text((e.get("tpot_ms") or {}).get("p50")),
             figure_text(e.get("tokens_per_sec_per_gpu")),
             figure_text(e.get("output_tokens_per_sec_per_gpu")))
            for e in bench.get("results") or [] for w in [e.get("workload") or {}]])
        svg = trail["plots"].get(str(bench.get("run_id")))
        if svg is not None:
            lines += _image(f"benchmark {bench.get('run_id')}", svg)
    lines += ["## Recipe", ""]
    recipe = trail.get("recipe")
    lines += [f"Saved as `{recipe['id']}` ({recipe['status']}) in `{recipe['file']}`."
              if recipe else f"None saved yet: `servewise recipe save {launch.get('run_id')} "
              "--gpu NAME:COUNT`.", ""]
    return "\n".join(lines)


def _html(markdown: str) -> str:
    """The Markdown page as plain HTML: headings, lists, tables, quotes, images inline."""
    body: list[str] = []
    table: list[list[str]] = []

    def flush() -> None:
        if table:
            head, rows = table[0], table[2:]
            body.append("<table><tr>" + "".join(f"<th>{c}</th>" for c in head) + "</tr>"
                        + "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>"
                                  for row in rows) + "</table>")
            table.clear()

    for line in markdown.splitlines():
        if line.startswith("|"):
            table.append([html.escape(c.strip().replace("\\|", "|"))
                          for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]])
            continue
        flush()
        image = re.match(r"!\[(.*)\]\(data:image/svg\+xml;base64,(.*)\)$", line)
        if image:
            body.append(f"<figure>{base64.b64decode(image.group(2)).decode()}"
                        f"<figcaption>{html.escape(image.group(1))}</figcaption></figure>")
        elif line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            body.append(f"<h{level}>{html.escape(line[level:].strip())}</h{level}>")
        elif line.startswith("- "):
            body.append(f"<li>{_inline(line[2:])}</li>")
        elif line.startswith("> "):
            body.append(f"<blockquote>{_inline(line[2:])}</blockquote>")
        elif line.strip():
            body.append(f"<p>{_inline(line)}</p>")
    flush()
    return ("<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>servewise report"
            "</title><style>body{font-family:sans-serif;max-width:70em;margin:auto}"
            "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px}"
            "</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")


def _inline(text: str) -> str:
    escaped = html.escape(text)
    escaped = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", escaped)
    return re.sub(r"`(.+?)`", r"<code>\1</code>", escaped)


def render_report(trail: dict[str, Any], format: str) -> str:
    """The page: ``markdown`` or ``html``."""
    page = _markdown(trail)
    return _html(page) if format == "html" else page + "\n"
