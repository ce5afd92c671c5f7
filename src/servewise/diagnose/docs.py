"""A rule as documentation: its page (Markdown), its JSON, and the index of all rules.

``scripts/gen_diagnose_docs.py`` writes one page per rule under
``docs/diagnose/rules/`` from these functions, and a test checks that the
committed pages equal what the rule files say; ``servewise diagnose explain``
prints the same page.
"""

from __future__ import annotations

from typing import Any

from servewise.diagnose.ruleset import Rule, RuleSet, template_names
from servewise.diagnose.tables import written
from servewise.knowledge._load import public_sources
from servewise.knowledge.flags import load_flag_table

__all__ = ["rule_page", "rule_summary", "rule_to_dict", "rules_index"]


def rule_summary(rule: Rule) -> dict[str, Any]:
    """The short form of a rule, for ``diagnose rules --json``."""
    return {
        "id": rule.id,
        "name": rule.name,
        "kind": rule.kind,
        "category": rule.category,
        "status": rule.status,
        "layer": rule.layer,
        "library": rule.library,
        "engines": list(rule.engines),
        "summary": rule.summary,
    }


def rule_to_dict(rule: Rule) -> dict[str, Any]:
    """Everything a rule says, for ``diagnose explain --json``."""
    return {
        **rule_summary(rule),
        "precedence": rule.precedence,
        "defers_to": list(rule.defers_to),
        "cut": rule.cut,
        "keywords": list(rule.keywords),
        "signatures": [
            {"pattern": written(s.pattern.pattern), "library": s.library, "engine": s.engine}
            for s in rule.signatures
        ],
        "phases": list(rule.phases),
        "evidence_any": [written(p.pattern) for p in rule.evidence_any],
        "evidence_facts": {name: written(p.pattern) for name, p in rule.evidence_facts},
        "exclude": [written(p.pattern) for p in rule.exclude],
        "fields": list(rule.fields),
        "advice": rule.advice,
        "phase": rule.phase,
        "fix": [
            {"text": f.text, "when": list(f.when), "unless": list(f.unless),
             "flags": dict(f.flags), "env": dict(f.env),
             **({"engines": list(f.engines)} if f.engines else {})}
            for f in rule.fixes
        ],
        "related": list(rule.related),
        "explanation": rule.explanation,
        "sources": list(public_sources(rule.sources)),
        "example": rule.example,
    }


def _code(text: str) -> str:
    """Inline code that survives backticks inside."""
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def _fence(text: str, language: str = "") -> list[str]:
    return [f"```{language}", text.rstrip("\n"), "```"]


def _kind_text(rule: Rule) -> str:
    return {
        "cause": "a cause: the earliest one in the failing run is the root cause",
        "symptom": "a symptom: the root cause when alone, but any cause wins over it",
        "wrapper": "a wrapper: a consequence that never is the root cause; a message it quotes "
                   "is classified again",
        "noise": "noise: printed around any exit, never a failure",
        "fallback": "a fallback: what diagnose reports when no rule's cause is in the log",
    }[rule.kind]


def rule_page(rule: Rule, rules: RuleSet) -> str:
    """The Markdown page of one rule."""
    lines = [f"# {rule.id} {rule.name}", "", rule.summary + ".", ""]
    table = [("kind", _kind_text(rule)), ("status", rule.status)]
    if rule.category:
        category = rules.categories.get(rule.category)
        title = f" ({category.title})" if category else ""
        table.append(("category", f"`{rule.category}`{title}"))
    table += [("layer", f"`{rule.layer}`"), ("library", f"`{rule.library}`"),
              ("engines", ", ".join(f"`{e}`" for e in rule.engines))]
    if rule.phases:
        table.append(("only in phases", ", ".join(f"`{p}`" for p in rule.phases)))
    if rule.phase:
        table.append(("names the phase", f"`{rule.phase}`"))
    if rule.precedence:
        table.append(("precedence", str(rule.precedence)))
    if rule.defers_to:
        table.append(("defers to", ", ".join(f"`{c}` a few lines below" for c in rule.defers_to)))
    if rule.advice:
        table.append(("advice", f"`{rule.advice}`"))
    lines += ["| | |", "|---|---|", *(f"| {key} | {value} |" for key, value in table), ""]
    lines += ["## Why", "", rule.explanation.strip(), ""]
    if rule.signatures:
        lines += ["## Signatures", "",
                  "Pre-filter keywords: " + ", ".join(_code(k) for k in rule.keywords) + ".", ""]
        for signature in rule.signatures:
            extra = []
            if signature.library:
                extra.append(f"library `{signature.library}`")
            if signature.engine:
                extra.append(f"engine `{signature.engine}`")
            note = f" ({', '.join(extra)})" if extra else ""
            lines += [f"- {_code(written(signature.pattern.pattern))}{note}"]
        lines.append("")
        if rule.evidence_any or rule.evidence_facts:
            said = [_code(written(p.pattern)) for p in rule.evidence_any]
            where = "the message, a frame's function or a frame's path"
            if rule.evidence_facts:
                said += [f"the run's `{name}` matching {_code(written(p.pattern))}"
                         for name, p in rule.evidence_facts]
                where += ", or a fact the run logged before"
            lines += [f"One of these must match ({where}): " + ", ".join(said) + ".", ""]
        if rule.exclude:
            lines += ["Not when the message matches: "
                      + ", ".join(_code(written(p.pattern)) for p in rule.exclude) + ".", ""]
    if rule.fields:
        lines += ["## Fields", "", ", ".join(f"`{name}`" for name in rule.fields) + ".", ""]
    lines += ["## Fix", ""]
    for step in rule.fixes:
        conditions = []
        if step.when:
            conditions.append("when " + ", ".join(f"`{n}`" for n in step.when) + " known")
        if step.unless:
            conditions.append("unless " + ", ".join(f"`{n}`" for n in step.unless))
        if step.engines:
            conditions.append("for a log of " + ", ".join(f"`{n}`" for n in step.engines))
        suffix = f" *({'; '.join(conditions)})*" if conditions else ""
        lines.append(f"- {step.text}{suffix}")
        for key, value in (*step.flags, *step.env):
            lines.append(f"  - sets {_code(f'{key}={value}' if value else key)}")
    lines.append("")
    spellings = _flag_spellings(rule)
    if spellings:
        lines += ["Flags are written as the log's engine spells them:", "", *spellings, ""]
    if rule.related:
        lines += ["## Related commands", "", *(f"- {_code(c)}" for c in rule.related), ""]
    if rule.example:
        lines += ["## Example", "", *_fence(rule.example.strip("\n"), "text"), ""]
    cited = public_sources(rule.sources) or (
        "servewise's own rule, written from the failure reports of vLLM, SGLang, TGI and "
        "TensorRT-LLM users; no single public thread pins it",)
    lines += ["## Sources", "", *(f"- {source}" for source in cited), ""]
    return "\n".join(lines)


def _flag_spellings(rule: Rule) -> list[str]:
    """One line per ``{flag_…}`` of the fix steps: how vLLM and SGLang spell it."""
    texts = [step.text for step in rule.fixes]
    texts += [key for step in rule.fixes for key, _ in step.flags]
    settings = dict.fromkeys(name.removeprefix("flag_") for text in texts
                             for name in sorted(template_names(text), key=text.find)
                             if name.startswith("flag_"))
    table = load_flag_table()
    lines = []
    for setting in settings:
        spelled = []
        for engine, name in (("vllm", "vLLM"), ("sglang", "SGLang")):
            found = table.nearest_spelling(setting, engine)
            if found is None:
                spelled.append(f"{name} has none")
            else:
                flag, counterpart = found
                spelled.append(f"{name} {_code(flag.name)}"
                               + (" (its counterpart)" if counterpart else ""))
        lines.append(f"- {_code('{flag_' + setting + '}')}: {', '.join(spelled)}")
    return lines


def rules_index(rules: RuleSet) -> str:
    """The Markdown index of every rule."""
    lines = ["# Diagnose rules", "",
             "Generated from `src/servewise/knowledge/data/diagnose/*.toml` by "
             "`scripts/gen_diagnose_docs.py`; do not edit by hand.", "",
             "| id | name | kind | category | layer | status |", "|---|---|---|---|---|---|"]
    for rule in rules.rules:
        lines.append(f"| [{rule.id}]({rule.id}.md) | {rule.name} | {rule.kind} | "
                     f"{rule.category or '—'} | {rule.layer} | {rule.status} |")
    lines += ["", "## Categories", "", "| id | title | section | new |", "|---|---|---|---|"]
    for category in rules.categories.values():
        lines.append(f"| `{category.id}` | {category.title} | {category.section} | "
                     f"{'yes: ' + category.notes if category.new else ''} |")
    lines.append("")
    return "\n".join(lines)


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def signal_tables_page(rules: RuleSet) -> str:
    """The knowledge tables as one page: each entry, what finds it, what it names, its source."""
    lines = ["# Knowledge tables of general failure signals", "",
             "Generated from `src/servewise/knowledge/data/diagnose_signals/*.toml` by "
             "`scripts/gen_diagnose_docs.py`. An entry with a category names the cause (a rule "
             "written for the message wins over it); one without only explains an unclassified "
             "error: what its code means and what to collect next.", ""]
    for table in rules.signal_tables:
        lines += [f"## {table.title} (`{table.name}`)", ""]
        lines += ["| id | code | found by | category | library | source |",
                  "|---|---|---|---|---|---|"]
        for signal in table.signals:
            found = [*signal.names, *(f"'{m}'" for m in signal.messages)] or [
                _code(written(p.pattern)) for p in signal.patterns[:2]]
            sources = " ".join(f"[{n + 1}]({s})" for n, s in enumerate(signal.sources))
            lines.append(
                f"| `{signal.id}` | {signal.code if signal.code is not None else ''} | "
                f"{_cell(', '.join(found))} | {signal.category or '(explains)'} | "
                f"{signal.library} | {sources} |")
        lines.append("")
    return "\n".join(lines)
