# head (node 0)
NCCL_SOCKET_IFNAME=eth0 ray start \
  --head \
  --port=6379

# worker (node 1)
NCCL_SOCKET_IFNAME=eth0 ray start \
  "--address=$HEAD_IP:6379" \
  --block

# head (node 0), once every node has joined
NCCL_SOCKET_IFNAME=eth0 vllm serve deepseek-ai/DeepSeek-V4-Pro \
  --trust-remote-code \
  --kv-cache-dtype fp8 \
  --block-size 256 \
  --tensor-parallel-size 8 \
  --pipeline-parallel-size 2 \
  --distributed-executor-backend ray
