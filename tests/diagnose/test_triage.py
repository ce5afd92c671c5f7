"""Every answer is located and carries the triage contract, in text, JSON and markdown."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from servewise.cli import app
from servewise.diagnose import diagnose_text
from servewise.diagnose.result import Diagnosis
from servewise.render.diagnose import diagnosis_markdown

OOM = (
    "INFO 05-01 10:00:00 [api_server.py:1] vLLM API server version 0.9.2\n"
    "INFO 05-01 10:00:05 [gpu_model_runner.py:1] Loading safetensors checkpoint shards\n"
    "ERROR 05-01 10:00:09 [core.py:1] EngineCore failed to start.\n"
    "ERROR 05-01 10:00:09 [core.py:1] Traceback (most recent call last):\n"
    'ERROR 05-01 10:00:09 [core.py:1]   File "/x/vllm/model_executor/models/llama.py", line 3, '
    "in load_weights\n"
    "ERROR 05-01 10:00:09 [core.py:1]     param.copy_(w)\n"
    "ERROR 05-01 10:00:09 [core.py:1] torch.OutOfMemoryError: CUDA out of memory. Tried to "
    "allocate 1.00 GiB. GPU 0 has a total capacity of 23.64 GiB of which 512.00 MiB is free.\n"
    "ERROR 05-01 10:00:10 [core.py:1] RuntimeError: Engine core initialization failed. See root "
    "cause above.\n"
)
UNKNOWN = ("Traceback (most recent call last):\n"
           '  File "/usr/lib/python3/dist-packages/vllm/worker/worker.py", line 9, in run\n'
           "    go()\n"
           "ValueError: the frobnicator refused the widget\n")


def _root(diagnosis: Diagnosis):  # type: ignore[no-untyped-def]
    root = diagnosis.root_cause
    assert root is not None and root.triage is not None
    return root, root.triage


def test_a_named_cause_carries_the_whole_contract() -> None:
    root, triage = _root(diagnose_text(OOM))
    assert triage.named and triage.category == root.category == "oom_weight_load"
    assert triage.root_line == 7 and 7 in triage.evidence_lines
    assert "CUDA out of memory" in triage.signal
    assert triage.fix == root.fix.steps and triage.collect and triage.risk
    assert any("wrapper" in item for item in triage.ruled_out)
    assert root.why and root.why[0].startswith("a cause")


def test_an_error_nothing_names_is_located_not_guessed() -> None:
    root, triage = _root(diagnose_text(UNKNOWN))
    assert root.category == "unclassified" and not triage.named
    assert triage.root_line == 4 and root.extracted["exception"] == "ValueError"
    assert root.library == "vllm" and "line 4" in root.summary
    assert triage.collect and any("none names" in item for item in triage.ruled_out)


def test_a_log_without_an_error_is_located_where_it_stops() -> None:
    log = ("INFO 05-01 10:00:00 [api_server.py:1] vLLM API server version 0.9.2\n"
           "INFO 05-01 10:00:05 [gpu_model_runner.py:1] Loading safetensors checkpoint shards\n")
    root, triage = _root(diagnose_text(log))
    assert root.category == "root_cause_missing" and triage.evidence_lines
    assert triage.root_line in (1, 2)


def test_the_json_document_holds_the_contract_and_why() -> None:
    data = diagnose_text(OOM).to_dict()["root_cause"]
    assert {"problem_class", "signal", "ruled_out", "fix", "collect", "risk", "evidence_lines",
            "root_line", "named"} <= set(data["triage"])
    assert data["triage"]["signal"]["line"] == 7 and data["why"]
    assert all(f["triage"] is None for f in diagnose_text(OOM).to_dict()["findings"]
               if f["rule"] != data["rule"])


def test_markdown_leads_with_the_contract() -> None:
    text = diagnosis_markdown(diagnose_text(OOM), "engine.log")
    assert text.startswith("## servewise diagnose: `oom_weight_load`")
    assert "| strongest signal | line 7:" in text and "**Collect next:**" in text
    assert "**Risk of the fix:**" in text and "### Why this confidence" in text


def test_the_cli_writes_each_format(tmp_path) -> None:  # type: ignore[no-untyped-def]
    log = tmp_path / "engine.log"
    log.write_text(UNKNOWN)
    runner = CliRunner()
    markdown = runner.invoke(app, ["diagnose", str(log), "--format", "markdown"])
    assert markdown.exit_code == 1 and "`unclassified`" in markdown.output
    as_json = runner.invoke(app, ["diagnose", str(log), "--format", "json"])
    assert json.loads(as_json.output)["root_cause"]["triage"]["root_line"] == 4
    text = runner.invoke(app, ["diagnose", str(log)])
    assert "triage" in text.output and "ruled out" in text.output
    bad = runner.invoke(app, ["diagnose", str(log), "--format", "yaml"])
    assert bad.exit_code == 2
