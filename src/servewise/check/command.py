"""What ``check``'s command is made of besides the settings: the image, the GPUs per node."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from servewise.errors import ServewiseError
from servewise.knowledge.flags import EngineSettings

if TYPE_CHECKING:
    from servewise.plan.planner import Plan
    from servewise.recipes.launches import Rendered

GIB = 2**30


def release_or_build(text: str | None) -> str | None:
    """The version in ``text`` when it reads as one (``0.26.1rc1.dev77 (the 07-29 nightly)``
    gives ``0.26.1rc1.dev77``); None for ``nightly``, a tag name or nothing."""
    from servewise.versions import EngineVersion

    if text is None or not text.split():
        return None
    try:
        EngineVersion.coerce(text.split()[0])
    except (ServewiseError, ValueError):
        return None
    return text.split()[0]


def official_image(engine_id: str, version: str | None) -> str:
    """The engine's own image (the first repository engines.toml names), tagged with the
    version when it is a release (``v0.20.0``), else ``latest``."""
    from servewise.knowledge.engines import load_engine_table

    engine = load_engine_table().get(engine_id)
    repository = engine.images[0] if engine is not None and engine.images else engine_id
    found = release_or_build(version)
    release = found is not None and all(part.isdigit() for part in found.split("."))
    return f"{repository}:v{found}" if release else f"{repository}:latest"


def gpus_per_node(engine: str, settings: EngineSettings, count: int, nodes: int) -> int:
    """The GPUs one node of the layout uses (what a pod asks for), at most the node's."""
    used = (settings.tensor_parallel_size or 1) * (settings.pipeline_parallel_size or 1)
    if not (engine == "sglang" and settings.enable_dp_attention):
        used *= settings.data_parallel_size or 1  # SGLang's DP attention runs inside TP
    return max(1, min(count, -(-used // nodes)))


def headroom_text(plan: Plan) -> str:
    """The room the planner's fraction leaves the workspaces, as text."""
    headroom = plan.recommendation.headroom_bytes
    return f"{headroom / GIB:.2f} GiB" if headroom else "room"


def plan_dict(plan: Plan) -> dict[str, Any]:
    """The parts of the plan a check report carries."""
    data = plan.to_dict()
    return {key: data[key] for key in ("layout", "startup", "startup_detail",
                                       "recommendation", "notes", "engine_version")}


def modelled_settings(engine: str, settings: EngineSettings) -> EngineSettings:
    """The settings the planner is given: an unknown speculative method left out."""
    from servewise.plan.settings import unmodelled_speculative, without_speculative

    if unmodelled_speculative(engine, settings) is None:
        return settings
    return without_speculative(settings)


def given_flags(settings: EngineSettings) -> frozenset[str]:
    """The planner flags ``settings`` sets: the model rules were applied before planning."""
    named = {"kv_cache_dtype": "--kv-cache-dtype", "max_model_len": "--max-model-len"}
    return frozenset(flag for key, flag in named.items() if getattr(settings, key) is not None)


def for_cluster(rendered: Rendered, *, model_cache: str | None, name: str, port: int | None,
                engine: str, checkpoint_bytes: int, gpu_weight_bytes: int,
                nodes: int) -> tuple[Rendered, str]:
    """A k8s manifest with the model cache, the Service and the startup probe
    (:func:`servewise.recipes.k8s_serving.serving_manifest`), and the note that says so."""
    from servewise.recipes.k8s_serving import ModelCache, serving_manifest, startup_seconds
    from servewise.recipes.launches import DEFAULT_PORT

    cache = ModelCache.parse(model_cache)
    the_port = port or DEFAULT_PORT[engine]
    rendered = serving_manifest(rendered, name=name, port=the_port,
                                checkpoint_bytes=checkpoint_bytes,
                                gpu_weight_bytes=gpu_weight_bytes, cache=cache,
                                multinode=nodes > 1)
    if cache.kind == "hostPath":
        where = f"hostPath {cache.path}"
    else:
        where = f"claim {cache.name or name + '-hf-cache'}" + (
            " (created with the manifest)" if cache.create else "")
    seconds = startup_seconds(checkpoint_bytes, gpu_weight_bytes)
    note = (f"k8s: the Hugging Face cache is the {where}; Service {name}-api on port "
            f"{the_port}; the startup probe allows {seconds} s ({checkpoint_bytes / GIB:.1f} "
            f"GiB downloaded once, {gpu_weight_bytes / GIB:.1f} GiB loaded per GPU)")
    return rendered, note


__all__ = ["for_cluster", "given_flags", "gpus_per_node", "headroom_text", "modelled_settings",
           "official_image", "plan_dict", "release_or_build"]
