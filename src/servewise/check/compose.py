"""``servewise check``: one answer from the gate, the recipes, the model rules and the planner.

The steps, each on the same engine settings (:class:`~servewise.knowledge.flags.EngineSettings`):

1. the best recipe for the model, GPU, engine, strategy and node count (its flags are the
   starting point; an ``unsupported`` one is a warning, never a starting point);
2. the user's own flags over it (``--max-model-len``, flags after ``--``);
3. the model rules for the engine and version: a required flag the user left unset is set
   (and said so); one the user set against the rule blocks, naming the flag;
4. the memory plan at those settings: the layout the planner ranks first when none is
   given, the utilization or fraction that leaves the named workspaces their room when none
   is given; a recipe's value that leaves less room than they need is replaced by the
   planner's (and said so); a plan that does not fit blocks, with the largest context;
5. the kernel gate for ``--build`` (or the command to run it on the recipe's image);
6. the GPU pitfalls that the final flags still trigger;
7. the command, rendered by :func:`servewise.recipes.render`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from servewise.check.command import (
    for_cluster,
    given_flags,
    gpus_per_node,
    headroom_text,
    modelled_settings,
    official_image,
    plan_dict,
    release_or_build,
)
from servewise.check.report import (
    CheckItem,
    CheckReport,
    computed_weights,
    finding_order,
    memory_failure,
)
from servewise.errors import UsageError
from servewise.knowledge.flags import AUTO, EngineSettings, from_argv, to_argv
from servewise.plan.settings import (
    SettingsError,
    plan_settings,
    unmodelled_memory,
    unmodelled_speculative,
    with_layout,
)
from servewise.recipes.renderers import FORMATS

if TYPE_CHECKING:
    from servewise.inspect.gate import GateResult
    from servewise.inspect.report import BuildReport
    from servewise.knowledge.gpus import GpuSpec
    from servewise.knowledge.models import ModelFamily
    from servewise.plan.model import ModelInfo
    from servewise.plan.planner import Plan
    from servewise.recipes import Recipe, RecipeBook, RecipeMatch
    from servewise.sources import SourceOptions
    from servewise.store import Store

GIB = 2**30


@dataclass(frozen=True)
class CheckRequest:
    """What the user asks about."""

    model: str
    gpu: GpuSpec
    engine: str | None = None
    engine_version: str | None = None
    build: str | None = None
    max_model_len: int | None = None
    strategy: str | None = None
    nodes: int = 1
    flags: tuple[str, ...] = ()
    """Engine flags of the user's own (after ``--``); they win over the recipe's."""
    command_format: str | None = None
    """``vllm``, ``sglang``, ``docker`` or ``k8s`` (default: docker when an image is known)."""
    port: int | None = None
    image: str | None = None
    """The image for ``docker`` and ``k8s`` (default: the build when it is an image, else the
    recipe's)."""
    model_cache: str | None = None
    """``k8s``: where pods keep the Hugging Face cache: ``pvc`` (default, a claim sized for
    the checkpoint), ``pvc:CLAIM`` or ``hostpath:/PATH``
    (:class:`~servewise.recipes.k8s_serving.ModelCache`)."""


@dataclass
class _State:
    """What the steps build up."""

    engine: str
    version: str | None
    version_from: str
    settings: EngineSettings
    findings: list[CheckItem]
    env: tuple[tuple[str, str], ...] = ()
    image: str | None = None
    checkpoint: str | None = None
    user_set: frozenset[str] = frozenset()
    """The settings the user gave (``--max-model-len``, flags after ``--``)."""
    recipe: Recipe | None = None
    """The recipe the settings start from (its multi-node mode and pools are rendered)."""
    auto_len: int | None = None
    """The context ``--max-model-len auto`` comes to (vLLM fits it to the KV memory)."""


def run_check(
    request: CheckRequest,
    *,
    store: Store | None = None,
    options: SourceOptions | None = None,
    scan: Callable[[str], BuildReport] | None = None,
    book: RecipeBook | None = None,
) -> CheckReport:
    """The check of ``request`` (see the module docstring). Bad input raises UsageError.

    ``scan`` reads ``--build`` (default: :func:`servewise.inspect.scan.scan_build` with
    ``store`` and ``options``); ``book`` is the recipe database (default: shipped + user).
    """
    from servewise.knowledge.engines import serving_engines
    from servewise.plan.resolve import load_model
    from servewise.recipes import load_recipes

    if request.engine is not None and request.engine not in serving_engines():
        raise UsageError(f"--engine {request.engine!r}: expected "
                         f"{' or '.join(serving_engines())}", found=request.engine)
    if request.command_format not in (None, *FORMATS):
        raise UsageError(f"--format {request.command_format!r}",
                         hint="give " + ", ".join(FORMATS) + " or markdown")
    model = load_model(request.model, store=store)
    computed = computed_weights(model.notes, model.tensor_bytes)
    recipes = book or load_recipes()
    # The name as given first (it may name exact weights a card folds into its family).
    # A GPU the catalog does not know (given with --gpu-memory) has no recipes.
    known_gpu = request.gpu.gpu is not None
    matches = recipes.match(model=request.model, hw=request.gpu, engine=request.engine,
                            strategy=request.strategy, nodes=request.nodes) if known_gpu else []
    if known_gpu and not matches and model.ref != request.model:
        matches = recipes.match(model=model.ref, hw=request.gpu, engine=request.engine,
                                strategy=request.strategy, nodes=request.nodes)
    chosen = next((m for m in matches if m.recipe.status != "unsupported"), None)
    # what to serve when the recipe is for other weights: the Hub id or folder as given, the
    # card's id for a bare card name
    state = _start(request, chosen, matches,
                   request.model if "/" in request.model else model.ref)
    if chosen is None and known_gpu:
        _near_misses(request, recipes, model.ref, state)
    report: BuildReport | None = None
    gate: GateResult | None = None
    cuda = request.gpu.gpu is None or request.gpu.gpu.is_cuda
    if request.build is not None and not cuda:
        assert request.gpu.gpu is not None
        state.findings.append(CheckItem(
            "build", "note", f"{request.gpu.gpu.name} is an {request.gpu.gpu.vendor.upper()} "
            f"GPU: the kernel gate judges CUDA builds only, so --build {request.build} is "
            "not read"))
    elif request.build is not None:
        report, gate = _gate(request, model, state, scan, store, options)
    if computed is not None:
        state.findings.append(computed)
    _apply_user(request, state)
    _apply_rules(request, model, state)
    plan = _plan(request, model, state, chosen)
    if request.build is None:
        _advise_gate(request, model, state)
    _pitfalls(request, model, state, report, gate)
    command = _render(request, model, state, plan)
    return CheckReport(
        model=state.checkpoint or model.ref,
        gpu=request.gpu.to_dict(),
        engine=state.engine,
        engine_version=state.version,
        engine_version_from=state.version_from,
        findings=tuple(sorted(state.findings, key=finding_order)),
        settings=state.settings.to_dict(),
        command=command,
        recipe=chosen.to_dict() if chosen else None,
        gate={**gate.to_dict(), "engine": None if report is None else
              _build_engine(report)} if gate is not None else None,
        plan=plan_dict(plan) if plan is not None else None,
        other_recipes=tuple({"id": m.recipe.id, "status": m.recipe.status, "reason": m.reason}
                            for m in matches if m is not chosen),
    )


def _start(request: CheckRequest, chosen: RecipeMatch | None,
           matches: list[RecipeMatch], asked: str) -> _State:
    findings: list[CheckItem] = []
    for match in matches:
        if match.recipe.status == "unsupported":
            findings.append(CheckItem(
                "recipe", "warning", f"recipe {match.recipe.id} says this does NOT work: "
                f"{match.recipe.notes or match.reason}", source=match.recipe.provenance.source))
    if chosen is None:
        engine = request.engine or "vllm"
        findings.append(CheckItem(
            "recipe", "note", f"no recipe for {request.model} on {request.gpu.name} x"
            f"{request.gpu.count} with {engine}: the settings below come from the model "
            "rules and the planner alone", fix=f"`servewise recipe list --model "
            f"{request.model}` shows its recipes (vLLM's database included) on other GPUs"))
        return _State(engine, request.engine_version,
                      "--engine-version" if request.engine_version else "none",
                      EngineSettings(), findings)
    recipe = chosen.recipe
    level = "ok" if recipe.status == "verified" else "note"
    findings.append(CheckItem("recipe", level, f"recipe {recipe.id} ({recipe.status}): "
                            f"{chosen.reason}", source=recipe.provenance.source))
    known = recipe.engine_version
    version = request.engine_version or (known.raw if known is not None else None)
    version_from = ("--engine-version" if request.engine_version
                    else "recipe" if version else "none")
    settings = from_argv(recipe.engine, recipe.argv, version)
    served = recipe.checkpoint if chosen.model_match == "checkpoint" else asked
    if served != recipe.checkpoint:
        settings = settings.replace(served_model_name=None)  # the recipe's name for its weights
        findings.append(CheckItem(
            "recipe", "note", f"recipe {recipe.id} is for {recipe.checkpoint}, not the weights "
            f"asked for: its flags are the starting point, the command serves {served} and "
            "the memory plan is for it", fix=f"check {recipe.checkpoint} to use the recipe as "
            "it was written"))
    return _State(recipe.engine, version, version_from, settings, findings, env=recipe.env,
                  image=recipe.image, checkpoint=served, recipe=recipe)


def _near_misses(request: CheckRequest, recipes: RecipeBook, ref: str, state: _State) -> None:
    """Without a fitting recipe: the recipes for this model that do not fit, and why."""
    seen: set[str] = set()
    for name in dict.fromkeys((request.model, ref)):
        misses = recipes.near_misses(model=name, hw=request.gpu, engine=request.engine,
                                     strategy=request.strategy, nodes=request.nodes)
        for recipe, why in misses[:3]:
            if recipe.id in seen:
                continue
            seen.add(recipe.id)
            state.findings.append(CheckItem(
                "recipe", "note", f"recipe {recipe.id} ({recipe.status}) does not fit: {why}",
                source=recipe.provenance.source))


def _gate(request: CheckRequest, model: ModelInfo, state: _State,
          scan: Callable[[str], BuildReport] | None, store: Store | None,
          options: SourceOptions | None) -> tuple[BuildReport, GateResult | None]:
    from servewise.inspect.engine_version import engine_version
    from servewise.inspect.gate import gate

    assert request.build is not None
    if scan is None:
        from servewise.inspect.scan import scan_build

        def scan(ref: str) -> BuildReport:
            return scan_build(ref, store=store, options=options)

    report = scan(request.build)
    found = engine_version(report)
    if found is not None and found.engine != state.engine:
        state.findings.append(CheckItem(
            "build", "error", f"--build {request.build} holds {found.engine} {found.version}, "
            f"not {state.engine}", fix=f"give a {state.engine} build, or --engine {found.engine}"))
    elif found is not None and request.engine_version is None:
        state.version, state.version_from = found.version, "build"
    gpu = request.gpu.gpu
    if gpu is None:
        state.findings.append(CheckItem("build", "warning", f"{request.gpu.name} is not in the "
                                      "GPU catalog: the kernel gate cannot judge the build"))
        return report, None
    family = _family(model, request)
    result = gate(report, gpu, model=family.id if family else None)
    if result.passed:
        needs = family.name if family else "the engine"
        state.findings.append(CheckItem(
            "build", "ok", f"{request.build}: every library {needs} needs has code for "
            f"{gpu.name} ({result.basis})"))
    else:
        gaps = [v for v in result.verdicts if v.status == "error"]
        what = "; ".join(f"{v.library_id or v.path}: {v.reason}" for v in gaps[:3])
        absent = "; ".join(f"{name} is not in the build ({why})" for name, why in result.absent)
        reason = result.no_verdict_reason or "; ".join(p for p in (what, absent) if p)
        repository = _repository(request.build, report)
        bisect = (f"servewise bisect {repository or '<repository>'} --gpu {gpu.id}"
                  + (f" --model {family.id}" if family else ""))
        fix = f"find the last good build: {bisect}"
        if state.image is not None and state.image != request.build:
            fix = f"use the recipe's build {state.image}, or {fix}"
        state.findings.append(CheckItem(
            "build", "error", f"{request.build} will not run on {gpu.name} "
            f"({gpu.arch.sass_name}): {reason}", fix=fix))
    if state.image is None and report.source_kind == "image":
        state.image = request.build
    return report, result


def _repository(ref: str, report: BuildReport) -> str | None:
    """The image repository a registry build came from (``vllm/vllm-openai``), else None."""
    from servewise.formats.imageref import DOCKER_HUB, parse_reference

    if report.source_kind != "image":
        return None
    image = parse_reference(ref)
    if image.registry == DOCKER_HUB:
        return image.repository.removeprefix("library/")
    return f"{image.registry}/{image.repository}"


def _build_engine(report: BuildReport) -> dict[str, Any] | None:
    from servewise.inspect.engine_version import engine_version

    found = engine_version(report)
    return found.to_dict() if found else None


def _apply_user(request: CheckRequest, state: _State) -> None:
    user = from_argv(state.engine, request.flags, state.version)
    changes: dict[str, Any] = dict(user.given())
    if request.max_model_len is not None:
        changes["max_model_len"] = request.max_model_len
    if user.model is not None:
        state.checkpoint = user.model
        changes.pop("model")
    state.user_set = frozenset(changes)
    state.settings = state.settings.replace(**changes,
                                            extra=(*state.settings.extra, *user.extra))


def _apply_rules(request: CheckRequest, model: ModelInfo, state: _State) -> None:
    from servewise.knowledge.flags import load_flag_table
    from servewise.recipes import check_rules, model_rules_for

    table = load_flag_table()
    rules = model_rules_for(state.checkpoint or model.ref, state.engine, state.version,
                            architectures=model.config.architectures)
    if not rules and state.checkpoint != request.model:
        rules = model_rules_for(request.model, state.engine, state.version)
    argv = to_argv(state.engine, state.settings, state.version)
    for violation in check_rules(rules, argv):
        rule = violation.rule
        found = table.lookup(state.engine, rule.flag, None)
        setting_id = found[0].id if found else None
        source = rule.sources[0] if rule.sources else None
        if setting_id is not None and setting_id in state.user_set:
            state.findings.append(CheckItem(
                "rules", "error", f"{violation.message}", source=source,
                fix=f"use {' '.join(rule.fix)}" if rule.fix else f"drop {rule.flag}"))
            continue
        if setting_id is None:
            state.findings.append(CheckItem("rules", "warning", violation.message, source=source,
                                          fix=" ".join(rule.fix) or None))
            continue
        if rule.kind == "forbid":
            state.settings = state.settings.replace(**{setting_id: None})
            state.findings.append(CheckItem("rules", "note", f"dropped {rule.flag} (from the "
                                          f"recipe): {violation.message}", source=source))
            continue
        fixed = from_argv(state.engine, list(rule.fix), state.version).given()
        state.settings = state.settings.replace(**fixed)
        state.findings.append(CheckItem(
            "rules", "note", f"set {' '.join(rule.fix)}: {rule.why or violation.message}",
            source=source))
    for rule in rules:
        if rule.kind == "require" and all(v.rule is not rule for v in check_rules([rule],
                                                                                 argv)):
            state.findings.append(CheckItem("rules", "ok", f"{rule.flag} as {rule.id} requires",
                                          source=rule.sources[0] if rule.sources else None))


def _plan(request: CheckRequest, model: ModelInfo, state: _State,
          chosen: RecipeMatch | None) -> Plan | None:
    from servewise.knowledge.accounting import load_engine_constants
    from servewise.plan.planner import make_plan

    settings = state.settings
    layout_given = any(value is not None for value in (
        settings.tensor_parallel_size, settings.pipeline_parallel_size,
        settings.data_parallel_size))
    memory_key = "mem_fraction_static" if state.engine == "sglang" else "gpu_memory_utilization"
    unknown = unmodelled_speculative(state.engine, settings)
    if unknown is not None:
        state.findings.append(CheckItem(
            "memory", "note", f"speculative method {unknown!r} is not modelled: the plan leaves "
            "out its draft weights and KV pages (the command keeps it)"))
    try:
        planned = plan_settings(state.engine, modelled_settings(state.engine, settings),
                                state.version, model)
        plan = make_plan(model, request.gpu, planned,
                         load_engine_constants(), gpus_per_node=request.gpu.count,
                         nodes=request.nodes, explicit_layout=layout_given,
                         given=given_flags(settings))
        if settings.max_model_len == AUTO:
            plan = _auto_length(request, model, state, plan)
    except SettingsError:
        raise  # settings no engine starts with: a usage error, as from `servewise plan`
    except UsageError as error:
        if not any(finding.message == error.message for finding in state.findings):
            state.findings.append(CheckItem("memory", "error", error.message, fix=error.hint))
        return None
    for note in (*(n for n in plan.notes if n.startswith("--quantization")),
                 *unmodelled_memory(settings)):
        state.findings.append(CheckItem("memory", "note", note))
    if not layout_given:
        state.settings = with_layout(state.engine, state.settings, plan.settings.layout)
        state.findings.append(CheckItem("settings", "note", f"layout {plan.settings.layout.label()}"
                                      " (the planner's first choice)"))
    recommended = plan.recommendation.fraction(memory_key)
    given = getattr(state.settings, memory_key)
    flag = "--mem-fraction-static" if memory_key == "mem_fraction_static" \
        else "--gpu-memory-utilization"
    if given is None and recommended is not None and not request.gpu.is_cpu:
        state.settings = state.settings.replace(**{memory_key: recommended})
        state.findings.append(CheckItem("settings", "note", f"{flag} {recommended}: the planner's "
                                      f"value, leaving {headroom_text(plan)} for workspaces"))
        plan = _replan(request, model, state, plan)
        given = recommended
    # The highest value that still leaves the named workspaces their room (vLLM's
    # recommendation is that value; SGLang's recommends the default when it is lower).
    ceiling = plan.recommendation.highest_fraction_with_headroom
    if given is not None and ceiling is not None and given > ceiling:
        needed = plan.recommendation.workspace_bytes
        origin = f"recipe {chosen.recipe.id}" if chosen and memory_key not in state.user_set \
            else "you"
        trusted = chosen is not None and chosen.recipe.status == "verified" \
            and chosen.hw_match == "exact" and origin != "you"
        if trusted:
            assert chosen is not None
            state.findings.append(CheckItem(
                "memory", "warning", f"the {origin} sets {flag} {given}; the planner estimates "
                f"that leaves less than the {needed / GIB:.2f} GiB the runtime workspaces need, "
                f"and would use {ceiling}. The recipe wins: it was verified on this GPU "
                f"({chosen.recipe.provenance.source})", fix=f"if it runs out of memory at the "
                f"first large batch: {flag} {ceiling}"))
        elif origin == "you":
            state.findings.append(CheckItem(
                "memory", "warning", f"{flag} {given} leaves less than the {needed / GIB:.2f} GiB"
                f" the runtime workspaces need beside the KV cache (the planner would use "
                f"{ceiling})", fix=f"{flag} {ceiling}"))
        else:
            state.settings = state.settings.replace(**{memory_key: ceiling})
            state.findings.append(CheckItem(
                "memory", "warning", f"the {origin} sets {flag} {given}, which leaves less than "
                f"the {needed / GIB:.2f} GiB the runtime workspaces need on {request.gpu.name};"
                f" the planner's {ceiling} wins (the headroom failure is a crash at the "
                "first large batch, not at start-up)", fix=f"{flag} {ceiling}"))
            plan = _replan(request, model, state, plan)
    elif given is not None and ceiling is not None and given != recommended:
        state.findings.append(CheckItem(
            "memory", "ok", f"{flag} {given} leaves the runtime workspaces their room "
            f"(highest with headroom: {ceiling})"))
    startup = plan.startup
    if startup.fits:
        state.findings.append(CheckItem(
            "memory", "ok", f"fits: {startup.weights_bytes_per_gpu / GIB:.1f} GiB weights and "
            f"{startup.kv_cache_bytes / GIB:.1f} GiB KV cache per GPU, "
            f"{startup.kv_cache_tokens:,} tokens, {startup.max_concurrency:.2f} requests of "
            f"{startup.max_model_len:,} tokens at once"))
    else:
        largest = plan.recommendation.largest_context_tokens
        fix = f"--max-model-len {largest}" if largest else (
            plan.notes[0] if plan.notes else "more GPUs or a smaller quantization")
        state.findings.append(memory_failure(request.gpu, state.engine, plan.startup, fix))
    return plan


def _auto_length(request: CheckRequest, model: ModelInfo, state: _State, plan: Plan) -> Plan:
    """``--max-model-len auto``: vLLM keeps the model's own length when one request of it
    fits the KV memory, else lowers it to the largest that fits (vllm-project/vllm#29431,
    ``Auto-fit max_model_len`` in vllm/v1/core/kv_cache_utils.py)."""
    largest = plan.recommendation.largest_context_tokens
    own = model.spec.max_position
    if plan.startup.fits or not largest:
        state.findings.append(CheckItem("settings", "note", "--max-model-len auto keeps the "
                                      f"model's own {plan.startup.max_model_len:,} tokens "
                                      "(one request of it fits the KV cache)"))
        return plan
    state.auto_len = int(largest)
    state.findings.append(CheckItem("settings", "note", f"--max-model-len auto: vLLM lowers the "
                                  f"context from {own or 'the model maximum'} to the "
                                  f"{state.auto_len:,} tokens that fit the KV cache"))
    return _replan(request, model, state, plan)


def _replan(request: CheckRequest, model: ModelInfo, state: _State, previous: Plan) -> Plan:
    from servewise.knowledge.accounting import load_engine_constants
    from servewise.plan.planner import make_plan

    settings = plan_settings(state.engine, modelled_settings(state.engine, state.settings),
                             state.version, model)
    settings = replace(settings, layout=previous.settings.layout)
    if state.auto_len is not None:
        settings = replace(settings, max_model_len=state.auto_len)
    return make_plan(model, request.gpu, settings, load_engine_constants(),
                     gpus_per_node=request.gpu.count, nodes=request.nodes,
                     explicit_layout=True, given=given_flags(state.settings))


def _family(model: ModelInfo, request: CheckRequest) -> ModelFamily | None:
    """The model family (the libraries it needs), by the model's id or the name as given."""
    from servewise.knowledge.models import load_model_table

    table = load_model_table()
    return table.find(model.ref) or table.find(request.model)


def _advise_gate(request: CheckRequest, model: ModelInfo, state: _State) -> None:
    gpu = request.gpu.gpu
    if gpu is None or not gpu.is_cuda:
        return
    family = _family(model, request)
    target = state.image or ("<image or wheel>")
    command = f"servewise gate {target} --gpu {gpu.id}" + (f" --model {family.id}"
                                                           if family else "")
    state.findings.append(CheckItem(
        "build", "note", "no --build given: the kernel gate has not judged the engine build",
        fix=f"{command} (or check again with --build {target})"))


def _pitfalls(request: CheckRequest, model: ModelInfo, state: _State,
              report: BuildReport | None,
              gate: GateResult | None) -> None:
    from servewise.recipes import pitfalls_for

    gpu = request.gpu.gpu
    if gpu is None or not gpu.is_cuda:
        return
    libraries = None
    if report is not None:
        libraries = {lib.provenance.library_id for lib in report.libraries
                     if lib.provenance.library_id}
    argv = to_argv(state.engine, state.settings, state.version)
    judged = {} if gate is None else {v.library_id: v for v in gate.verdicts if v.library_id}
    family = _family(model, request)
    for pitfall in pitfalls_for(cc=str(gpu.cc), family=gpu.family, engine=state.engine,
                                libraries=libraries, argv=argv, env=dict(state.env),
                                model=family.id if family else None, model_known=True,
                                version=release_or_build(state.version)):
        verdicts = [judged[lib] for lib in pitfall.libraries if lib in judged]
        if verdicts and any(v.status == "error" for v in verdicts):
            state.findings.append(CheckItem(
                "pitfalls", "note", f"{pitfall.title} (the build failure above): "
                f"{pitfall.symptom}", fix=pitfall.advice,
                source=pitfall.sources[0] if pitfall.sources else None))
            continue
        if verdicts and all(v.status == "ok" for v in verdicts):
            names = ", ".join(f"{v.library_id} ({v.verdict}: {', '.join(v.matching)})"
                              for v in verdicts)
            state.findings.append(CheckItem(
                "pitfalls", "ok", f"{pitfall.title}: not this build, the gate found code for "
                f"{gpu.arch.sass_name} in {names}",
                source=pitfall.sources[0] if pitfall.sources else None))
            continue
        state.findings.append(CheckItem(
            "pitfalls", "warning", f"{pitfall.title}: {pitfall.symptom}", fix=pitfall.advice,
            source=pitfall.sources[0] if pitfall.sources else None))


def _render(request: CheckRequest, model: ModelInfo, state: _State,
            plan: Plan | None) -> dict[str, Any]:
    from servewise.recipes import Launch, render
    from servewise.recipes.renderers import with_node_flags

    if request.image is not None:
        state.image = request.image
    fmt = request.command_format or ("docker" if state.image else state.engine)
    if fmt in ("docker", "k8s") and state.image is None:
        state.image = official_image(state.engine, state.version)
        which = f"for {state.version}" if state.version else "its newest release: no version"
        state.findings.append(CheckItem(
            "settings", "note", f"image {state.image}: the engine's official image ({which}); "
            "the recipe names none", fix="--image REF (or --build REF) names another"))
    settings = state.settings
    port = request.port if request.port is not None else settings.port
    flags = to_argv(state.engine, settings.replace(model=None, port=None), state.version)
    recipe = state.recipe
    pools = recipe.pools if recipe is not None else ()
    if pools and request.flags:  # the user's own flags go to every pool
        pools = tuple(replace(pool, argv=tuple(with_node_flags(pool.argv, request.flags)))
                      for pool in pools)
    gpus = gpus_per_node(state.engine, state.settings, request.gpu.count, request.nodes)
    launch = Launch(engine=state.engine, model=state.checkpoint or model.ref,
                    argv=tuple(flags), env=state.env, image=state.image,
                    nodes=request.nodes, gpus=gpus,
                    multinode=recipe.multinode if recipe is not None else None,
                    pools=pools, router=recipe.router if recipe is not None else ())
    rendered = render(launch, fmt, port=port)
    if fmt == "k8s":  # the model cache, the Service and a startup probe for the weights
        per_gpu = plan.startup.weights_bytes_per_gpu if plan is not None else -(
            -model.tensor_bytes // max(1, request.gpu.count * request.nodes))
        rendered, note = for_cluster(
            rendered, model_cache=request.model_cache, name=launch.name, port=port,
            engine=state.engine, checkpoint_bytes=model.file_bytes or model.tensor_bytes,
            gpu_weight_bytes=per_gpu, nodes=request.nodes)
        state.findings.append(CheckItem("settings", "note", note, fix="--model-cache pvc:CLAIM "
                                      "or --model-cache hostpath:/PATH keeps it elsewhere"))
    return rendered.to_dict()

