"""Write a tiny random-weight Llama model, with its own tokenizer, for the engine tests.

Usage (with the engine environment's python, which has ``torch``, ``transformers`` and
``tokenizers``)::

    .venv-engine/bin/python scripts/make_tiny_model.py OUT_DIR [--head-dim 64] [--layers 2]
        [--heads 4] [--kv-heads 2] [--hidden N] [--intermediate N] [--vocab 512] [--seed 0]
        [--max-position 4096] [--dtype bfloat16]

The model uses grouped-query attention (4 query heads sharing 2 KV heads by default). The
tokenizer is a byte-level BPE trained here, on a fixed built-in text, with the ``tokenizers``
library; nothing is fetched from a hub (``HF_HUB_OFFLINE=1``). The output directory holds
``config.json``, ``generation_config.json``, ``model.safetensors``, ``tokenizer.json`` and
``tokenizer_config.json`` (with a chat template and the special tokens), which
``transformers.AutoTokenizer`` and vLLM load. The same arguments give the same bytes.

``--head-dim 16`` writes a model that vLLM's CPU attention refuses
(``Unsupported CPU attention configuration: head_dim=16``): a real failure for tests.

``--sliding-window W --full-every K`` makes a hybrid: every K-th layer full attention, the
others a W-token sliding window (``layer_types`` in ``config.json``, which vLLM's Llama
honours). ``--arch deepseek_v2`` writes a multi-head latent attention (MLA) model instead
(``--kv-lora-rank``, ``--rope-dim``, ``--nope-dim``, ``--v-head-dim``; dense MLP layers only).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

BOS = "<s>"
EOS = "</s>"
PAD = "<pad>"
ROLE_TOKENS = ("<|system|>", "<|user|>", "<|assistant|>")
SPECIAL_TOKENS = (PAD, BOS, EOS, *ROLE_TOKENS)

CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{% for message in messages %}"
    "{{ '<|' + message['role'] + '|>\n' + message['content'] + eos_token + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% endif %}"
)

_WORD_TEXT = """
the a an model engine server token tokens request response memory cache block page gpu cpu
tensor layer head heads attention query key value weight weights batch sequence length
context prompt completion chat user assistant system hello world serving vllm sglang llama
config json file image registry layer blob manifest digest fast slow small large tiny random
test tests check error warning info debug start stop one two three four five six seven eight
nine ten zero is are was be to of and or in on for with at by from this that it not yes no
ok run runs ran load loads loaded fit fits
"""
_WORDS = tuple(_WORD_TEXT.split())


def corpus(lines: int = 4000) -> list[str]:
    """Return a fixed training text for the tokenizer: word sequences from a small vocabulary.

    A linear congruential generator picks the words, so the text (and hence the trained
    tokenizer) is the same on every machine and Python version.
    """
    state = 12345
    out: list[str] = []
    for _ in range(lines):
        words: list[str] = []
        for _ in range(12):
            state = (1103515245 * state + 12345) % (2**31)
            words.append(_WORDS[state % len(_WORDS)])
        sentence = " ".join(words)
        out.append(sentence[0].upper() + sentence[1:] + ".")
    out.extend(["0 1 2 3 4 5 6 7 8 9 10 100 1000", "Hello, world! How are you?"])
    return out


def train_tokenizer(vocab_size: int) -> object:
    """Train a byte-level BPE tokenizer of ``vocab_size`` entries on :func:`corpus`."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(corpus(), trainer=trainer)
    bos_id = tok.token_to_id(BOS)
    tok.post_processor = processors.TemplateProcessing(
        single=f"{BOS} $A",
        pair=f"{BOS} $A {BOS} $B",
        special_tokens=[(BOS, bos_id)],
    )
    return tok


def parse_args(argv: list[str]) -> argparse.Namespace:
    """Parse the command line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    p.add_argument("out_dir", type=Path)
    p.add_argument("--head-dim", type=int, default=64)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--heads", type=int, default=4, help="query heads")
    p.add_argument("--kv-heads", type=int, default=2, help="key/value heads (GQA)")
    p.add_argument("--hidden", type=int, default=None, help="default: heads * head_dim")
    p.add_argument("--intermediate", type=int, default=None, help="default: 2 * hidden")
    p.add_argument("--vocab", type=int, default=512)
    p.add_argument("--max-position", type=int, default=4096)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dtype", choices=("bfloat16", "float16", "float32"), default="bfloat16")
    p.add_argument("--arch", choices=("llama", "deepseek_v2"), default="llama")
    p.add_argument("--sliding-window", type=int, default=0, help="window of sliding layers")
    p.add_argument("--full-every", type=int, default=0,
                   help="with --sliding-window: every K-th layer is full attention")
    p.add_argument("--kv-lora-rank", type=int, default=512, help="MLA latent width")
    p.add_argument("--rope-dim", type=int, default=64, help="MLA qk_rope_head_dim")
    p.add_argument("--nope-dim", type=int, default=128, help="MLA qk_nope_head_dim")
    p.add_argument("--v-head-dim", type=int, default=128, help="MLA v_head_dim")
    return p.parse_args(argv)


def build_config(args: argparse.Namespace, tokenizer: object, hidden: int,
                 intermediate: int) -> object:
    """The transformers config for ``--arch``."""
    from transformers import DeepseekV2Config, LlamaConfig

    common = {
        "vocab_size": len(tokenizer),  # type: ignore[arg-type]
        "hidden_size": hidden,
        "intermediate_size": intermediate,
        "num_hidden_layers": args.layers,
        "num_attention_heads": args.heads,
        "max_position_embeddings": args.max_position,
        "bos_token_id": tokenizer.bos_token_id,  # type: ignore[attr-defined]
        "eos_token_id": tokenizer.eos_token_id,  # type: ignore[attr-defined]
        "pad_token_id": tokenizer.pad_token_id,  # type: ignore[attr-defined]
        "tie_word_embeddings": False,
        "dtype": args.dtype,
    }
    if args.arch == "deepseek_v2":
        config = DeepseekV2Config(
            **common,
            num_key_value_heads=args.heads,
            kv_lora_rank=args.kv_lora_rank,
            q_lora_rank=None,
            qk_rope_head_dim=args.rope_dim,
            qk_nope_head_dim=args.nope_dim,
            v_head_dim=args.v_head_dim,
            head_dim=args.rope_dim,
            n_routed_experts=4,
            n_shared_experts=1,
            num_experts_per_tok=2,
            moe_intermediate_size=intermediate // 2,
            first_k_dense_replace=args.layers,
            rope_scaling=None,
        )
        config.architectures = ["DeepseekV2ForCausalLM"]
        return config
    config = LlamaConfig(**common, num_key_value_heads=args.kv_heads, head_dim=args.head_dim)
    if args.sliding_window:
        every = args.full_every or args.layers + 1
        config.sliding_window = args.sliding_window
        config.layer_types = [
            "full_attention" if (i + 1) % every == 0 else "sliding_attention"
            for i in range(args.layers)
        ]
    config.architectures = ["LlamaForCausalLM"]
    return config


def main(argv: list[str] | None = None) -> int:
    """Write the model and tokenizer; return the exit code."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.heads % args.kv_heads:
        print("--heads must be a multiple of --kv-heads", file=sys.stderr)
        return 2

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, PreTrainedTokenizerFast
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()

    out: Path = args.out_dir
    out.mkdir(parents=True, exist_ok=True)

    raw = train_tokenizer(args.vocab)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=raw,
        bos_token=BOS,
        eos_token=EOS,
        pad_token=PAD,
        additional_special_tokens=list(ROLE_TOKENS),
        chat_template=CHAT_TEMPLATE,
        model_max_length=args.max_position,
        clean_up_tokenization_spaces=False,
    )
    tokenizer.save_pretrained(str(out))
    # Older loaders read the template and class from tokenizer_config.json; transformers 5
    # also writes chat_template.jinja. Keep both in step.
    tc_path = out / "tokenizer_config.json"
    tc = json.loads(tc_path.read_text())
    tc["chat_template"] = CHAT_TEMPLATE
    tc["tokenizer_class"] = "PreTrainedTokenizerFast"
    tc_path.write_text(json.dumps(tc, indent=2, sort_keys=True) + "\n")
    vocab_size = len(tokenizer)

    hidden = args.hidden if args.hidden is not None else args.heads * args.head_dim
    intermediate = args.intermediate if args.intermediate is not None else 2 * hidden
    dtype = getattr(torch, args.dtype)
    config = build_config(args, tokenizer, hidden, intermediate)

    torch.manual_seed(args.seed)
    model = AutoModelForCausalLM.from_config(config)
    # Fill every weight from one seeded generator, in name order, so the bytes do not depend
    # on how this transformers version initialises modules.
    gen = torch.Generator().manual_seed(args.seed)
    with torch.no_grad():
        for name, param in sorted(model.named_parameters()):
            if name.endswith("norm.weight"):
                param.fill_(1.0)
            else:
                param.copy_(torch.randn(param.shape, generator=gen) * 0.02)
    model = model.to(dtype)
    model.save_pretrained(str(out), safe_serialization=True)

    # Check what was written loads back the way the engine will read it.
    loaded = AutoTokenizer.from_pretrained(str(out))
    ids = loaded.apply_chat_template([{"role": "user", "content": "hello world"}], tokenize=True)
    if not ids:
        print("tokenizer check failed: empty chat encoding", file=sys.stderr)
        return 1
    summary = {
        "out_dir": str(out),
        "vocab": vocab_size,
        "hidden": hidden,
        "layers": args.layers,
        "heads": args.heads,
        "kv_heads": args.kv_heads,
        "head_dim": args.head_dim,
        "dtype": args.dtype,
        "arch": args.arch,
        "sliding_window": args.sliding_window,
        "parameters": sum(p.numel() for p in model.parameters()),
    }
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
