"""What each streaming dialect of the synthetic server sends, and where that was read.

The synthetic server (``sse_server.py``) speaks each of these with ``Behaviour.dialect``;
every entry names the public source its shape was taken from.
"""

from __future__ import annotations

DIALECTS: dict[str, str] = {
    "vllm": "vLLM's OpenAI server (vllm/entrypoints/openai/chat_completion/serving.py, read in "
            "the vllm 0.x wheel this project's engine env installs): a role chunk "
            "{role: assistant, content: ''} carrying usage with completion_tokens 0 under "
            "continuous_usage_stats; each text chunk carries the cumulative usage under "
            "continuous_usage_stats and token_ids under return_token_ids; the finish reason "
            "rides on the last text chunk; a usage-only chunk (choices: []) under "
            "include_usage; then [DONE].",
    "sglang": "SGLang (https://github.com/sgl-project/sglang/blob/"
              "002897c23becbd522d88b8115a763a21765f978a/python/sglang/srt/entrypoints/openai/"
              "serving_chat.py, generate_chat_stream): a role chunk {role: assistant, "
              "content: ''} without usage; text chunks with the cumulative usage under "
              "stream_options.continuous_usage_stats; the finish reason in a chunk of its own "
              "with an empty delta and matched_stop; a usage-only chunk (choices: []) under "
              "include_usage; then [DONE]. No token ids.",
    "tgi": "Text Generation Inference's OpenAI route (https://github.com/huggingface/"
           "text-generation-inference/blob/03fe626a958cc3aa41f60ed556096c131495a510/router/src/"
           "chat.rs, create_event_from_stream_token and ChatState::push): one event per token, "
           "every delta {role: assistant, content: TOKEN}, usage null, no role-only chunk; the "
           "finish reason on the last token's event; under include_usage a usage-only event "
           "with an empty id and choices: []. No continuous usage, no token ids.",
    "llamacpp": "llama.cpp's llama-server (a recorded stream in https://github.com/g0t4/"
                "ask-openai.nvim/blob/HEAD/lua/ask-openai/rewrites/harmony/NOTES.md): a role "
                "chunk {role: assistant, content: null}; one event per token; the last event "
                "has an empty delta, the finish reason, usage and llama.cpp's timings "
                "(whatever stream_options says); then [DONE].",
    "openai": "OpenAI's own API (the stream_options.include_usage contract in the OpenAPI "
              "spec, e.g. https://github.com/oapicf/openapi-openai): a role chunk {role: "
              "assistant, content: '', refusal: null}; text chunks; the finish reason with an "
              "empty delta; usage only under include_usage, in a last chunk with choices: [] "
              "(every other chunk then says usage: null); then [DONE].",
}
"""Each dialect the server speaks, what it sends, and the public source it was read from."""
