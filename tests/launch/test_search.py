"""launch/search.py's reading of the command: placeholders are dropped in every spelling."""

from __future__ import annotations

from servewise.launch.search import _without_placeholders


def test_placeholders_are_dropped_in_every_spelling() -> None:
    args = ["m", "--max-model-len", "{value}", "--port={port}", "--x", "1",
            "--max_num_seqs", "{value}", "--enforce-eager"]
    assert _without_placeholders(args) == ["m", "--x", "1", "--enforce-eager"]
