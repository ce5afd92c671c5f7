"""Serving benchmarks against OpenAI-compatible endpoints: client, load, workloads, metrics."""
