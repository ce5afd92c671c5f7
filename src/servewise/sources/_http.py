"""httpx, imported without its command-line tool.

``import httpx`` also imports ``httpx._main`` (its ``httpx`` command) whenever click is
installed — and huggingface_hub installs it — which pulls in click, pygments and
``rich.syntax``: about 35 ms of every servewise command that reaches a registry, an index
or a web server, for a command servewise never runs. Marking that one submodule absent
before the first import makes httpx take its own fallback (``httpx.main`` then says to
install ``httpx[cli]``); the client API is untouched. Modules of servewise that speak HTTP
import httpx from here.
"""

from __future__ import annotations

import sys

if "httpx" not in sys.modules:
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]

import httpx

__all__ = ["httpx"]
