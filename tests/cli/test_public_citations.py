"""What ``plan``, ``model`` and ``gpus`` print cites public sources, never the project's notes.

``seeds/…`` and ``research/…`` are files of the servewise project that a user of the
package does not have; every bundled card, planned with each engine, in text and JSON,
must cite only what a user can open (URLs, ``owner/repo#N``, measurements).
"""

from __future__ import annotations

import re

import pytest

from servewise.cli import run
from servewise.knowledge.cards import card_index

INTERNAL = re.compile(r"\b(?:seeds|research)/[\w.-]+")
CARDS = [card.id for card in card_index()]


@pytest.mark.parametrize("card", CARDS)
def test_plan_and_model_cite_no_project_notes(card: str, capsys: pytest.CaptureFixture[str]
                                              ) -> None:
    for argv in (["model", card, "--json"], ["model", card],
                 ["plan", card, "--gpu", "h200:8", "--json"],
                 ["plan", card, "--gpu", "h200:8", "--engine", "sglang", "--json"],
                 ["plan", card, "--gpu", "h200:8", "--engine", "sglang"]):
        run(argv)
        captured = capsys.readouterr()
        assert INTERNAL.findall(captured.out + captured.err) == [], argv


def test_the_gpu_catalog_cites_no_project_notes(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["gpus", "--json"], ["gpus"]):
        run(argv)
        captured = capsys.readouterr()
        assert INTERNAL.findall(captured.out + captured.err) == [], argv


def test_diagnose_explain_cites_no_project_notes(capsys: pytest.CaptureFixture[str]) -> None:
    from servewise.diagnose.ruleset import load_rules

    for rule in load_rules().rules:
        for argv in (["diagnose", "explain", rule.id], ["diagnose", "explain", rule.id,
                                                        "--json"]):
            run(argv)
            captured = capsys.readouterr()
            assert INTERNAL.findall(captured.out + captured.err) == [], argv
