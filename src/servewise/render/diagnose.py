"""Human output of ``servewise diagnose``: the root cause, its evidence and fix; rule tables."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from servewise.diagnose.result import Diagnosis, Finding
from servewise.diagnose.ruleset import RuleSet

_VALUE_LIMIT = 120


def _value(value: object) -> str:
    if isinstance(value, list):
        value = ", ".join(str(item) for item in value)
    text = str(value)
    return text if len(text) <= _VALUE_LIMIT else text[: _VALUE_LIMIT - 1] + "…"


def finding_view(finding: Finding, *, title: str) -> RenderableType:
    """One finding: headline, culprit, evidence, values, fix, related commands."""
    parts: list[RenderableType] = []
    head = Text.assemble((f"{title}: ", "bold red"), (finding.category, "bold"),
                         f"  ({finding.rule} {finding.rule_name}, confidence "
                         f"{finding.confidence:.2f})")
    parts.append(head)
    parts.append(Text(finding.summary + "."))
    culprit = Text.assemble(("library ", "dim"), finding.library or "—", ("   layer ", "dim"),
                            finding.layer)
    if finding.occurrences > 1 or len(finding.processes) > 1:
        culprit.append(f"   seen {finding.occurrences} times in "
                       f"{', '.join(p or 'main' for p in finding.processes[:6])}", style="dim")
    parts.append(culprit)
    if finding.evidence:
        parts.append(Text("evidence", style="bold"))
        for item in finding.evidence:
            line = Text(f"  L{item.line:<6} ", style="dim")
            if item.process:
                line.append(f"[{item.process}] ", style="cyan")
            if item.role != "match":
                line.append(f"({item.role}) ", style="dim")
            line.append(item.text)
            parts.append(line)
    shown = {k: v for k, v in finding.extracted.items() if k not in ("error",)}
    if shown:
        parts.append(Text("values", style="bold"))
        for key, value in shown.items():
            parts.append(Text.assemble(f"  {key} = ", (_value(value), "green")))
    if finding.fix.steps:
        parts.append(Text("fix", style="bold"))
        for number, step in enumerate(finding.fix.steps, 1):
            parts.append(Text(f"  {number}. {step}"))
        for key, value in (*finding.fix.flags, *finding.fix.env):
            parts.append(Text(f"     {key} {value}".rstrip(), style="green"))
    if finding.related:
        parts.append(Text("related", style="bold"))
        for command in finding.related:
            parts.append(Text(f"  {command}"))
    if finding.why:
        parts.append(Text("why this confidence", style="bold"))
        for reason in finding.why:
            parts.append(Text(f"  - {reason}", style="dim"))
    triage = finding.triage
    if triage is not None:
        parts.append(Text("triage", style="bold"))
        parts.append(Text.assemble(("  problem  ", "dim"), triage.problem_class))
        parts.append(Text.assemble(("  signal   ", "dim"), f"L{triage.root_line} ",
                                   triage.signal[:_VALUE_LIMIT]))
        lines = ", ".join(f"L{n}" for n in triage.evidence_lines)
        parts.append(Text.assemble(("  cites    ", "dim"), lines or "—"))
        for reason in triage.ruled_out:
            parts.append(Text.assemble(("  ruled out ", "dim"), reason))
        parts.append(Text.assemble(("  collect  ", "dim"), triage.collect))
        parts.append(Text.assemble(("  risk     ", "dim"), triage.risk))
    return Group(*parts)


def diagnosis_view(diagnosis: Diagnosis, source: str) -> RenderableType:
    """The whole diagnosis: the root cause in full, the other findings in one line each."""
    root = diagnosis.root_cause
    if root is None:
        head = Text(f"No failure found in {source} ({diagnosis.lines} lines).", style="green")
        if not diagnosis.findings:
            return head
        parts_ok: list[RenderableType] = [head, Text(
            f"{len(diagnosis.findings)} request(s) failed while the server kept serving:",
            style="bold")]
        for finding in diagnosis.findings:
            text = finding.evidence[0].text if finding.evidence else finding.summary
            parts_ok.append(Text(f"  L{finding.first_line:<6} {finding.category}: {text}"))
        if diagnosis.findings[0].fix.steps:
            parts_ok.append(Text(f"  {diagnosis.findings[0].fix.steps[0]}", style="dim"))
        return Group(*parts_ok)
    parts: list[RenderableType] = [finding_view(root, title="root cause")]
    others = [f for f in diagnosis.findings if f is not root]
    if others:
        parts.append(Text("other findings", style="bold"))
        for finding in others:
            parts.append(Text(f"  L{finding.first_line:<6} {finding.category} ({finding.rule}, "
                              f"{finding.library or '—'}, confidence {finding.confidence:.2f})"))
    return Group(*parts)


def _md(text: str) -> str:
    """Text for a markdown line: no line breaks, pipes escaped for tables."""
    return " ".join(text.split()).replace("|", "\\|")


def diagnosis_markdown(diagnosis: Diagnosis, source: str) -> str:
    """The diagnosis as markdown for an issue or a ticket: the triage contract first."""
    root = diagnosis.root_cause
    if root is None:
        lines = [f"**No failure found** in `{source}` ({diagnosis.lines} lines)."]
        for finding in diagnosis.findings:
            lines.append(f"- L{finding.first_line}: {finding.category}: {_md(finding.summary)}")
        return "\n".join(lines) + "\n"
    triage = root.triage
    out = [f"## servewise diagnose: `{root.category}`", "",
           f"**{_md(root.summary)}**", "",
           "| | |", "|---|---|",
           f"| problem | {_md(triage.problem_class if triage else root.category)} |",
           f"| library / layer | `{root.library or '—'}` / {root.layer} |",
           f"| rule | `{root.rule}` {root.rule_name} |",
           f"| confidence | {root.confidence:.2f} |"]
    if triage is not None:
        out.append(f"| strongest signal | line {triage.root_line}: `{_md(triage.signal)[:200]}` |")
        out.append("| lines cited | " + ", ".join(str(n) for n in triage.evidence_lines)
                   + " |")
    out += ["", "### Evidence", ""]
    for item in root.evidence:
        who = f" [{item.process}]" if item.process else ""
        out.append(f"- L{item.line}{who} ({item.role}): `{_md(item.text)[:300]}`")
    out += ["", "### Fix", ""]
    out += [f"{n}. {_md(step)}" for n, step in enumerate(root.fix.steps, 1)] or ["(none)"]
    for key, value in (*root.fix.flags, *root.fix.env):
        out.append(f"   - `{key} {value}`".rstrip())
    if triage is not None:
        out += ["", "### Triage", ""]
        out.append(f"- **Collect next:** {_md(triage.collect)}")
        out.append(f"- **Risk of the fix:** {_md(triage.risk)}")
        for reason in triage.ruled_out:
            out.append(f"- **Ruled out:** {_md(reason)}")
    if root.why:
        out += ["", "### Why this confidence", ""]
        out += [f"- {_md(reason)}" for reason in root.why]
    return "\n".join(out) + "\n"


def rules_table(rules: RuleSet) -> Table:
    """Every rule: id, name, kind, category, layer, status."""
    table = Table(title=f"{len(rules)} diagnose rules", title_justify="left")
    for column in ("id", "name", "kind", "category", "layer", "status"):
        table.add_column(column)
    for rule in rules.rules:
        table.add_row(rule.id, rule.name, rule.kind, rule.category or "—", rule.layer,
                      rule.status)
    return table
