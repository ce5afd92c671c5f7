#!/usr/bin/env bash
# `make demo`: the kernel gate on two sample vLLM nightlies embedded in the package.
# They replay the seed story: the 07-29 nightly bundles a DeepGEMM with sm120_* dispatch,
# the 07-31 nightly bundles a fork without it. DeepSeek-V4 needs DeepGEMM, so on an
# RTX PRO 6000 (sm_120) the first passes and the second fails. Offline, in seconds.
set -uo pipefail
SW=${1:-servewise}
PY=$(dirname "$SW")/python
samples=$("$PY" -c 'import importlib.resources as r; print(r.files("servewise") / "samples")')
good="$samples/vllm-0.26.1rc1.dev77+ga6b593d2-cp38-abi3-linux_x86_64.whl"
bad="$samples/vllm-0.26.1rc1.dev181+gf5a76426-cp38-abi3-linux_x86_64.whl"

echo "== servewise inspect: what GPU code does the 07-31 nightly carry?"
"$SW" inspect "$bad" --no-cache || exit 2

for build in "$good" "$bad"; do
  echo
  echo "== servewise gate $(basename "$build") --gpu rtx-pro-6000 --model deepseek-v4"
  "$SW" gate "$build" --gpu rtx-pro-6000 --model deepseek-v4
  code=$?
  case $code in
    0) echo "-> exit 0: every library DeepSeek-V4 needs has code for sm_120; launch it." ;;
    1) echo "-> exit 1: a required library lacks sm_120 code; pick an earlier nightly." ;;
    *) echo "-> exit $code: the demo itself failed"; exit "$code" ;;
  esac
done

echo
echo "== servewise diff: what changed between the two nightlies?"
"$SW" diff "$good" "$bad" --gpu rtx-pro-6000
code=$?
case $code in
  0) echo "-> exit 0: the same verdicts on sm_120" ;;
  1) echo "-> exit 1: only the bundled DeepGEMM changed, and it lost its sm_120 dispatch." ;;
  *) echo "-> exit $code: the demo itself failed"; exit "$code" ;;
esac
