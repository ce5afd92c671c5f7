"""Regenerate the bundled model cards: real config.json facts plus a derived tensor list.

Usage (with the engine environment's python, which has torch and transformers 5)::

    .venv-engine/bin/python scripts/make_model_cards.py [--shared ../shared]
        [--aiconfigurator-core WHEEL] [--out src/servewise/knowledge/data/cards] [ID ...]

Each card's ``config.json`` (and ``hf_quant_config.json``) is copied verbatim from a source
named in :data:`CARDS`: the project's ``shared/data/configs`` folder, or the model-config
folder of the ``aiconfigurator-core`` 0.12.0 wheel from PyPI (``pip download --no-deps
aiconfigurator-core==0.12.0``). The Hugging Face Hub is not reachable here, so the tensor
list is *derived*, exactly, never estimated from a parameter count:

1. transformers instantiates the architecture from the config on the ``meta`` device (no
   memory, no weights), and ``revert_weight_conversion`` turns its state dict back into
   the checkpoint's own tensor names and shapes (per-expert tensors, DeepSeek-V4 native
   names);
2. the checkpoint's quantization layout is applied per tensor, as its
   ``quantization_config`` / ``hf_quant_config.json`` says: FP8 block (``F8_E4M3`` weights,
   one ``F32`` — or ``F8_E8M0`` for ``scale_fmt: ue8m0`` — scale per 128x128 block),
   DeepSeek FP4 experts (``I8`` packed pairs + ``F8_E8M0`` scale per 32), NVFP4 (``U8``
   packed pairs, ``F8_E4M3`` scale per 16, ``F32`` global scales), ModelOpt FP8 per-tensor,
   MXFP4 (gpt-oss ``*_blocks``/``*_scales``);
3. layers the checkpoint holds but transformers leaves out (MTP draft layers) are added as
   one more decoder layer under the checkpoint's MTP prefix.

The card stores tensors with the expert index collapsed (``experts.*`` and a count) and is
written as gzip-compressed JSON (standard library, so the engine environment can write it),
with its sources and this method in ``how``.
"""

from __future__ import annotations

import argparse
import copy
import gzip
import json
import math
import os
import re
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ROOT = Path(__file__).resolve().parents[1]
AIC = "aiconfigurator_core/model_configs/"
AIC_SOURCE = "https://pypi.org/project/aiconfigurator-core/0.12.0/"
SHARED_SOURCE = "data/configs/"

HOW = (
    "config.json copied verbatim from the source; tensor list derived: transformers {tv} "
    "built the architecture on the meta device, revert_weight_conversion gave the "
    "checkpoint's tensor names, and the {layout} quantization layout was applied per "
    "tensor (scripts/make_model_cards.py). {extra}"
)

Row = tuple[str, str, tuple[int, ...]]

#: Every card: id, repository, where its config comes from, layout, figures to check.
CARDS: list[dict[str, Any]] = [
    {"id": "llama-3.1-8b-instruct", "repo": "meta-llama/Llama-3.1-8B-Instruct",
     "config": "shared:meta-llama--Llama-3.1-8B-Instruct", "layout": "none"},
    {"id": "llama-3.1-70b", "repo": "meta-llama/Meta-Llama-3.1-70B",
     "config": "aic:meta-llama--Meta-Llama-3.1-70B", "layout": "none"},
    {"id": "llama-3.1-405b", "repo": "meta-llama/Meta-Llama-3.1-405B",
     "config": "shared:meta-llama--Meta-Llama-3.1-405B", "layout": "none"},
    {"id": "qwen3-32b", "repo": "Qwen/Qwen3-32B", "config": "aic:Qwen--Qwen3-32B",
     "layout": "none"},
    {"id": "qwen3-235b-a22b-fp8", "repo": "Qwen/Qwen3-235B-A22B-FP8",
     "config": "shared:Qwen--Qwen3-235B-A22B-FP8", "layout": "fp8_block"},
    {"id": "mixtral-8x7b", "repo": "mistralai/Mixtral-8x7B-v0.1",
     "config": "aic:mistralai--Mixtral-8x7B-v0.1", "layout": "none"},
    {"id": "gemma-3-27b-it", "repo": "google/gemma-3-27b-it",
     "config": "shared:google--gemma-3-27b-it", "layout": "none"},
    {"id": "gpt-oss-120b", "repo": "openai/gpt-oss-120b", "config": "shared:openai--gpt-oss-120b",
     "layout": "mxfp4"},
    {"id": "gpt-oss-20b", "repo": "openai/gpt-oss-20b", "config": "aic:openai--gpt-oss-20b",
     "layout": "mxfp4"},
    {"id": "deepseek-r1", "repo": "deepseek-ai/DeepSeek-R1",
     "config": "shared:deepseek-ai--DeepSeek-R1", "layout": "fp8_block", "mtp": "layers"},
    {"id": "kimi-k2-instruct", "repo": "moonshotai/Kimi-K2-Instruct",
     "config": "aic:moonshotai--Kimi-K2-Instruct", "layout": "fp8_block", "mtp": "layers"},
    {"id": "deepseek-v4-flash", "repo": "deepseek-ai/DeepSeek-V4-Flash",
     "aliases": ["deepseek-ai/DeepSeek-V4-Flash-0731"],
     "config": "shared:deepseek-ai--DeepSeek-V4-Flash", "layout": "dsv4", "mtp": "dsv4"},
    {"id": "deepseek-v4-flash-0731-nvfp4", "repo": "MJPansa/DeepSeek-V4-Flash-0731-NVFP4",
     "aliases": ["nvidia/DeepSeek-V4-Flash-NVFP4", "DeepSeek-V4-Flash-0731-NVFP4"],
     "config": "aic:nvidia--DeepSeek-V4-Flash-NVFP4", "layout": "dsv4_nvfp4", "mtp": "dsv4",
     "more_sources": ["seeds/000_bdb190ccbbf7e18b.txt"],
     "files": 48, "seed_bytes": 175_600_000_000,
     "extra": "The seed's checkpoint (MJPansa/DeepSeek-V4-Flash-0731-NVFP4: 48 safetensors, "
              "175.6 GB) has no published config here: nvidia/DeepSeek-V4-Flash-NVFP4's "
              "config is used, with the one layout of those tried that agrees with the "
              "seed's 175.6 GB (174.5 GB, -0.6%): NVFP4 (U8 pairs, F8_E4M3 scale per 16, "
              "F32 global scales) for every routed expert including the MTP layer's, BF16 "
              "for everything else (ModelOpt exports unquantized modules in the BF16 it "
              "dequantized to). nvidia's own hf_quant_config also excludes mtp.* (183.8 GB) "
              "and keeping the base FP8 outside the experts gives 168.1 GB."},
    {"id": "qwen3.6-35b-a3b-nvfp4", "repo": "nvidia/Qwen3.6-35B-A3B-NVFP4",
     "config": "shared:nvidia--Qwen3.6-35B-A3B-NVFP4", "layout": "modelopt", "mtp": "qwen"},
    {"id": "minimax-m2.5", "repo": "MiniMaxAI/MiniMax-M2.5", "aliases": ["minimax-m2"],
     "config": "aic:MiniMaxAI--MiniMax-M2.5", "layout": "fp8_block",
     "extra": "The checkpoint's MTP modules (use_mtp, num_mtp_modules 3) are not in the "
              "tensor list: no source here names their tensors."},
    {"id": "llama-4-scout", "repo": "meta-llama/Llama-4-Scout-17B-16E-Instruct",
     "config": "aic:meta-llama--Llama-4-Scout-17B-16E-Instruct", "layout": "none"},
]


def read_source(where: str, shared: Path, aic_wheel: Path | None) -> tuple[dict[str, Any],
                                                                          dict[str, Any] | None,
                                                                          list[str]]:
    """The config (and hf_quant_config) of a card, with the sources to cite."""
    kind, name = where.split(":", 1)
    if kind == "shared":
        folder = shared / "data" / "configs" / name
        config = json.loads((folder / "config.json").read_text())
        quant_path = folder / "hf_quant_config.json"
        quant = json.loads(quant_path.read_text()) if quant_path.is_file() else None
        return config, quant, [f"{SHARED_SOURCE}{name}/config.json"]
    if aic_wheel is None:
        raise SystemExit(f"{where}: pass --aiconfigurator-core WHEEL")
    with zipfile.ZipFile(aic_wheel) as wheel:
        config = json.loads(wheel.read(f"{AIC}{name}_config.json"))
        try:
            quant = json.loads(wheel.read(f"{AIC}{name}_hf_quant_config.json"))
        except KeyError:
            quant = None
    return config, quant, [f"{AIC_SOURCE}#{AIC}{name}_config.json"]


def meta_tensors(config_dict: dict[str, Any], extra_layers: int = 0) -> list[Row]:
    """Checkpoint names, dtypes and shapes of the architecture (meta device)."""
    import tempfile

    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForImageTextToText
    from transformers.core_model_loading import revert_weight_conversion

    document = copy.deepcopy(config_dict)
    document.pop("quantization_config", None)
    document.pop("auto_map", None)
    if document.get("model_type") == "kimi_k2":
        # Kimi K2 ships remote code for the DeepSeek-V3 architecture it uses unchanged
        document["model_type"] = "deepseek_v3"
    text = document.get("text_config")
    if extra_layers:
        target = text if isinstance(text, dict) else document
        target["num_hidden_layers"] = target["num_hidden_layers"] + extra_layers
        if isinstance(target.get("layer_types"), list):
            # the draft layer of Qwen3-Next / Qwen3.5 is a full-attention layer
            target["layer_types"] = target["layer_types"] + ["full_attention"] * extra_layers
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "config.json").write_text(json.dumps(document))
        config = AutoConfig.from_pretrained(tmp)
    dtype = getattr(torch, str(document.get("torch_dtype") or document.get("dtype")
                               or (text or {}).get("dtype") or "bfloat16"))
    with torch.device("meta"):
        try:
            model = AutoModelForImageTextToText.from_config(config, dtype=dtype)
        except (ValueError, KeyError):
            model = AutoModelForCausalLM.from_config(config, dtype=dtype)
    state = revert_weight_conversion(model, model.state_dict())
    if getattr(config.get_text_config(), "tie_word_embeddings", False):
        # a tied head is stored once, as the embedding matrix
        state = {k: v for k, v in state.items() if not k.endswith("lm_head.weight")}
    names = {"torch.bfloat16": "BF16", "torch.float32": "F32", "torch.float16": "F16",
             "torch.int64": "I64", "torch.int32": "I32", "torch.uint8": "U8", "torch.int8": "I8"}
    return [(name, names[str(t.dtype)], tuple(t.shape)) for name, t in state.items()]


def _is_linear(name: str, shape: tuple[int, ...]) -> bool:
    if len(shape) != 2 or not name.endswith(".weight"):
        return False
    if re.search(r"norm|embed|lm_head|(^|\.)head\.|vision|visual|multi_modal|\.gate\.weight$|"
                 r"\.router\.|weights_proj", name):
        return False
    return re.search(r"(^|\.)layers\.\d+\.", name) is not None


def _blocks(shape: tuple[int, ...], block: int) -> tuple[int, int]:
    return (math.ceil(shape[0] / block), math.ceil(shape[1] / block))


def fp8_block(row: Row, scale_dtype: str = "F32", scale_name: str = "_scale_inv") -> list[Row]:
    """FP8 e4m3 weight plus one scale per 128x128 block."""
    name, _dtype, shape = row
    return [(name, "F8_E4M3", shape),
            (name + scale_name if scale_name.startswith("_") else
             name[: -len(".weight")] + scale_name, scale_dtype, _blocks(shape, 128))]


def deepseek_fp4(row: Row) -> list[Row]:
    """DeepSeek-V4 FP4 experts: two values per I8 byte, one E8M0 scale per 32."""
    name, _dtype, (out, inp) = row
    return [(name, "I8", (out, inp // 2)),
            (name[: -len(".weight")] + ".scale", "F8_E8M0", (out, inp // 32))]


def nvfp4(row: Row, input_scale: bool = True) -> list[Row]:
    """ModelOpt NVFP4: packed U8 pairs, F8_E4M3 scale per 16, F32 global scales."""
    name, _dtype, (out, inp) = row
    base = name[: -len(".weight")]
    rows = [(name, "U8", (out, inp // 2)), (base + ".weight_scale", "F8_E4M3", (out, inp // 16)),
            (base + ".weight_scale_2", "F32", ())]
    if input_scale:
        rows.append((base + ".input_scale", "F32", ()))
    return rows


def fp8_tensor(row: Row) -> list[Row]:
    """ModelOpt FP8 per-tensor: E4M3 weight, F32 weight and input scales."""
    name, _dtype, shape = row
    base = name[: -len(".weight")]
    return [(name, "F8_E4M3", shape), (base + ".weight_scale", "F32", ()),
            (base + ".input_scale", "F32", ())]


def layout_fp8_block(rows: list[Row], config: dict[str, Any]) -> list[Row]:
    """Block FP8 (DeepSeek V3/R1, Kimi K2, Qwen3 FP8): modules_to_not_convert stay BF16."""
    skip = tuple(config.get("quantization_config", {}).get("modules_to_not_convert") or ())
    out: list[Row] = []
    for row in rows:
        name = row[0]
        if _is_linear(name, row[2]) and not any(name.startswith(s + ".") or name == s
                                                for s in skip):
            out.extend(fp8_block(row))
        elif name.endswith("e_score_correction_bias"):
            out.append((name, "F32", row[2]))
        else:
            out.append(row)
    return out


def layout_mxfp4(rows: list[Row], config: dict[str, Any]) -> list[Row]:
    """gpt-oss: experts as U8 blocks of 32 FP4 values (16 bytes) and U8 E8M0 scales."""
    out: list[Row] = []
    for name, dtype, shape in rows:
        if name.endswith("experts.gate_up_proj") or name.endswith("experts.down_proj"):
            experts, inp, outp = shape  # transformers keeps [E, in, out]
            out.append((name + "_blocks", "U8", (experts, outp, inp // 32, 16)))
            out.append((name + "_scales", "U8", (experts, outp, inp // 32)))
        elif name.endswith("experts.gate_up_proj_bias") or name.endswith("experts.down_proj_bias"):
            out.append((name, dtype, shape))
        else:
            out.append((name, dtype, shape))
    return out


def dsv4_native(rows: list[Row]) -> list[Row]:
    """DeepSeek-V4's checkpoint names have no ``model.`` prefix and flat hc_head names."""
    out = []
    for name, dtype, shape in rows:
        name = re.sub(r"^model\.", "", name)
        name = {"embed_tokens.weight": "embed.weight", "hc_head.hc_fn": "hc_head_fn",
                "hc_head.hc_base": "hc_head_base", "hc_head.hc_scale": "hc_head_scale"}.get(
            name, name)
        if re.search(r"hc_(attn|ffn|head)_(fn|base|scale)$|hc_head_", name):
            dtype = "F32"
        out.append((name, dtype, shape))
    return out


def layout_dsv4(rows: list[Row], config: dict[str, Any], experts: Callable[[Row], list[Row]]
                ) -> list[Row]:
    """FP8 (E8M0 block scales) for linear layers, the given format for routed experts."""
    out: list[Row] = []
    for row in rows:
        name = row[0]
        if ".ffn.experts." in name and name.endswith(".weight"):
            out.extend(experts(row))
        elif _is_linear(name, row[2]):
            out.extend(fp8_block(row, "F8_E8M0", ".scale"))
        else:
            out.append(row)
    return out


def layout_modelopt(rows: list[Row], quant: dict[str, Any]) -> list[Row]:
    """ModelOpt MIXED_PRECISION: each quantized layer prefix names its algorithm."""
    layers = quant["quantization"].get("quantized_layers", {})
    out: list[Row] = []
    for row in rows:
        name = row[0]
        module = name[: -len(".weight")] if name.endswith(".weight") else name
        algo = None
        if len(row[2]) == 2 and name.endswith(".weight"):
            for prefix, entry in layers.items():
                if module == prefix or module.startswith(prefix + "."):
                    algo = entry["quant_algo"]
                    break
        if algo in ("NVFP4", "W4A16_NVFP4"):
            out.extend(nvfp4(row, input_scale=algo == "NVFP4"))
        elif algo == "FP8":
            out.extend(fp8_tensor(row))
        else:
            out.append(row)
    return out


def mtp_rows(card: dict[str, Any], config: dict[str, Any], base: list[Row]) -> list[Row]:
    """The draft (MTP) layer a checkpoint keeps but transformers does not build."""
    kind = card.get("mtp")
    if not kind:
        return []
    text = config.get("text_config", config)
    layers = text["num_hidden_layers"]
    wide = meta_tensors(config, extra_layers=1)
    if kind == "qwen":
        prefix = re.compile(rf"^(model\.language_model\.)?layers\.{layers}\.|"
                            rf"^model\.language_model\.layers\.{layers}\.")
        block = [(re.sub(r"^model\.language_model\.layers\.\d+\.", "mtp.layers.0.", n), d, s)
                 for n, d, s in wide if prefix.search(n)]
        hidden = text["hidden_size"]
        block += [("mtp.fc.weight", "BF16", (hidden, 2 * hidden)),
                  ("mtp.pre_fc_norm_embedding.weight", "BF16", (hidden,)),
                  ("mtp.pre_fc_norm_hidden.weight", "BF16", (hidden,)),
                  ("mtp.norm.weight", "BF16", (hidden,))]
        return block
    if kind == "layers":
        # DeepSeek V3 / R1 / Kimi K2: layer N (= num_hidden_layers) is the MTP module
        hidden = text["hidden_size"]
        vocab = text["vocab_size"]
        block = [r for r in wide if r[0].startswith(f"model.layers.{layers}.")]
        head = f"model.layers.{layers}."
        block += [(head + "enorm.weight", "BF16", (hidden,)),
                  (head + "hnorm.weight", "BF16", (hidden,)),
                  (head + "eh_proj.weight", "BF16", (hidden, 2 * hidden)),
                  (head + "embed_tokens.weight", "BF16", (vocab, hidden)),
                  (head + "shared_head.norm.weight", "BF16", (hidden,)),
                  (head + "shared_head.head.weight", "BF16", (vocab, hidden))]
        return block
    # DeepSeek V4: mtp.0.* holds a decoder layer, e/h projections, norms, hc head
    hidden = text["hidden_size"]
    block = [(re.sub(rf"^model\.layers\.{layers}\.", "mtp.0.", n), d, s)
             for n, d, s in wide if n.startswith(f"model.layers.{layers}.")]
    hc = text.get("hc_mult", 4)
    block += [("mtp.0.enorm.weight", "BF16", (hidden,)), ("mtp.0.hnorm.weight", "BF16", (hidden,)),
              ("mtp.0.e_proj.weight", "BF16", (hidden, hidden)),
              ("mtp.0.h_proj.weight", "BF16", (hidden, hidden)),
              ("mtp.0.norm.weight", "BF16", (hidden,)),
              ("mtp.0.hc_head_fn", "F32", (hc, hc * hidden)),
              ("mtp.0.hc_head_base", "F32", (hc,)), ("mtp.0.hc_head_scale", "F32", (1,))]
    return block


DTYPE_BITS = {"BF16": 16, "F16": 16, "F32": 32, "I64": 64, "I32": 32, "U8": 8, "I8": 8,
              "F8_E4M3": 8, "F8_E8M0": 8}


def nbytes(dtype: str, shape: tuple[int, ...]) -> int:
    """Bytes of a tensor."""
    return math.prod(shape) * DTYPE_BITS[dtype] // 8


def build(card: dict[str, Any], shared: Path, aic: Path | None) -> dict[str, Any]:
    """One card as a JSON-ready document."""
    import transformers

    config, quant, sources = read_source(card["config"], shared, aic)
    rows = meta_tensors(config)
    layout = card["layout"]
    if card.get("mtp"):
        rows += mtp_rows(card, config, rows)
    if layout == "fp8_block":
        rows = layout_fp8_block(rows, config)
    elif layout == "mxfp4":
        rows = layout_mxfp4(rows, config)
    elif layout == "dsv4":
        rows = layout_dsv4(dsv4_native(rows), config, deepseek_fp4)
    elif layout == "dsv4_nvfp4":
        # every routed expert (the MTP layer's too) NVFP4, everything else BF16
        rows = [r for row in dsv4_native(rows) for r in
                (nvfp4(row) if ".ffn.experts." in row[0] and row[0].endswith(".weight")
                 else [row])]
    elif layout == "modelopt":
        assert quant is not None
        rows = layout_modelopt(rows, quant)
    groups: dict[tuple[str, str, tuple[int, ...]], int] = {}
    for name, dtype, shape in rows:
        key = (re.sub(r"(\.experts\.)(\d+)(\.)", r"\1*\3", name), dtype, tuple(shape))
        groups[key] = groups.get(key, 0) + 1
    tensors = [[name, dtype, list(shape), count] for (name, dtype, shape), count in groups.items()]
    total = sum(nbytes(d, tuple(s)) * c for _, d, s, c in tensors)
    if quant is not None:
        sources.append(sources[0].replace("_config.json", "_hf_quant_config.json")
                       if "#" in sources[0] else
                       sources[0].replace("config.json", "hf_quant_config.json"))
    how = HOW.format(tv=transformers.__version__, layout=layout, extra=card.get("extra", ""))
    return {
        "id": card["id"],
        "repo": card["repo"],
        "aliases": card.get("aliases", []),
        "config": config,
        "quant_config": quant,
        "tensors": tensors,
        "tensor_bytes": total,
        "files": card.get("files"),
        "sources": sources + card.get("more_sources", [])
        + [f"https://huggingface.co/{card['repo']}"],
        "how": how.strip(),
    }


def main(argv: list[str] | None = None) -> int:
    """Write the cards (all, or the ids given)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("ids", nargs="*")
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    parser.add_argument("--aiconfigurator-core", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=ROOT / "src/servewise/knowledge/data/cards")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if not args.shared.is_dir():
        args.shared = Path("/work/shared")
    args.out.mkdir(parents=True, exist_ok=True)
    index = []
    for card in CARDS:
        if args.ids and card["id"] not in args.ids:
            continue
        print(f"{card['id']} ...", flush=True)
        document = build(card, args.shared, args.aiconfigurator_core)
        data = json.dumps(document, separators=(",", ":"), sort_keys=True).encode()
        blob = gzip.compress(data, compresslevel=9, mtime=0)
        (args.out / f"{card['id']}.json.gz").write_bytes(blob)
        index.append(document)
        print(f"{card['id']}: {len(document['tensors'])} entries, "
              f"{document['tensor_bytes'] / 1e9:.2f} GB, {len(blob)} bytes compressed")
    if not args.ids:
        (args.out.parent / "cards.toml").write_text(index_toml(index))
    return 0


def _toml_list(items: list[str]) -> str:
    return "[" + ", ".join(json.dumps(item) for item in items) + "]"


def index_toml(cards: list[dict[str, Any]]) -> str:
    """``cards.toml``: what the loader needs to find a card without opening it."""
    lines = [
        "# Bundled model cards: one gzip-compressed JSON per card in cards/ (real config.json,",
        "# derived tensor list). Written by scripts/make_model_cards.py; do not edit by hand.",
        "#   id, repo, aliases  names that find the card",
        "#   file               the card in cards/",
        "#   tensor_bytes       sum of the card's tensors (checked by the tests)",
        "#   files              safetensors files of the checkpoint, where a source states it",
        "#   source, how        where the facts come from and how the tensor list was obtained",
        "",
        "version = 1",
    ]
    for card in cards:
        lines += [
            "",
            "[[card]]",
            f"id = {json.dumps(card['id'])}",
            f"repo = {json.dumps(card['repo'])}",
            f"aliases = {_toml_list(card['aliases'])}",
            f"file = {json.dumps(card['id'] + '.json.gz')}",
            f"tensor_bytes = {card['tensor_bytes']}",
        ]
        if card.get("files"):
            lines.append(f"files = {card['files']}")
        lines += [f"source = {_toml_list(card['sources'])}", f"how = {json.dumps(card['how'])}"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
