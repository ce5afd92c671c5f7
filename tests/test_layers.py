"""The layer rules of DESIGN.md hold: each package imports only what lies below it.

Every ``import`` in the package is read (function-level ones too). Operations do not import
each other, except ``check`` (which composes them all) and ``launch`` (diagnose, plan,
recipes); the vocabulary they share lives below them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from support.paths import ROOT

PACKAGE = ROOT / "src" / "servewise"
BASE = {"errors", "archs", "versions"}
LOW = {"formats", "sources", "store", "knowledge", *BASE}
OPERATIONS = {"inspect", "plan", "diagnose", "bench", "recipes", "launch", "check"}
ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    "archs": {"errors"},
    "formats": {"errors", "archs", "formats"},
    "store": {"errors", "store"},
    "sources": {"errors", "archs", "formats", "sources", "store"},
    "knowledge": {"errors", "archs", "formats", "knowledge", "versions"},
    "versions": {"errors", "knowledge", "versions"},
    **{op: LOW | {op} for op in OPERATIONS},
}
ALLOWED["launch"] |= {"diagnose", "plan", "recipes"}
ALLOWED["check"] |= OPERATIONS
ALLOWED["sweep"] = LOW | {"sweep", "launch", "bench", "check", "recipes"}  # composes, as check
ALLOWED["samples"] = set()


def _layer(path: Path) -> str:
    relative = path.relative_to(PACKAGE)
    return relative.parts[0].removesuffix(".py")


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == "servewise" and len(parts) > 1:
                found.add(parts[1])
    return found


def _violations() -> set[tuple[str, str, str]]:
    bad: set[tuple[str, str, str]] = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        layer = _layer(path)
        if layer not in ALLOWED:  # cli/, render/, __main__: on top of everything
            continue
        for target in _imports(path) - ALLOWED[layer]:
            bad.add((str(path.relative_to(PACKAGE)), layer, target))
    return bad


# Nothing pending: the moves of issue 14 §1 are done (knowledge no longer imports diagnose,
# sources no longer import plan).
PENDING: set[tuple[str, str]] = set()


def test_layers_hold() -> None:
    found = _violations()
    assert sorted(v for v in found if (v[1], v[2]) not in PENDING) == []
    # A pending exception that no longer happens must be dropped from PENDING.
    assert {(v[1], v[2]) for v in found} == PENDING


def test_every_package_has_a_rule() -> None:
    known = set(ALLOWED) | {"cli", "render", "__init__", "__main__", "py"}
    layers = {_layer(path) for path in PACKAGE.rglob("*.py")}
    assert layers <= known, layers - known


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_rules_are_acyclic_below_operations(layer: str) -> None:
    if layer in OPERATIONS or layer in ("versions", "knowledge"):
        return
    for target in ALLOWED[layer] - {layer}:
        assert layer not in ALLOWED.get(target, set()), (layer, target)
