"""Write tiny random-weight models with ``scripts/make_tiny_model.py`` from tests.

The script needs ``torch``, ``transformers`` and ``tokenizers``, which live in the engine
environment (``.venv-engine``), not in the project's own; so tests run it as a subprocess with
the engine's python. Later tests use :func:`write_tiny_model` for variants (``head_dim=16`` for
the engine's CPU-attention failure, more layers for a bigger KV footprint, and so on).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
MAKE_TINY_MODEL = REPO_ROOT / "scripts" / "make_tiny_model.py"

OFFLINE_ENV: dict[str, str] = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "TOKENIZERS_PARALLELISM": "false",
}


class TinyModelError(RuntimeError):
    """The model script failed; the message holds its output."""


def write_tiny_model(
    python: Path,
    out_dir: Path,
    *,
    head_dim: int = 64,
    layers: int = 2,
    heads: int = 4,
    kv_heads: int = 2,
    hidden: int | None = None,
    vocab: int = 512,
    max_position: int = 4096,
    seed: int = 0,
    dtype: str = "bfloat16",
    timeout: float = 300.0,
    extra_args: tuple[str, ...] = (),
) -> Path:
    """Write a tiny Llama (weights, config and tokenizer) into ``out_dir`` and return it.

    ``python`` is the engine environment's interpreter. Raises :class:`TinyModelError` with
    the script's output when it fails. ``extra_args`` go to the script as they are (e.g.
    ``("--sliding-window", "64", "--full-every", "2")`` or ``("--arch", "deepseek_v2")``).
    """
    cmd = [
        str(python),
        str(MAKE_TINY_MODEL),
        str(out_dir),
        "--head-dim",
        str(head_dim),
        "--layers",
        str(layers),
        "--heads",
        str(heads),
        "--kv-heads",
        str(kv_heads),
        "--vocab",
        str(vocab),
        "--max-position",
        str(max_position),
        "--seed",
        str(seed),
        "--dtype",
        dtype,
    ]
    if hidden is not None:
        cmd += ["--hidden", str(hidden)]
    cmd += list(extra_args)
    env = {**os.environ, **OFFLINE_ENV}
    proc = subprocess.run(
        cmd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        timeout=timeout,
        check=False,
    )
    output = proc.stdout.decode("utf-8", "replace")
    if proc.returncode != 0:
        raise TinyModelError(f"{' '.join(cmd)} exited with {proc.returncode}:\n{output[-4000:]}")
    return out_dir
