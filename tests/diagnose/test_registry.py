"""Every rule against every rule fixture: positives give their rule, no negative fires it."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from servewise.diagnose.ruleset import Rule, load_rules
from support.diagnose import RULE_FIXTURES, Run, run_file

RULES = load_rules()
FIXTURES = sorted(RULE_FIXTURES.glob("*/*.log"))


@cache
def _run(path: Path) -> Run:
    return run_file(path)


def test_every_rule_has_a_positive_and_a_negative_fixture() -> None:
    folders = {path.name for path in RULE_FIXTURES.iterdir() if path.is_dir()}
    assert folders == {rule.id for rule in RULES.rules}
    for rule in RULES.rules:
        assert (RULE_FIXTURES / rule.id / "positive.log").is_file(), rule.id
        assert (RULE_FIXTURES / rule.id / "negative.log").is_file(), rule.id


def _expect_positive(rule: Rule, run: Run) -> None:
    diagnosis = run.diagnosis
    if rule.kind in ("cause", "symptom"):
        assert diagnosis.root_cause is not None, rule.id
        assert diagnosis.root_cause.rule == rule.id, (rule.id, diagnosis.root_cause.rule)
        assert diagnosis.root_cause.category == rule.category
        assert diagnosis.exit_code == 1
    elif rule.kind == "fallback":
        assert diagnosis.root_cause is not None and diagnosis.root_cause.rule == rule.id
    elif rule.kind == "wrapper":
        assert run.fired(rule.id), rule.id
        # A wrapper never is the root cause: alone, the cause is missing from the excerpt;
        # when it quotes a message, that message (classified again) is.
        root = diagnosis.root_cause
        assert root is not None and root.rule != rule.id
        quoted = any(m.inner for m in run.matches if m.rule is not None and m.rule.id == rule.id)
        if quoted:
            assert any(item.role == "quoted" for item in root.evidence), rule.id
        else:
            assert root.category == "root_cause_missing", rule.id
    else:
        assert run.fired(rule.id), rule.id
        assert diagnosis.root_cause is None, (rule.id, diagnosis.root_cause)


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_all_rules_on_fixture(path: Path) -> None:
    run = _run(path)
    owner = RULES.get(path.parent.name)
    assert owner is not None
    if path.stem == "positive":
        _expect_positive(owner, run)
    else:
        if owner.kind == "fallback":
            root = run.diagnosis.root_cause
            assert root is None or root.rule != owner.id
        else:
            assert not run.fired(owner.id), f"{owner.id} fired on its near miss"
    # No other rule's positive expectation is violated by this fixture: a wrapper never wins.
    root = run.diagnosis.root_cause
    if root is not None:
        assert RULES.get(root.rule) is not None
        assert RULES.get(root.rule).kind in ("cause", "symptom", "fallback")  # type: ignore[union-attr]


@pytest.mark.parametrize("rule", [r for r in RULES.rules if r.example], ids=lambda r: r.id)
def test_rule_example_fires_its_rule(rule: Rule) -> None:
    from support.diagnose import run_text

    run = run_text(rule.example)
    assert run.fired(rule.id), rule.id
