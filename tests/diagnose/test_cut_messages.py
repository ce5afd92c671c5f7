"""A message cut at any point after its distinctive part still gives its rule (issue 18).

Pasted excerpts stop mid-line. For every cause and symptom rule, the line of its example that
holds a distinctive keyword (14 characters or more) is cut right after the keyword, and 20 and
60 characters later: the rule still fires, from its signature when enough is left, else from
the keyword at the end of the cut error message.
"""

from __future__ import annotations

import pytest

from servewise.diagnose.ruleset import Rule, load_rules
from support.diagnose import run_text

RULES = load_rules()


def _key_line(rule: Rule) -> tuple[list[str], int, int] | None:
    lines = rule.example.strip().splitlines()
    for index, line in enumerate(lines):
        for keyword in rule.keywords:
            if len(keyword) >= 14 and keyword in line:
                return lines, index, line.index(keyword) + len(keyword)
    return None


# The part after the keyword is what tells these apart, so a cut there cannot name them:
# an OOM's phase evidence (MEM002 needs the profiling run's markers and frames) and the sign
# of the KV-cache figure (MEM008: "Available KV cache memory: -2.14 GiB").
# DST004 (a hang at the first collective) is told from DST008 by its SeqNum, after the keyword.
# KRN012 ("No module named '…'") is about the kernel modules it names, which follow the keyword.
AFTER_THE_KEYWORD = {"MEM002", "MEM008", "DST004", "KRN012"}
# Rules marked ``cut = false`` say so in their data: their keyword is generic (``No module
# named``, ``Permission denied``), so a message cut after it must not name them.
CASES = [rule for rule in RULES.rules
         if rule.kind in ("cause", "symptom") and rule.example and _key_line(rule) is not None
         and rule.id not in AFTER_THE_KEYWORD and rule.cut]


def test_most_rules_have_a_distinctive_keyword_in_their_example() -> None:
    assert len(CASES) >= 40
    assert {rule.id for rule in RULES.rules} >= AFTER_THE_KEYWORD


@pytest.mark.parametrize("rule", CASES, ids=lambda r: r.id)
@pytest.mark.parametrize("extra", [0, 20, 60])
def test_a_cut_message_still_gives_its_rule(rule: Rule, extra: int) -> None:
    found = _key_line(rule)
    assert found is not None
    lines, index, end = found
    cut = lines[index][: end + extra]
    run = run_text("\n".join([*lines[:index], cut]))
    assert run.fired(rule.id), (rule.id, cut[-80:])


def test_a_keyword_in_an_info_line_is_not_a_cut_failure() -> None:
    run = run_text("INFO 01-01 00:00:00 [x.py:1] checked: must be divisible by tensor "
                   "parallel size\n")
    # Not a failure of the rule whose keyword it holds; an excerpt with no error and no
    # running server, whose failure (if any) was left out: located where the log stops.
    root = run.diagnosis.root_cause
    assert root is not None and root.category == "root_cause_missing"
    assert [(e.line, e.role) for e in root.evidence] == [(1, "context")]
    assert [f.rule for f in run.diagnosis.findings] == ["SWD002"]


def test_a_generic_keyword_cut_short_names_no_rule() -> None:
    """``No module named '`` is KRN012's keyword, but the module after it decides: an optional
    package, or a message cut before the name, is not a kernel extension never built."""
    for text in ("ModuleNotFoundError: No module named 'bitsand",
                 "ModuleNotFoundError: No module named 'bitsandbytes'"):
        run = run_text(text + "\n")
        assert not run.fired("KRN012"), text

