"""Shared test set-up: session fixtures for the engine and the registry live in ``support``,
and the ``slow`` marker is given from ``tests/slow.txt`` (``support.slow``)."""

pytest_plugins = ["support.engine", "support.registry", "support.slow"]
