"""A start that ends with no error and no ready line: the phase it stopped in, once complete."""

from __future__ import annotations

from servewise.diagnose import diagnose_text, new_scanner
from support.diagnose import RULE_FIXTURES

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


def test_a_log_with_nothing_in_it_is_an_excerpt_without_its_failure() -> None:
    """No error, no start-up milestone, no running server: what was pasted left the failure
    out, so the answer is what to collect, never an empty one."""
    log = ("WARNING 11-01 23:16:20 config.py:300] Casting torch.bfloat16 to torch.float16.\n"
           "INFO 11-01 23:16:21 weight_utils.py:250] Using model weights format ['*.bin']\n")
    root = diagnose_text(log).root_cause
    assert root is not None and root.category == "root_cause_missing"
    # Located where the log stops: its last line.
    assert [(e.line, e.role) for e in root.evidence] == [(2, "context")]
    assert "Collect the whole log" in root.fix.steps[0]


def test_an_excerpt_that_starts_with_the_server_up_is_not_a_healthy_log() -> None:
    """No engine start, no start-up phase, then the server up and no error: a paste from a
    running server, which says nothing about a failure outside it (what to collect)."""
    log = ("main: server is listening on http://127.0.0.1:8080 - starting the main loop\n"
           "srv  update_slots: all slots are idle\n")
    root = diagnose_text(log).root_cause
    assert root is not None and root.category == "root_cause_missing"
    assert "server already up" in root.summary
    whole = (RULE_FIXTURES / "NOI001" / "negative.log").read_text()
    assert diagnose_text(whole).root_cause is None


def test_llama_cpp_and_tgi_milestones_are_read() -> None:
    llama = ("llama_model_loader: loaded meta data with 26 key-value pairs and 291 tensors from "
             "/models/llama-3-8b.Q4_K_M.gguf (version GGUF V3 (latest))\n"
             "llm_load_tensors: offloaded 33/33 layers to GPU\n"
             "llama_new_context_with_model: n_ctx = 4096\n"
             "main: server is listening on http://127.0.0.1:8080 - starting the main loop\n")
    assert diagnose_text(llama).root_cause is None
    tgi = ("2024-05-07T12:39:10.101023Z  INFO text_generation_launcher: Starting shard rank=0\n"
           "2024-05-07T12:39:21.278450Z  INFO text_generation_router: router/src/main.rs:317: "
           "Warming up model\n")
    root = diagnose_text(tgi).root_cause
    assert root is not None and root.extracted["phase"] == "profile_run"
