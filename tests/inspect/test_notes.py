"""Notes are summarized for people (a count and examples) and kept whole in JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from servewise.cli import run
from servewise.inspect.report import summarize_notes


def test_a_reason_shared_by_many_files_is_one_line() -> None:
    notes = [f"pkg/lib{i}.so: not an ELF file, skipped" for i in range(1000)]
    notes += ["the wheel was streamed once", "a.so: ELF without GPU code servewise can read, "
              "skipped"]
    lines = summarize_notes(notes)
    assert lines == [
        "1000 files: not an ELF file, skipped (e.g. pkg/lib0.so, pkg/lib1.so, pkg/lib2.so; "
        "--json lists every one)",
        "the wheel was streamed once",
        "a.so: ELF without GPU code servewise can read, skipped",
    ]


def test_a_few_notes_stay_as_they_are() -> None:
    notes = [f"lib{i}.so: not an ELF file, skipped" for i in range(5)]
    assert summarize_notes(notes) == notes


def test_gate_on_thousands_of_non_elf_files_prints_a_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SERVEWISE_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "site-packages" / "pkg"
    folder.mkdir(parents=True)
    for i in range(2000):
        (folder / f"lib{i}.so").write_bytes(b"not an ELF file")
    run(["gate", str(tmp_path / "site-packages"), "--gpu", "h200", "--no-cache"])
    err = capsys.readouterr().err
    notes = [line for line in err.splitlines() if line.startswith("note:")]
    assert len(notes) == 1
    assert notes[0].startswith("note: 2000 files: not an ELF file, skipped (e.g. pkg/lib")
    run(["gate", str(tmp_path / "site-packages"), "--gpu", "h200", "--no-cache", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert len(data["notes"]) == 2000
