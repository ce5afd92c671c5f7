"""Offline, a model without weight files is planned from its config (issue 28, item 5): a
config-only bundled card (Qwen/Qwen3-8B), a folder with config.json alone, a user card; an
unbundled Hub id says how to give the config. The weights are said to be computed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from servewise.cli import run
from servewise.knowledge.cards import card_document

QWEN3_8B = "Qwen/Qwen3-8B"


@pytest.fixture(autouse=True)
def _offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import constants

    monkeypatch.setenv("SERVEWISE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("SERVEWISE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)


def _check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, object]]:
    code = run(["check", "--json", *args])
    return code, json.loads(capsys.readouterr().out)


def _computed(report: dict[str, object]) -> str:
    findings = report["findings"]
    assert isinstance(findings, list)
    notes = [f["message"] for f in findings if "computed from config.json" in f["message"]]
    assert len(notes) == 1
    return str(notes[0])


def _qwen3_8b_config() -> dict[str, object]:
    config = card_document("qwen3-8b")["config"]
    assert isinstance(config, dict)
    return config


def test_qwen3_8b_offline_is_planned_from_its_bundled_config(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, report = _check(capsys, QWEN3_8B, "--gpu", "h100:1")
    assert code == 0
    assert report["model"] == QWEN3_8B
    note = _computed(report)
    assert "not read" in note and "15.3 GiB" in note and "3.8 %" in note


def test_a_folder_with_config_json_alone_is_planned(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    folder = tmp_path / "qwen3-8b"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(_qwen3_8b_config()), "utf-8")
    code, report = _check(capsys, str(folder), "--gpu", "l4:1", "--max-model-len", "8k")
    assert code == 0, report
    _computed(report)
    plan = report["plan"]
    assert isinstance(plan, dict) and plan["startup"]["weights_bytes_per_gpu"] > 15 * 2**30


def test_a_user_card_works_offline(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    card = tmp_path / "data" / "cards" / "my-org--My-Qwen"
    card.mkdir(parents=True)
    (card / "config.json").write_text(json.dumps(_qwen3_8b_config()), "utf-8")
    code, report = _check(capsys, "my-org/My-Qwen", "--gpu", "h100:1")
    assert code == 0, report
    assert report["model"] == "my-org/My-Qwen"
    _computed(report)


def test_an_unbundled_model_offline_says_how_to_give_its_config(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, error = _check(capsys, "Qwen/Qwen2.5-7B-Instruct", "--gpu", "h100:1")
    assert code != 0
    hint = str(error.get("hint"))
    assert "huggingface.co/Qwen/Qwen2.5-7B-Instruct/resolve/main/config.json" in hint
    assert "cards/Qwen--Qwen2.5-7B-Instruct/config.json" in hint
    assert "has no *.safetensors" not in str(error.get("message"))


def test_a_family_that_cannot_be_computed_asks_for_the_headers(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    folder = tmp_path / "dsv4"
    folder.mkdir()
    (folder / "config.json").write_text(
        json.dumps(card_document("deepseek-v4-flash")["config"]), "utf-8")
    code, error = _check(capsys, str(folder), "--gpu", "h200:8")
    assert code != 0
    assert "cannot be computed" in str(error["message"])
    assert "safetensors" in str(error.get("hint"))
