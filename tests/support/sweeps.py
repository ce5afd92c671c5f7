"""Engine commands for sweep tests: the synthetic server that serves, the stand-in that fails.

Both take ``{port}``, which the sweep fills with a free port.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

SUPPORT = Path(__file__).resolve().parent
STANDIN = SUPPORT / "standin_engine.py"
SYNTHETIC = SUPPORT / "sse_server.py"


def synthetic_command(**behaviour: object) -> list[str]:
    """The synthetic OpenAI server (a :class:`support.sse_server.Behaviour` as keywords)."""
    return [sys.executable, str(SYNTHETIC), "--port", "{port}", "--config",
            json.dumps(behaviour)]


def standin_command(*options: str) -> list[str]:
    """The stand-in engine, failing or hanging as ``options`` ask (see its docstring)."""
    return [sys.executable, str(STANDIN), "--port", "{port}", *options]
