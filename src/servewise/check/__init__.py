"""``servewise check``: will this deployment start, and the exact command to run.

::

    from servewise.check import CheckRequest, run_check
    from servewise.knowledge.gpus import parse_gpu_spec

    report = run_check(CheckRequest("MJPansa/DeepSeek-V4-Flash-0731-NVFP4",
                                    parse_gpu_spec("rtx-pro-6000-blackwell-max-q:2")))
    report.will_start, report.command["shell"]

The one operation that composes the others (gate, plan, recipes, model rules, pitfalls);
see :mod:`servewise.check.compose` for the steps.
"""

from __future__ import annotations

from servewise.check.compose import CheckRequest, run_check
from servewise.check.report import PARTS, CheckItem, CheckReport
from servewise.recipes.renderers import FORMATS

__all__ = ["FORMATS", "PARTS", "CheckItem", "CheckReport", "CheckRequest", "run_check"]
