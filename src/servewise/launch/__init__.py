"""Launch and search: start an engine, know at once when it is ready or why it died.

* :mod:`~servewise.launch.command` -- the command: engine, port, placeholders, ``docker run``
* :mod:`~servewise.launch.process` -- own session, death signal, watchdog, group stop
* :mod:`~servewise.launch.readiness` -- port, ``/health``, ``/v1/models``, ``/health_generate``
* :mod:`~servewise.launch.run` -- :class:`EngineRun`: one launch from start to stop
* :mod:`~servewise.launch.hints` -- the KV numbers an engine logs
* :mod:`~servewise.launch.strategy` and :mod:`~servewise.launch.search` -- the search
* :mod:`~servewise.launch.records` -- the store's launches and searches, ``stop``
"""

from __future__ import annotations

from servewise.launch.run import EngineRun, LaunchResult, LaunchSpec, new_run_id

__all__ = ["EngineRun", "LaunchResult", "LaunchSpec", "new_run_id"]
