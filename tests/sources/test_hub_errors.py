"""The Hub reader turns the failures it means into a SourceError, keeping the cause.

Network and HTTP failures (no server, an error status, an id the Hub refuses) become a
:class:`SourceError` whose ``__cause__`` is the original exception (shown with
``SERVEWISE_DEBUG=1``); anything else is a bug and is not dressed up as a Hub error.
"""

from __future__ import annotations

import socket

import pytest

from servewise.errors import SourceError
from servewise.sources import hub as hub_module
from servewise.sources.hub import HubReader
from support.hub_server import run_hub


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_no_server_is_a_source_error_with_the_transport_cause() -> None:
    reader = HubReader(endpoint=f"http://127.0.0.1:{_closed_port()}")
    with pytest.raises(SourceError, match="cannot read org/none") as info:
        reader.read("org/none")
    assert isinstance(info.value.__cause__, hub_module._transport().HTTPError)


def test_an_error_status_and_a_refused_id_keep_their_cause() -> None:
    with run_hub({}) as hub:
        reader = HubReader(endpoint=hub.url)
        with pytest.raises(SourceError, match="cannot read org/none") as missing:
            reader.read("org/none")
        with pytest.raises(SourceError, match="from the Hub") as refused:
            reader.read("not//an id")
    assert missing.value.__cause__ is not None
    assert isinstance(refused.value.__cause__, ValueError)


def test_a_bug_is_not_reported_as_a_hub_error(monkeypatch: pytest.MonkeyPatch) -> None:
    with run_hub({}) as hub:
        reader = HubReader(endpoint=hub.url)

        def broken(*args: object, **kwargs: object) -> None:
            raise RuntimeError("a bug")

        monkeypatch.setattr(reader.api, "model_info", broken)
        with pytest.raises(RuntimeError, match="a bug"):
            reader.read("org/any")
