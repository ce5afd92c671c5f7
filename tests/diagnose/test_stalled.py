"""A start that ends with no error and no ready line: the phase it stopped in, once complete."""

from __future__ import annotations

from servewise.diagnose import diagnose_text, new_scanner

STOPPED_IN_WEIGHTS = (
    "INFO 11-01 23:16:20 model_runner.py:1110] Starting to load model /models/x...\n"
    "Loading safetensors checkpoint shards:  40% Completed | 6/15 [00:20<00:31,  3.51s/it]\n"
)


def test_a_start_that_stops_in_weight_loading_is_named() -> None:
    diagnosis = diagnose_text(STOPPED_IN_WEIGHTS)
    root = diagnosis.root_cause
    assert root is not None and root.category == "root_cause_missing"
    assert root.extracted["phase"] == "weight_load"
    assert "loading weights" in root.fix.steps[0]
    assert diagnosis.exit_code == 1


def test_a_server_that_came_up_is_healthy() -> None:
    log = STOPPED_IN_WEIGHTS + "INFO:     Application startup complete.\n"
    assert diagnose_text(log).root_cause is None


def test_a_stop_asked_for_is_not_a_hang() -> None:
    log = STOPPED_IN_WEIGHTS + "INFO 11-01 23:16:40 launcher.py:80] Received SIGTERM\n"
    assert diagnose_text(log).root_cause is None


def test_a_start_still_streaming_is_not_judged() -> None:
    scanner = new_scanner()
    scanner.feed(STOPPED_IN_WEIGHTS.encode())
    assert scanner.snapshot().root_cause is None
    assert scanner.finish().root_cause is not None
