# node 0
SGLANG_DSV4_FP4_EXPERTS=0 SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK=128 python3 -m sglang.launch_server \
  --model-path sgl-project/DeepSeek-V4-Pro-FP8 \
  --trust-remote-code \
  --tp 16 \
  --dp 16 \
  --enable-dp-attention \
  --moe-a2a-backend deepep \
  --speculative-algorithm EAGLE \
  --speculative-num-steps 1 \
  --speculative-eagle-topk 1 \
  --speculative-num-draft-tokens 2 \
  --mem-fraction-static 0.88 \
  --cuda-graph-max-bs-decode 8 \
  --max-running-requests 32 \
  --nnodes 2 \
  --node-rank 0 \
  --dist-init-addr $HEAD_IP:20000

# node 1
SGLANG_DSV4_FP4_EXPERTS=0 SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK=128 python3 -m sglang.launch_server \
  --model-path sgl-project/DeepSeek-V4-Pro-FP8 \
  --trust-remote-code \
  --tp 16 \
  --dp 16 \
  --enable-dp-attention \
  --moe-a2a-backend deepep \
  --speculative-algorithm EAGLE \
  --speculative-num-steps 1 \
  --speculative-eagle-topk 1 \
  --speculative-num-draft-tokens 2 \
  --mem-fraction-static 0.88 \
  --cuda-graph-max-bs-decode 8 \
  --max-running-requests 32 \
  --nnodes 2 \
  --node-rank 1 \
  --dist-init-addr $HEAD_IP:20000
