"""The launch a vllm-project/recipes entry describes, put together as the site does.

vLLM's recipe site (github.com/vllm-project/recipes, ``src/lib/command-synthesis.js`` and
``scripts/build-recipes-api.mjs``) turns one model file, a variant, a strategy and a hardware
profile into ``vllm serve`` commands. This module does the same in the same order, so an
imported recipe carries the flags the site shows:

1. ``model.base_args``; the variant's ``extra_args`` (and its exact-GPU override's);
2. the strategy's ``vllm_args`` and parallel size: one node: ``parallel_flag`` = the node's
   GPUs (``single_node_tp``: the variant's or the recipe's ``tp`` cap, else the fewest GPUs,
   a power of two, whose memory holds the variant's ``vram_minimum_gb``, where the site takes
   the whole node as soon as one GPU is too small); several nodes: TP over every
   GPU, TP per node x PP (``tp_pp``) or DP per node (``tp_dp``, ``--data-parallel-size``
   strategies); prefill/decode: each pool's own TP or DEP layout;
3. ``strategy_overrides.<strategy>`` args; 4. hardware overrides (generation, else ``nvidia``;
   a strategy's own generation block replaces the recipe's and the variant's; exact-GPU
   blocks add); 5. the features on by default (``opt_in_features`` off unless the variant's
   ``default_modes`` turns them on; a mode chosen per variant and hardware);
6. the last value of each flag wins, at the flag's first place.

Everything here is pure: dictionaries in, a :class:`Synthesis` out.
"""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from servewise.knowledge import argv as argv_tools

HEAD = "$HEAD_IP"
"""How commands name the first node (the renderers give it its value per format)."""

MAX_NODES = 16
"""The most nodes the site offers for one deployment."""

MAX_POOL_NODES = 4
"""The most nodes per prefill/decode pool the site renders."""

NVL4_ONLY_ENV = frozenset({"VLLM_USE_NCCL_SYMM_MEM", "NCCL_CUMEM_ENABLE", "NCCL_MNNVL_ENABLE",
                           "NCCL_NVLS_ENABLE", "UCX_NET_DEVICES"})
"""Environment the site keeps for prefill/decode only on GB200/GB300 trays."""

NVL4_PROFILES = frozenset({"gb200", "gb300"})

PRECISION_NEEDS = {"nvfp4": ("NVIDIA", "blackwell"), "fp4": ("NVIDIA", "blackwell")}
"""Precisions that run only on one brand and generation unless a variant says otherwise."""

DEFAULT_IMAGE = {"nvidia": "vllm/vllm-openai", "amd": "vllm/vllm-openai-rocm"}
"""The official images per brand (tag: the recipe's minimum version, else ``latest``)."""


@dataclass(frozen=True)
class PoolSynthesis:
    """One prefill/decode pool: role, flags, environment, nodes (0: half a node), mode."""

    role: str
    argv: list[str]
    env: dict[str, str]
    nodes: int
    multinode: str | None


@dataclass(frozen=True)
class Synthesis:
    """What one (model, variant, strategy, hardware, nodes) combination launches."""

    argv: list[str]
    env: dict[str, str]
    gpus: int
    """GPUs per node the command uses."""
    nodes: int = 1
    multinode: str | None = None
    pools: list[PoolSynthesis] = field(default_factory=list)
    router: list[str] = field(default_factory=list)


def generation(profile: Mapping[str, Any]) -> str:
    """The profile's generation (``hopper``, ``blackwell``, ``amd``, …), first of a list."""
    value = profile.get("generation") or profile.get("gpu_generation") or ""
    if isinstance(value, list):
        value = value[0] if value else ""
    return str(value)


def brand(profile: Mapping[str, Any]) -> str:
    """The profile's brand, lower case (``nvidia``, ``amd``, ``google``, ``intel``)."""
    return str(profile.get("brand") or "").lower()


def keyed(table: Any, profile: Mapping[str, Any], hw_id: str) -> Any:
    """A hardware-keyed value: exact profile id, then generation, brand, ``default``."""
    if not isinstance(table, Mapping):
        return None
    for key in (hw_id, generation(profile), brand(profile), "default"):
        if key and key in table:
            return table[key]
    return None


def split_words(args: Sequence[Any]) -> list[str]:
    """Argument lists as the engine receives them: a ``"--flag value"`` item (written so by
    some recipes) is two words, as the site's shell text makes it."""
    words: list[str] = []
    for item in args:
        text = str(item)
        head, _, rest = text.partition(" ")
        if text.startswith("--") and rest.strip() and "=" not in head and not any(
                quote in text for quote in "'\"{["):
            words.extend([head, *shlex.split(rest)])
        else:
            words.append(text)
    return words


def dedupe(argv: Sequence[str]) -> list[str]:
    """The last value of each flag wins, at the flag's first place (the site's dedupeArgs)."""
    segments: list[tuple[str, list[str]]] = []
    index = 0
    while index < len(argv):
        word = argv[index]
        words = [word]
        if word.startswith("-") and "=" not in word and index + 1 < len(argv) \
                and not argv[index + 1].startswith("-"):
            words.append(argv[index + 1])
            index += 1
        key = argv_tools.flag_key(word) if word.startswith("-") else f"\0{index}"
        segments.append((key, words))
        index += 1
    last = {key: words for key, words in segments}
    out: list[str] = []
    seen: set[str] = set()
    for key, _ in segments:
        if key not in seen:
            seen.add(key)
            out.extend(last[key])
    return out


def _strings(value: Any) -> list[str]:
    return split_words(value) if isinstance(value, list) else []


def _env(value: Any) -> dict[str, str]:
    if not isinstance(value, Mapping):
        return {}
    return {str(k): str(v) for k, v in value.items() if v is not None}


def _block(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


AMD_ORG = "amd/"
"""Checkpoints AMD publishes (``amd/gpt-oss-120b-w-mxfp4-a-fp8``, ``amd/Kimi-K2.5-MXFP4``) are
AMD Quark quantizations made for Instinct GPUs: the recipe files describe them "for MI355X
(gfx950)" (vllm-project/recipes ``models/openai/gpt-oss-120b.yaml``, variant ``amd_fp8``)."""

_AMD_WORDS = re.compile(r"\b(?:AMD|Instinct|MI\d{3}X?|gfx9\d\d|ROCm)\b", re.IGNORECASE)
_NVIDIA_WORDS = re.compile(r"\b(?:NVIDIA|CUDA|Hopper|Blackwell|Ampere|Ada|SM\d+|G?[ABHL]\d{2,3}|"
                           r"GB\d{3}|RTX)\b", re.IGNORECASE)


def amd_only(variant: Mapping[str, Any]) -> bool:
    """Whether a variant's checkpoint is made for AMD GPUs only: published by AMD, or a Quark
    quantization described for AMD GPUs with no NVIDIA one named (``EmbeddedLLM/...-MXFP4``,
    "Quark OCP MXFP4 checkpoint for AMD Instinct"). A description that merely names an AMD
    GPU among others ("BF16 on 2x H200 or MI300X") does not make a variant AMD-only."""
    if str(variant.get("model_id") or "").lower().startswith(AMD_ORG):
        return True
    text = str(variant.get("description") or "")
    return "quark" in text.lower() and bool(_AMD_WORDS.search(text)) \
        and not _NVIDIA_WORDS.search(text)


def precision_fits(variant: Mapping[str, Any], profile: Mapping[str, Any]) -> bool:
    """Whether the variant's precision runs on the profile (NVFP4 needs Blackwell; a checkpoint
    made for AMD GPUs, :func:`amd_only`, needs AMD), unless the variant names its hardware."""
    own = variant.get("precision_hardware")
    if isinstance(own, Mapping):
        needs = (own.get("brand"), own.get("generation"))
    elif amd_only(variant):
        needs = ("AMD", None)
    else:
        needs = PRECISION_NEEDS.get(str(variant.get("precision", "")).lower(), (None, None))
    wanted_brand, wanted_generation = needs
    if wanted_brand and str(profile.get("brand")) != wanted_brand:
        return False
    generations = profile.get("generation") or profile.get("gpu_generation")
    listed = generations if isinstance(generations, list) else [generations]
    return not wanted_generation or wanted_generation in listed


def node_vram(profile: Mapping[str, Any]) -> float:
    """The profile's memory per node (GB, as the taxonomy writes it)."""
    value = profile.get("vram_gb")
    return float(value) if isinstance(value, int | float) else 0.0


def vram_minimum(variant: Mapping[str, Any]) -> float:
    """The variant's ``vram_minimum_gb`` (0 when it gives none)."""
    value = variant.get("vram_minimum_gb")
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def min_gpus(model: Mapping[str, Any], key: str, hw_id: str) -> int:
    """The recipe's ``strategy_min_gpus`` floor for a strategy or pool mode on this GPU."""
    table = model.get("strategy_min_gpus")
    if table is None:
        return 0
    if isinstance(table, int):
        return table

    def one(block: Any) -> int:
        if isinstance(block, int):
            return block
        if not isinstance(block, Mapping):
            return 0
        for name in (key, f"multi_node_{key}", f"single_node_{key}"):
            if isinstance(block.get(name), int):
                return int(block[name])
        return 0

    return max(one(table), one(_block(table).get(hw_id)))


def nodes_for(model: Mapping[str, Any], key: str, gpus_per_node: int, hw_id: str) -> int:
    """Nodes that clear the strategy's GPU floor at ``gpus_per_node``."""
    return max(1, math.ceil(min_gpus(model, key, hw_id) / max(1, gpus_per_node)))


def single_node_tp(model: Mapping[str, Any], variant: Mapping[str, Any],
                   profile: Mapping[str, Any], hw_id: str, strategy_id: str) -> int:
    """The TP size of a one-node strategy (the site's resolveSingleNodeTp)."""
    count = int(profile.get("gpu_count") or 1)
    if strategy_id != "single_node_tp":
        return count
    for raw in (variant.get("tp"),
                _block(_block(model.get("strategy_overrides")).get(strategy_id)).get("tp")):
        value = raw if isinstance(raw, int) else keyed(raw, profile, hw_id)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return min(value, count)
    per_gpu = node_vram(profile) / count if count else 0.0
    needed = vram_minimum(variant)
    if not needed or not per_gpu:
        return count
    # The site's resolveSingleNodeTp takes the whole node as soon as one GPU is too small
    # (gpt-oss-120b's 96 GB on 80 GB H100s became TP8, "needs 8 GPUs per node"); servewise
    # asks for what the variant needs: the smallest power of two whose memory holds it.
    tp = 1
    while tp < count and tp * per_gpu < needed:
        tp *= 2
    return min(tp, count)


def features_on(model: Mapping[str, Any], variant_name: str, hw_id: str) -> list[str]:
    """The features on by default: all but the opt-in ones, unless the variant's
    ``default_modes`` turns one on (the site's defaultFeaturesFor)."""
    opt_in = set(model.get("opt_in_features") or [])
    opt_in |= set(_block(model.get("hardware_opt_in_features")).get(hw_id) or [])
    variant = _block(_block(model.get("variants")).get(variant_name))
    forced = set(_block(variant.get("default_modes")))
    return [name for name in _block(model.get("features"))
            if name in forced or name not in opt_in]


def _mode(feature: Mapping[str, Any], name: str, variant: Mapping[str, Any], variant_name: str,
          profile: Mapping[str, Any], hw_id: str) -> Mapping[str, Any] | None:
    modes = _block(feature.get("modes"))
    allowed = []
    for key, mode in modes.items():
        mode = _block(mode)
        only = mode.get("variants")
        if isinstance(only, list) and only and variant_name not in only:
            continue
        gate = _block(mode.get("hardware"))
        if gate.get(generation(profile)) == "unsupported" or gate.get(hw_id) == "unsupported":
            continue
        allowed.append(key)
    if not allowed:
        return None
    for wanted in (_block(variant.get("default_modes")).get(name), feature.get("default_mode")):
        if wanted in allowed:
            return _block(modes[wanted])
    return _block(modes[allowed[0]])


def feature_args(model: Mapping[str, Any], variant_name: str, strategy_id: str,
                 profile: Mapping[str, Any], hw_id: str) -> list[str]:
    """The arguments of the features on by default, each mode chosen for this variant."""
    variant = _block(_block(model.get("variants")).get(variant_name))
    features = _block(model.get("features"))
    args: list[str] = []
    nvidia = brand(profile) == "nvidia"
    for name in features_on(model, variant_name, hw_id):
        feature = _block(features.get(name))
        only = feature.get("strategies")
        if isinstance(only, list) and only and strategy_id not in only:
            continue
        if isinstance(feature.get("modes"), Mapping):
            mode = _mode(feature, name, variant, variant_name, profile, hw_id)
            if mode is not None:
                override = keyed(mode.get("hardware_overrides"), profile, hw_id)
                chosen = _block(override).get("args") if override is not None else None
                args += _strings(chosen if chosen is not None else mode.get("args"))
            continue
        overrides = _block(feature.get("hardware_overrides"))
        override = overrides.get(generation(profile)) or (overrides.get("nvidia") if nvidia
                                                          else None)
        chosen = _block(override).get("args") if override is not None else None
        args += _strings(chosen if chosen is not None else feature.get("args"))
    return args


def _hardware_layers(model: Mapping[str, Any], variant: Mapping[str, Any],
                     strategy_over: Mapping[str, Any], role: str | None,
                     profile: Mapping[str, Any], hw_id: str) -> list[Mapping[str, Any]]:
    """Hardware override blocks in the order the site applies them."""
    gen = generation(profile)
    nvidia = brand(profile) == "nvidia"

    def pick(block: Any) -> Mapping[str, Any] | None:
        table = _block(block)
        found = table.get(gen) or (table.get("nvidia") if nvidia else None)
        return found if isinstance(found, Mapping) else None

    layers: list[Mapping[str, Any]] = []
    own = pick(strategy_over.get("hardware_overrides"))
    if own is not None:
        layers.append(own)
    else:
        layers += [block for block in (pick(model.get("hardware_overrides")),
                                       pick(variant.get("hardware_overrides")))
                   if block is not None]
    exact = _block(_block(strategy_over.get("hardware_overrides")).get(hw_id))
    if exact:
        layers.append(exact)
    if role is not None:
        role_exact = _block(_block(_block(strategy_over.get(role)).get("hardware_overrides"))
                            .get(hw_id))
        if role_exact:
            layers.append(role_exact)
    return layers


def synthesize(
    model: Mapping[str, Any], variant_name: str, strategy_id: str,
    strategy: Mapping[str, Any], hw_id: str, profile: Mapping[str, Any], nodes: int = 1,
    pool_nodes: Mapping[str, int] | None = None,
) -> Synthesis:
    """The command of one combination (``nodes`` > 1 for a multi-node strategy;
    ``pool_nodes`` per role for prefill/decode, None for both pools on one node)."""
    deploy = strategy.get("deploy_type", "single_node")
    if deploy == "pd_cluster":
        return _pd(model, variant_name, strategy_id, strategy, hw_id, profile, pool_nodes)
    args, multinode, gpus = _layout(model, variant_name, strategy_id, strategy, hw_id, profile,
                                    nodes)
    argv = _assemble(model, variant_name, strategy_id, strategy, hw_id, profile, args, None)
    env = _environment(model, variant_name, strategy_id, strategy, hw_id, profile, None)
    if multinode is None:  # an override may change the sizes (the last value wins)
        gpus = min(int(profile.get("gpu_count") or 1), parallel_size(argv))
    return Synthesis(argv=argv, env=env, gpus=gpus, nodes=nodes if multinode else 1,
                     multinode=multinode)


def parallel_size(argv: Sequence[str]) -> int:
    """GPUs one node's command uses: TP x DP x PP of its flags."""
    size = 1
    for flag in ("--tensor-parallel-size", "--data-parallel-size", "--pipeline-parallel-size"):
        value = argv_tools.last_value(argv, flag)
        if value is not None and value.isdigit():
            size *= int(value)
    return size


def _layout(model: Mapping[str, Any], variant_name: str, strategy_id: str,
            strategy: Mapping[str, Any], hw_id: str, profile: Mapping[str, Any],
            nodes: int) -> tuple[list[str], str | None, int]:
    """The strategy's parallel flags (head node's), how nodes join, GPUs per node."""
    variant = _block(_block(model.get("variants")).get(variant_name))
    count = int(profile.get("gpu_count") or 1)
    flag = str(strategy.get("parallel_flag") or "--tensor-parallel-size")
    args = _strings(strategy.get("vllm_args"))
    multi = strategy.get("deploy_type") == "multi_node" and nodes > 1
    if not multi:
        size = single_node_tp(model, variant, profile, hw_id, strategy_id)
        return [*args, flag, str(size)], None, size
    parallelism = strategy.get("parallelism")
    if flag == "--data-parallel-size":
        return [*args, "--data-parallel-size", str(count * nodes), "--data-parallel-size-local",
                str(count), "--data-parallel-address", HEAD], "dp", count
    if parallelism == "tp_pp":
        return [*args, "--tensor-parallel-size", str(count), "--pipeline-parallel-size",
                str(nodes)], "mp", count
    if parallelism == "tp_dp":
        return [*args, "--tensor-parallel-size", str(count), "--data-parallel-size",
                str(nodes), "--data-parallel-size-local", "1", "--data-parallel-address",
                HEAD], "dp", count
    return [*args, "--tensor-parallel-size", str(count * nodes)], "mp", count


def _assemble(model: Mapping[str, Any], variant_name: str, strategy_id: str,
              strategy: Mapping[str, Any], hw_id: str, profile: Mapping[str, Any],
              layout: list[str], role: str | None) -> list[str]:
    spec = _block(model.get("model"))
    variant = _block(_block(model.get("variants")).get(variant_name))
    strategy_over = _block(_block(model.get("strategy_overrides")).get(strategy_id))
    args = _strings(spec.get("base_args")) + _strings(variant.get("extra_args"))
    args += _strings(_block(_block(variant.get("hardware_overrides")).get(hw_id))
                     .get("extra_args"))
    args += layout
    own = _block(strategy_over.get(role)) if role is not None else strategy_over
    args += _strings(own.get("extra_args")) + _strings(own.get("vllm_args"))
    for layer in _hardware_layers(model, variant, strategy_over, role, profile, hw_id):
        args += _strings(layer.get("extra_args"))
    args += feature_args(model, variant_name, strategy_id, profile, hw_id)
    return dedupe(args)


def _environment(model: Mapping[str, Any], variant_name: str, strategy_id: str,
                 strategy: Mapping[str, Any], hw_id: str, profile: Mapping[str, Any],
                 role: str | None) -> dict[str, str]:
    spec = _block(model.get("model"))
    variant = _block(_block(model.get("variants")).get(variant_name))
    strategy_over = _block(_block(model.get("strategy_overrides")).get(strategy_id))
    env = {**_env(spec.get("base_env")), **_env(variant.get("extra_env")),
           **_env(_block(_block(variant.get("hardware_overrides")).get(hw_id))
                  .get("extra_env"))}
    env.update(_env(_block(strategy.get(role)).get("env") if role else strategy.get("env")))
    env.update(_env(strategy_over.get("env")))
    if role is not None:
        env.update(_env(_block(strategy_over.get(role)).get("env")))
    else:
        env.update(_env(strategy_over.get("extra_env")))
    for layer in _hardware_layers(model, variant, strategy_over, role, profile, hw_id):
        env.update(_env(layer.get("extra_env")))
    return env


def _pd(model: Mapping[str, Any], variant_name: str, strategy_id: str,
        strategy: Mapping[str, Any], hw_id: str, profile: Mapping[str, Any],
        pool_nodes: Mapping[str, int] | None) -> Synthesis:
    """Prefill and decode pools and the router (the site's pd_cluster rendering)."""
    count = int(profile.get("gpu_count") or 1)
    strategy_over = _block(_block(model.get("strategy_overrides")).get(strategy_id))
    pools: list[PoolSynthesis] = []
    dp_locals: list[int] = []
    endpoints: list[str] = []
    for role in ("prefill", "decode"):
        nodes = int((pool_nodes or {}).get(role, 0))
        own = _block(strategy_over.get(role))
        parallelism = own.get("parallelism") or _block(strategy.get(role)).get(
            "parallelism") or "tp"
        if parallelism not in pool_modes(model):
            parallelism = pool_modes(model)[0]
        layout = _strings(_block(strategy.get(role)).get("vllm_args"))
        upper = role.upper()
        multinode: str | None = None
        if parallelism == "dep":
            tp = own.get("tp") or _block(strategy.get(role)).get("tp")
            local = max(1, count // int(tp or 1))
            if tp is not None:
                layout += ["--tensor-parallel-size", str(tp)]
            layout += ["--data-parallel-size", str(max(1, nodes) * local),
                       "--data-parallel-size-local", str(local),
                       "--data-parallel-start-rank", "0",
                       "--data-parallel-address", f"${upper}_NODE_1",
                       "--data-parallel-rpc-port", f"${upper}_DP_RPC_PORT"]
            if nodes > 1:
                layout.append("--data-parallel-hybrid-lb")
                multinode = "dp"
            layout.append("--enable-expert-parallel")
            dp_locals.append(local)
            endpoints += [f"http://${upper}_NODE_{n + 1}" for n in range(max(1, nodes))]
        else:
            flag = own.get("parallel_flag") or _block(strategy.get(role)).get(
                "parallel_flag") or strategy.get("parallel_flag") or "--tensor-parallel-size"
            gpus = count // 2 if nodes == 0 else nodes * count
            layout += [str(flag), str(max(1, gpus))]
            if parallelism == "tep":
                layout.append("--enable-expert-parallel")
            if nodes > 1:
                multinode = "mp"
            endpoints.append(f"http://${upper}_NODE_1")
        argv = _assemble(model, variant_name, strategy_id, strategy, hw_id, profile, layout,
                         role)
        env = _environment(model, variant_name, strategy_id, strategy, hw_id, profile, role)
        env.update(_pool_devices(role, nodes, count))
        if hw_id not in NVL4_PROFILES:
            env = {k: v for k, v in env.items() if k not in NVL4_ONLY_ENV}
        pools.append(PoolSynthesis(role, argv, env, nodes, multinode))
    policy = str(_block(strategy.get("router")).get("policy") or "round_robin")
    port = {"prefill": "8001", "decode": "8002"}
    router = ["vllm-router", "--policy", policy, "--vllm-pd-disaggregation"]
    for endpoint in endpoints:
        role = "prefill" if "PREFILL" in endpoint else "decode"
        router += [f"--{role}", f"{endpoint}:{port[role]}"]
    intra = _block(strategy_over.get("router")).get("intra_node_data_parallel_size") \
        or max([*dp_locals, 1])
    router += ["--host", "$ROUTER_HOST", "--port", "$ROUTER_PORT",
               "--intra-node-data-parallel-size", str(intra)]
    total = sum(pool.nodes for pool in pools)
    return Synthesis(argv=pools[0].argv, env=pools[0].env, gpus=count, nodes=max(1, total),
                     pools=pools, router=router)


def _pool_devices(role: str, nodes: int, count: int) -> dict[str, str]:
    if nodes >= 1:
        env = {"CUDA_VISIBLE_DEVICES": ",".join(str(i) for i in range(count))}
        if nodes >= 2:
            env.update(GLOO_SOCKET_IFNAME="$IFACE_NAME", NCCL_SOCKET_IFNAME="$IFACE_NAME")
        return env
    half = count // 2
    ids = range(half) if role == "prefill" else range(half, count)
    return {"CUDA_VISIBLE_DEVICES": ",".join(str(i) for i in ids)} if half else {}


def pool_modes(model: Mapping[str, Any]) -> list[str]:
    """The pool layouts a recipe offers for prefill/decode: from the suffixes of its
    strategies (``*_tp``/``*_tp_pp`` TP, ``*_tep`` TEP, ``*_dep`` DEP), narrowed by
    ``strategy_overrides.pd_cluster.pool_modes``."""
    listed = [str(s) for s in model.get("compatible_strategies") or []]
    modes = [mode for mode, suffixes in (("tp", ("_tp", "_tp_pp")), ("tep", ("_tep",)),
                                         ("dep", ("_dep",)))
             if any(s.endswith(suffixes) for s in listed)] or ["tp"]
    narrow = _block(_block(model.get("strategy_overrides")).get("pd_cluster")).get("pool_modes")
    if isinstance(narrow, list):
        kept = [mode for mode in modes if mode in narrow]
        if kept:
            return kept
    return modes


def pd_nodes(model: Mapping[str, Any], variant: Mapping[str, Any], strategy: Mapping[str, Any],
             profile: Mapping[str, Any], hw_id: str) -> dict[str, int] | str | None:
    """Nodes per pool (the site's pickPdNodes): None when both pools fit one node (each
    needs the variant's memory), else whole nodes per role; ``"skip"`` past 4 per role."""
    count = int(profile.get("gpu_count") or 0)
    vram, needed = node_vram(profile), vram_minimum(variant)
    if count >= 2 and vram >= 2 * needed:
        return None
    if vram <= 0 or needed <= 0:
        return None
    per_role = math.ceil(needed / vram)
    if per_role > MAX_POOL_NODES:
        return "skip"
    found: dict[str, int] = {}
    over = _block(_block(model.get("strategy_overrides")).get("pd_cluster"))
    for role in ("prefill", "decode"):
        mode = _block(over.get(role)).get("parallelism") or _block(strategy.get(role)).get(
            "parallelism") or "tp"
        found[role] = max(per_role, nodes_for(model, str(mode), count, hw_id))
    return found


__all__ = [
    "AMD_ORG", "HEAD", "MAX_NODES", "PoolSynthesis", "Synthesis", "amd_only", "brand",
    "dedupe", "feature_args", "features_on", "generation", "keyed", "min_gpus", "node_vram",
    "nodes_for", "pd_nodes", "pool_modes", "precision_fits", "single_node_tp", "split_words",
    "synthesize", "vram_minimum",
]
