"""Shared test set-up: session fixtures for the engine and the registry live in ``support``."""

pytest_plugins = ["support.engine", "support.registry"]
