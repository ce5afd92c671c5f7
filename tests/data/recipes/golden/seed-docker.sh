docker run \
  --gpus all \
  --ipc=host \
  -p 8000:8000 \
  -v /path/to/DeepSeek-V4-Flash-0731-NVFP4:/model:ro \
  vllm/vllm-openai:nightly-6f91edf96d3f3272945809c04702380053bff4de /model \
  --served-model-name DeepSeek-V4-Flash-0731-NVFP4 \
  --port 8000 \
  --trust-remote-code \
  --tokenizer-mode deepseek_v4 \
  --tensor-parallel-size 2 \
  --max-model-len 250000 \
  --max-num-seqs 8 \
  --max-num-batched-tokens 4096 \
  --gpu-memory-utilization 0.95 \
  --kv-cache-dtype fp8 \
  --block-size 256 \
  --enforce-eager
