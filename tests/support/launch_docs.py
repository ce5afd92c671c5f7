"""A stored launch document made of real parts, for tests of what reads launches.

The document is the one ``launch --from-check`` stores: check's real answer for
Llama-3.1-8B-Instruct on one H100 (vLLM 0.19.0, ``--max-model-len 8192
--gpu-memory-utilization 0.95 --kv-cache-dtype fp8``) as its prediction, and the facts of the
real vLLM 0.19.0 H100 start-up log for the same settings (tests/data/startup) as its
observation. Only the process is missing: the engine needs the GPU.
"""

from __future__ import annotations

from typing import Any

from servewise.formats.startup import read_startup
from servewise.launch.evidence import evidence_for, prediction_from_check
from support.paths import ROOT

LOG = ROOT / "tests" / "data" / "startup" / "vllm-0.19.0-llama-3.1-8b-h100-kvfp8.log"
MODEL = "meta-llama/Llama-3.1-8B-Instruct"
FLAGS = ["--max-model-len", "8192", "--gpu-memory-utilization", "0.95", "--kv-cache-dtype",
         "fp8"]
CHECK_ARGS = ["check", MODEL, "--gpu", "h100:1", "--engine-version", "0.19.0",
              "--max-model-len", "8192", "--json", "--", "--gpu-memory-utilization", "0.95",
              "--kv-cache-dtype", "fp8"]
"""``servewise`` arguments whose ``--json`` answer :func:`llama_launch` takes."""


def llama_launch(check: dict[str, Any], run_id: str, port: int = 8000) -> dict[str, Any]:
    """The launch document for ``check`` (the parsed answer of :data:`CHECK_ARGS`)."""
    prediction = prediction_from_check(check, "check.json")
    return {"run_id": run_id, "argv": ["vllm", "serve", MODEL, *FLAGS, "--port", str(port)],
            "engine": "vllm", "port": port, "env": {}, "outcome": "ready", "ready": True,
            "message": f"ready on port {port} after 71.5 s", "time_to_ready_s": 71.5,
            "gpu": None, "docker_image": "vllm/vllm-openai:v0.19.0", "prediction": prediction,
            "evidence": evidence_for(prediction, read_startup(LOG.read_text()), 71.5)}
