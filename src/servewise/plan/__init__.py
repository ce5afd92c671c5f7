"""The memory planner: model metadata in, what vLLM and SGLang will do at startup out.

``arch`` reads a config into per-layer cache kinds, ``weights`` places tensor bytes on
ranks, ``kv`` sizes pages and token pools as each engine does, ``vllm`` and ``sglang`` follow
each engine's startup accounting, and ``planner`` composes them into recommendations.
"""
