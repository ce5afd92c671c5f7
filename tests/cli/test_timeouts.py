"""``--timeout`` on every command that reaches a network, against a server that never answers.

Each command ends within its deadline plus a little slack, exits 2, and says on stderr which
host it waited for, what for, and what to try; while it waits, stderr says so. With
``--json`` the error is JSON on stdout with the same fields.
"""

from __future__ import annotations

import json
import time

import pytest

from servewise.cli import run
from support.silent import elapsed, silent_server

#: Seconds past the deadline allowed for what precedes it (imports, argument parsing) on a
#: loaded machine; without the deadline these commands wait 60 s or more.
SLACK_S = 4.0


def _commands(address: str, url: str) -> dict[str, list[str]]:
    image = f"{address}/fake/img:1"
    return {
        "inspect": ["inspect", image],
        "gate": ["gate", image, "--gpu", "h200"],
        "diff": ["diff", image, f"{address}/fake/img:2"],
        "tags": ["tags", f"{address}/fake/img"],
        "bisect": ["bisect", f"{address}/fake/img", "--gpu", "h200"],
        "bisect-pypi": ["bisect", "pypi:vllm", "--gpu", "h200", "--index-url", url + "/simple/"],
        "wheel-url": ["inspect", f"{url}/vllm-0.33.0-cp38-abi3-manylinux1_x86_64.whl"],
        "model": ["model", "hub:org/never", "--no-cache"],
        "plan": ["plan", "hub:org/never", "--gpu", "h200:8", "--no-cache"],
    }


@pytest.mark.parametrize("name", ["inspect", "gate", "diff", "tags", "bisect", "bisect-pypi",
                                  "wheel-url", "model", "plan"])
def test_every_network_command_ends_at_its_timeout(
    name: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with silent_server() as server:
        import huggingface_hub.constants

        monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", server.url)
        began = time.monotonic()
        code = run([*_commands(server.address, server.url)[name], "--timeout", "1.5"])
        took = elapsed(began)
    captured = capsys.readouterr()
    assert took < 1.5 + SLACK_S, captured.err
    assert code == 2, captured.err
    assert server.address in captured.err
    assert "error:" in captured.err and "--timeout" in captured.err
    assert "Traceback" not in captured.err


def test_waiting_is_shown_and_json_carries_the_fields(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("servewise.sources.deadline.TICK_S", 0.3)
    with silent_server() as server:
        code = run(["gate", f"{server.address}/fake/img:1", "--gpu", "h200", "--timeout", "1.2",
                    "--json"])
    captured = capsys.readouterr()
    assert code == 2
    error = json.loads(captured.out)
    assert error["error"] == "deadline"
    assert error["host"] == server.address
    assert "manifest" in error["waited_for"]
    assert error["timeout_s"] == 1.2
    assert f"waiting: waiting for {server.address}" in captured.err


def test_a_timeout_must_be_positive(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["tags", "127.0.0.1:9/fake/img", "--timeout", "0"]) == 2
    assert "more than 0 seconds" in capsys.readouterr().err
