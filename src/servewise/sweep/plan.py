"""A sweep's plan: configurations (how to launch) x workloads (what to measure).

A plan comes from a YAML file (:func:`load_plan`) or from ``--config NAME=COMMAND`` flags
(:func:`plan_from_flags`); both give a :class:`SweepPlan`. Every mistake is a
:class:`~servewise.errors.UsageError` that names where it is (``configurations[1].command``).

Each configuration and workload has a ``key``: its name and a digest of what it runs, so a
resumed sweep knows which cells are finished, and a configuration whose command changed is
run again rather than taken for the old one.
"""

from __future__ import annotations

import hashlib
import json
import math
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from servewise.errors import UsageError

__all__ = [
    "Configuration", "SweepPlan", "Workload", "gpus_of", "load_plan", "parse_plan",
    "plan_from_flags",
]

_PLAN_HINT = "see docs/sweep.md for the plan's fields"
#: Flags that multiply the GPUs a configuration uses (vLLM's and SGLang's spellings).
_PARALLEL = {
    "tp": ("--tensor-parallel-size", "-tp", "--tp", "--tp-size"),
    "pp": ("--pipeline-parallel-size", "-pp", "--pp", "--pp-size"),
    "dp": ("--data-parallel-size", "-dp", "--dp", "--dp-size"),
}


def _digest(data: Any) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:10]


@dataclass(frozen=True)
class Configuration:
    """One way to launch the engine."""

    name: str
    argv: tuple[str, ...] = ()
    """The command (``{port}`` is filled with a free port); empty when ``recipe`` is set."""
    recipe: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    gpus: int | None = None
    """GPUs it uses (tokens/s per GPU, the Ray reservation); None: TP x PP x DP of the
    command."""
    model: str | None = None
    """The served model name to benchmark (default: the first one ``/v1/models`` lists)."""
    check_model: str | None = None
    check_gpu: str | None = None
    """``NAME[:COUNT]``: run ``servewise check`` first (with ``check_model`` or the command's
    model); a check that says it will not start skips the configuration."""

    @property
    def key(self) -> str:
        """``NAME-<digest of what it runs>``."""
        return f"{self.name}-" + _digest([list(self.argv), self.recipe, dict(self.env),
                                          self.gpus, self.model])

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data."""
        return {"name": self.name, "key": self.key, "argv": list(self.argv),
                "command": shlex.join(self.argv) if self.argv else None,
                "recipe": self.recipe, "env": dict(self.env), "gpus": self.gpus,
                "model": self.model, "check": {"model": self.check_model,
                                               "gpu": self.check_gpu}}


@dataclass(frozen=True)
class Workload:
    """What to measure on each configuration: lengths, and load levels or an SLA search."""

    isl: int
    osl: int
    kind: Literal["concurrency", "rate"] = "concurrency"
    levels: tuple[float, ...] = (1.0,)
    """Load levels; with ``sla``, the first is where the search starts."""
    num_prompts: int | None = None
    warmup: int | None = None
    sla: str | None = None
    sla_max: float | None = None
    sla_runs: int = 8

    @property
    def key(self) -> str:
        """``isl1024-osl128-c1,8`` (``-sla-<digest>`` for a search)."""
        kind = "c" if self.kind == "concurrency" else "r"
        levels = ",".join(f"{v:g}" for v in self.levels)
        key = f"isl{self.isl}-osl{self.osl}-{kind}{levels}"
        if self.num_prompts is not None:
            key += f"-n{self.num_prompts}"
        if self.sla is not None:
            key += "-sla-" + _digest([self.sla, self.sla_max, self.sla_runs])
        return key

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data."""
        return {"key": self.key, "isl": self.isl, "osl": self.osl, self.kind: [
            int(v) if float(v).is_integer() else v for v in self.levels],
            "num_prompts": self.num_prompts, "warmup": self.warmup, "sla": self.sla,
            "sla_max": self.sla_max, "sla_runs": self.sla_runs}


@dataclass(frozen=True)
class SweepPlan:
    """Configurations x workloads, and how long a start-up may take."""

    configurations: tuple[Configuration, ...]
    workloads: tuple[Workload, ...]
    name: str = "sweep"
    timeout_s: float = 900.0
    seed: int | None = None
    source: Path | None = None
    """The plan file (None: from flags)."""

    @property
    def key(self) -> str:
        """A digest of every configuration and workload (names the state file)."""
        return _digest([[c.key for c in self.configurations], [w.key for w in self.workloads]])

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data."""
        return {"name": self.name, "key": self.key, "timeout_s": self.timeout_s,
                "seed": self.seed, "source": str(self.source) if self.source else None,
                "configurations": [c.to_dict() for c in self.configurations],
                "workloads": [w.to_dict() for w in self.workloads]}


def gpus_of(argv: Sequence[str]) -> int:
    """TP x PP x DP read from a command (1 for each flag it does not have)."""
    total = 1
    for names in _PARALLEL.values():
        for index, token in enumerate(argv):
            name, has_inline, inline = token.partition("=")
            if name in names:
                text = inline if has_inline else (argv[index + 1] if index + 1 < len(argv)
                                                  else "")
                if text.isdigit() and int(text) > 0:
                    total *= int(text)
                break
    return total


def _levels(value: Any, where: str) -> tuple[float, ...]:
    items = value if isinstance(value, list) else str(value).split(",")
    levels = []
    for item in items:
        try:
            number = float(item)
        except (TypeError, ValueError):
            number = math.nan
        if not number > 0:
            raise UsageError(f"{where}: expected positive numbers, found {item!r}",
                             hint="e.g. concurrency: [1, 8, 64] (or \"1,8,64\")", found=item)
        levels.append(number)
    if not levels:
        raise UsageError(f"{where} is empty", hint="e.g. concurrency: [1, 8, 64]")
    return tuple(levels)


def _positive_int(data: Mapping[str, Any], key: str, where: str) -> int | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UsageError(f"{where}.{key} must be a positive whole number, found {value!r}",
                         hint=_PLAN_HINT, found=value)
    return value


def _workload(data: Any, where: str) -> Workload:
    if not isinstance(data, dict):
        raise UsageError(f"{where} must be a mapping", hint="e.g. {isl: 1024, osl: 128, "
                         "concurrency: [1, 8]}", found=type(data).__name__)
    unknown = set(data) - {"isl", "osl", "concurrency", "rate", "num_prompts", "warmup", "sla",
                           "sla_max", "sla_runs"}
    if unknown:
        raise UsageError(f"{where} has unknown fields: {', '.join(sorted(unknown))}",
                         hint=_PLAN_HINT, found=sorted(unknown))
    isl, osl = _positive_int(data, "isl", where), _positive_int(data, "osl", where)
    if isl is None or osl is None:
        raise UsageError(f"{where} needs isl and osl", hint="e.g. {isl: 1024, osl: 128, "
                         "concurrency: [1, 8]}")
    if "concurrency" in data and "rate" in data:
        raise UsageError(f"{where} gives both concurrency and rate", hint="give one of them")
    kind: Literal["concurrency", "rate"] = "rate" if "rate" in data else "concurrency"
    raw = data.get(kind, 1)
    levels = _levels(raw, f"{where}.{kind}")
    if kind == "concurrency" and any(not v.is_integer() for v in levels):
        raise UsageError(f"{where}.concurrency takes whole numbers", found=raw,
                         hint="e.g. concurrency: [1, 8, 64]")
    sla = data.get("sla")
    if sla is not None:
        from servewise.bench.sla import parse_sla

        parse_sla(str(sla))  # a bad limit is reported now, not after the first launch
        if len(levels) > 1:
            raise UsageError(f"{where}: with sla, {kind} is where the search starts: one "
                             "number", hint=f"e.g. sla: \"ttft_p99<=500ms\", {kind}: 1")
    sla_max = data.get("sla_max")
    if sla_max is not None and not (isinstance(sla_max, int | float) and sla_max > 0):
        raise UsageError(f"{where}.sla_max must be a positive number", found=sla_max,
                         hint=_PLAN_HINT)
    return Workload(isl, osl, kind, levels, _positive_int(data, "num_prompts", where),
                    data.get("warmup") if isinstance(data.get("warmup"), int) else None,
                    str(sla) if sla is not None else None,
                    float(sla_max) if sla_max is not None else None,
                    _positive_int(data, "sla_runs", where) or 8)


def _configuration(data: Any, where: str) -> Configuration:
    if not isinstance(data, dict):
        raise UsageError(f"{where} must be a mapping", hint="e.g. {name: tp8, command: "
                         "\"vllm serve MODEL --tp 8 --port {port}\"}", found=type(data).__name__)
    unknown = set(data) - {"name", "command", "recipe", "env", "gpus", "model", "check"}
    if unknown:
        raise UsageError(f"{where} has unknown fields: {', '.join(sorted(unknown))}",
                         hint=_PLAN_HINT, found=sorted(unknown))
    name = data.get("name")
    if not isinstance(name, str) or not name.strip() or "/" in name:
        raise UsageError(f"{where}.name must be a non-empty name without '/'", found=name,
                         hint="e.g. name: tp8")
    command, recipe = data.get("command"), data.get("recipe")
    if (command is None) == (recipe is None):
        raise UsageError(f"{where} ({name}) needs one of command and recipe",
                         hint="command: \"vllm serve MODEL --port {port}\", or recipe: ID "
                         "(`servewise recipe list`)")
    argv: tuple[str, ...] = ()
    if command is not None:
        argv = _argv(command, f"{where}.command")
    elif not isinstance(recipe, str):
        raise UsageError(f"{where}.recipe must be a recipe id", found=recipe, hint=_PLAN_HINT)
    env = data.get("env") or {}
    if not isinstance(env, dict):
        raise UsageError(f"{where}.env must be a mapping of names to values", found=env,
                         hint="e.g. env: {VLLM_CPU_KVCACHE_SPACE: \"1\"}")
    check = data.get("check") or {}
    if not isinstance(check, dict) or set(check) - {"model", "gpu"}:
        raise UsageError(f"{where}.check takes model and gpu", found=check,
                         hint="e.g. check: {gpu: \"h200:8\"}")
    model = data.get("model")
    return Configuration(name.strip(), argv, recipe if isinstance(recipe, str) else None,
                         {str(k): str(v) for k, v in env.items()},
                         _positive_int(data, "gpus", where),
                         str(model) if model is not None else None,
                         str(check["model"]) if check.get("model") else None,
                         str(check["gpu"]) if check.get("gpu") else None)


def _argv(command: Any, where: str) -> tuple[str, ...]:
    if isinstance(command, list) and command and all(isinstance(t, str) for t in command):
        return tuple(command)
    if isinstance(command, str):
        try:
            found = shlex.split(command)
        except ValueError as error:
            raise UsageError(f"{where}: cannot split the command: {error}", found=command,
                             hint="check the quotes") from None
        if found:
            return tuple(found)
    raise UsageError(f"{where} must be a command line (a string or a list of words)",
                     found=command, hint="e.g. command: \"vllm serve MODEL --port {port}\"")


def parse_plan(data: Any, source: Path | None = None) -> SweepPlan:
    """A plan from its parsed YAML (see docs/sweep.md)."""
    if not isinstance(data, dict):
        raise UsageError("a sweep plan is a mapping with configurations and workloads",
                         hint=_PLAN_HINT, found=type(data).__name__)
    unknown = set(data) - {"name", "configurations", "workloads", "timeout", "seed", "model",
                           "gpus"}
    if unknown:
        raise UsageError(f"the plan has unknown fields: {', '.join(sorted(unknown))}",
                         hint=_PLAN_HINT, found=sorted(unknown))
    configs, workloads = data.get("configurations"), data.get("workloads")
    if not isinstance(configs, list) or not configs:
        raise UsageError("the plan has no configurations", hint=_PLAN_HINT)
    if not isinstance(workloads, list) or not workloads:
        raise UsageError("the plan has no workloads", hint=_PLAN_HINT)
    defaults = {key: data[key] for key in ("model", "gpus") if key in data}
    parsed = tuple(_configuration({**defaults, **item} if isinstance(item, dict) else item,
                                  f"configurations[{i}]") for i, item in enumerate(configs))
    names = [c.name for c in parsed]
    if len(set(names)) != len(names):
        raise UsageError("two configurations have the same name", found=names,
                         hint="give each configuration its own name")
    timeout = data.get("timeout", 900)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        raise UsageError(f"timeout must be positive seconds, found {timeout!r}", hint=_PLAN_HINT)
    seed = data.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise UsageError(f"seed must be a whole number, found {seed!r}", hint=_PLAN_HINT)
    return SweepPlan(parsed, tuple(_workload(w, f"workloads[{i}]")
                                   for i, w in enumerate(workloads)),
                     str(data.get("name") or (source.stem if source else "sweep")),
                     float(timeout), seed, source)


def load_plan(path: Path) -> SweepPlan:
    """Read a plan file (YAML)."""
    import yaml

    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"cannot read the plan {path}: {error}", path=str(path),
                         hint="give a YAML file (see docs/sweep.md)") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise UsageError(f"{path} is not YAML: {error}", path=str(path),
                         hint=_PLAN_HINT) from None
    return parse_plan(data, path)


def plan_from_flags(configs: Sequence[str], isl: int | None, osl: int | None,
                    concurrency: str | None, rate: str | None, *,
                    num_prompts: int | None = None, sla: str | None = None,
                    model: str | None = None, gpus: int | None = None,
                    timeout_s: float = 900.0, seed: int | None = None) -> SweepPlan:
    """The plan of ``--config NAME=COMMAND ... --isl N --osl N --concurrency 1,8``.

    COMMAND is a command line (with ``{port}``) or a recipe id (one word without spaces).
    """
    if not configs:
        raise UsageError("no configuration to sweep",
                         hint="give PLAN.yaml, or --config NAME=COMMAND (repeatable)")
    items = []
    for text in configs:
        name, sep, command = text.partition("=")
        if not sep or not name.strip() or not command.strip():
            raise UsageError(f"--config {text!r}: expected NAME=COMMAND", found=text,
                             hint="e.g. --config tp1=\"vllm serve MODEL --port {port}\"")
        words = command.split()
        key = "recipe" if len(words) == 1 and "/" in words[0] and not words[0].startswith(
            ("/", ".")) else "command"
        items.append({"name": name.strip(), key: command.strip(), "model": model,
                      "gpus": gpus})
    if isl is None or osl is None:
        raise UsageError("give --isl N and --osl N", hint="e.g. --isl 1024 --osl 128")
    workload: dict[str, Any] = {"isl": isl, "osl": osl, "num_prompts": num_prompts}
    if concurrency is not None and rate is not None:
        raise UsageError("give --concurrency or --rate, not both",
                         hint="e.g. --concurrency 1,8,64")
    if rate is not None:
        workload["rate"] = rate
    else:
        workload["concurrency"] = concurrency or "1"
    if sla is not None:
        workload["sla"] = sla
    data = {"configurations": [{k: v for k, v in item.items() if v is not None}
                               for item in items],
            "workloads": [{k: v for k, v in workload.items() if v is not None}],
            "timeout": timeout_s, "seed": seed}
    return parse_plan({k: v for k, v in data.items() if v is not None})
