"""Text and Markdown for ``servewise check`` (plain strings: the report is pasted into issues)."""

from __future__ import annotations

import re
import textwrap
from typing import Any

from servewise.check.report import PARTS

GIB = 2**30
WIDTH = 100
"""Text lines wrap at this many columns (a word longer than the room, a URL, is kept whole)."""
_INDENT = " " * 18
_MARK = {"ok": "ok", "note": "note", "warning": "WARN", "error": "FAIL"}
_TITLES = {"build": "Build (kernel gate)", "recipe": "Recipe", "rules": "Model rules",
           "settings": "Settings", "memory": "Memory plan", "pitfalls": "GPU pitfalls"}


def _headline(report: dict[str, Any]) -> str:
    gpu = report["gpu"]
    verdict = "WILL START" if report["will_start"] else "WILL NOT START"
    if report["engine_version"]:
        version = f"{report['engine_version']}, from {report['engine_version_from']}"
    else:
        version = "no version given: --engine-version or --build names one"
    return (f"{verdict}: {report['model']} on {gpu['count']} x {gpu['name']} with "
            f"{report['engine']} ({version})")


def check_text(report: dict[str, Any], *, verbose: bool = False) -> str:
    """The human form: headline, findings, what to change, the command.

    Passing checks of the build, the model rules and the pitfalls are summed up in one line
    unless ``verbose``; the recipe and the memory plan are always shown.
    """
    lines = [_headline(report), ""]
    folded = [f for f in report["findings"]
              if f["level"] == "ok" and f["part"] in ("build", "rules", "pitfalls")]
    if folded and not verbose:
        counts: dict[str, int] = {}
        for finding in folded:
            counts[finding["part"]] = counts.get(finding["part"], 0) + 1
        summary = ", ".join(f"{part} ({n})" if n > 1 else part for part, n in counts.items())
        lines.append(f"  {'ok':<5} {'checks':<9} {summary} passed (--verbose lists them)")
    for finding in report["findings"]:
        if finding in folded and not verbose:
            continue
        lines += _wrap(finding["message"],
                       f"  {_MARK[finding['level']]:<5} {finding['part']:<9} ", _INDENT)
        if finding.get("quote"):
            lines += _wrap(f"{report['engine']} says: \"{finding['quote']}\"",
                           _INDENT + "| ", _INDENT + "| ")
        if finding["fix"] and finding["level"] in ("error", "warning", "note"):
            lines += _wrap(finding["fix"], _INDENT + "-> ", _INDENT + "   ")
    problems = report["problems"]
    if problems:
        lines += ["", "What to change:"]
        for problem in problems:
            lines += _wrap(problem["fix"] or problem["message"], "  - ", "    ")
    if problems and not verbose:
        lines += ["", "(the command is left out until these are fixed; --verbose or --json "
                  "shows it)"]
    else:
        lines += ["", f"Command ({report['command']['format']}):", "",
                  report["command"]["shell"]]
    return "\n".join(lines).rstrip() + "\n"


def _wrap(text: str, first: str, rest: str) -> list[str]:
    """``text`` in lines of at most :data:`WIDTH` columns, ``first`` before the first line and
    ``rest`` before the others; URLs and other long words are never broken."""
    return textwrap.wrap(text, WIDTH, initial_indent=first, subsequent_indent=rest,
                         break_long_words=False, break_on_hyphens=False) or [first.rstrip()]


_TICKS = re.compile(r"`+")


def code_span(text: str) -> str:
    """``text`` as one Markdown code span, whatever backticks it holds (CommonMark: the
    fence is one backtick longer than the longest run inside, padded with a space when the
    text starts or ends with a backtick)."""
    longest = max((len(run) for run in _TICKS.findall(text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _md_fix(fix: str) -> str:
    """A fix in Markdown: flags (``--max-model-len 35776``) as code; a sentence, which may
    hold code spans of its own, as written."""
    if fix.startswith("-") and "`" not in fix:
        return code_span(fix)
    return fix


def check_markdown(report: dict[str, Any]) -> str:
    """A Markdown report to paste into an issue or a runbook."""
    lines = [f"## servewise check: {_headline(report)}", ""]
    gpu = report["gpu"]
    lines += ["| | |", "|---|---|",
              f"| model | `{report['model']}` |",
              f"| GPUs | {gpu['count']} x {gpu['name']} ({gpu['memory_bytes'] / GIB:.2f} GiB, "
              f"{gpu['memory_source']}) |",
              f"| engine | {report['engine']} {report['engine_version'] or ''} |"]
    recipe = report.get("recipe")
    if recipe:
        lines.append(f"| recipe | `{recipe['id']}` ({recipe['status']}) |")
    plan = report.get("plan")
    if plan:
        startup = plan["startup"]
        lines.append(f"| KV cache | {startup['kv_cache_tokens']:,} tokens, max concurrency "
                     f"{startup['max_concurrency']} (requests of max_model_len) |")
    lines.append("")
    for part in PARTS:
        found = [f for f in report["findings"] if f["part"] == part]
        if not found:
            continue
        lines += [f"### {_TITLES[part]}", ""]
        for finding in found:
            text = f"- **{_MARK[finding['level']]}** {finding['message']}"
            if finding.get("quote"):
                text += f" ({report['engine']} says: {code_span(finding['quote'])})"
            if finding["fix"] and finding["level"] != "ok":
                text += f" — fix: {_md_fix(finding['fix'])}"
            if finding["source"]:
                text += f" ([source]({finding['source']}))" if finding["source"].startswith(
                    "http") else f" (source: {finding['source']})"
            lines.append(text)
        lines.append("")
    shell = report["command"]["shell"].rstrip()
    fence = "`" * max(3, 1 + max((len(run) for run in _TICKS.findall(shell)), default=0))
    lines += [f"### Command ({report['command']['format']})", "", f"{fence}sh", shell, fence,
              ""]
    return "\n".join(lines)
