"""``servewise sweep``: configurations x workloads, launched, benchmarked and stopped in turn.

* :mod:`~servewise.sweep.plan` -- the plan: a YAML file or ``--config NAME=COMMAND`` flags
* :mod:`~servewise.sweep.state` -- the state file that makes a sweep resumable
* :mod:`~servewise.sweep.runner` -- one configuration: check, launch, bench, stop
* :mod:`~servewise.sweep.results` -- the tables of the recipe books, Markdown, the Pareto data
* :mod:`~servewise.sweep.ray_exec` -- each configuration as a Ray task on a cluster
* :mod:`~servewise.sweep.k8s` -- the same plan as Kubernetes Jobs (rendered, not run)

The operation composes ``launch``, ``bench`` and ``check`` (and reads ``recipes``), as
``check`` composes the others; the library never prints: progress goes to a sink.
"""

from __future__ import annotations

from servewise.sweep.plan import Configuration, SweepPlan, Workload, load_plan, plan_from_flags
from servewise.sweep.runner import LocalSink, SweepEvent, SweepOptions, run_sweep
from servewise.sweep.state import SweepState, default_state_path

__all__ = [
    "Configuration", "LocalSink", "SweepEvent", "SweepOptions", "SweepPlan", "SweepState",
    "Workload", "default_state_path", "load_plan", "plan_from_flags", "run_sweep",
]
