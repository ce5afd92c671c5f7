#!/usr/bin/env bash
# `make demo`: the first seed's story with `servewise check`, offline, on the two sample vLLM
# nightlies embedded in the package (docs: src/servewise/samples/README.md). The 07-31 nightly
# bundles a DeepGEMM fork without sm_120 dispatch, the 07-29 one has it; DeepSeek-V4 needs
# DeepGEMM, so on two RTX PRO 6000 Max-Q (sm_120) the first is refused and the second passes
# with the command that served 250,000 tokens. Then the second seed: SGLang on eight H200s
# with a fraction that leaves FlashInfer's MoE workspace its room.
set -uo pipefail
SW=${1:-servewise}
PY=$(dirname "$SW")/python
samples=$("$PY" -c 'import importlib.resources as r; print(r.files("servewise") / "samples")')
good="$samples/vllm-0.26.1rc1.dev77+ga6b593d2-cp38-abi3-linux_x86_64.whl"
bad="$samples/vllm-0.26.1rc1.dev181+gf5a76426-cp38-abi3-linux_x86_64.whl"
model=MJPansa/DeepSeek-V4-Flash-0731-NVFP4
gpu=rtx-pro-6000-blackwell-max-q:2

expect() {  # expect CODE WHAT: the exit code a step must give
  local code=$? want=$1
  if [ "$code" -ne "$want" ]; then
    echo "-> exit $code, expected $want: the demo itself failed ($2)"; exit 2
  fi
  echo "-> exit $code: $2"
}

echo "== 1. servewise check $model --gpu $gpu --build <07-31 nightly>"
"$SW" check "$model" --gpu "$gpu" --build "$bad"
expect 1 "refused before pulling 20 GB: the bundled DeepGEMM has no sm_120 code"

echo
echo "== 2. the same check with the 07-29 nightly"
"$SW" check "$model" --gpu "$gpu" --build "$good" --format vllm
expect 0 "it will start; the command is the one that served 250,000 tokens"

echo
echo "== 3. servewise check deepseek-ai/DeepSeek-V4-Flash-0731 --gpu h200:8 --engine sglang"
"$SW" check deepseek-ai/DeepSeek-V4-Flash-0731 --gpu h200:8 --engine sglang
expect 0 "the verified recipe's --mem-fraction-static 0.88 leaves the MoE workspace its room"
