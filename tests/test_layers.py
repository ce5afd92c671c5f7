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
BASE = {"errors", "archs", "versions", "folders"}
LOW = {"formats", "sources", "store", "knowledge", *BASE}
OPERATIONS = {"inspect", "plan", "diagnose", "bench", "recipes", "launch", "check"}
ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    "folders": set(),
    "archs": {"errors"},
    "formats": {"errors", "archs", "formats"},
    "store": {"errors", "store", "formats", "folders"},
    "sources": {"errors", "archs", "formats", "sources", "store", "folders"},
    "knowledge": {"errors", "archs", "formats", "knowledge", "versions", "folders"},
    "versions": {"errors", "versions"},
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
    if layer in OPERATIONS:
        return
    for target in ALLOWED[layer] - {layer}:
        assert layer not in ALLOWED.get(target, set()), (layer, target)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _module_graph() -> dict[str, set[str]]:
    """Which servewise module imports which (every import, function-level and type-only
    ones too; ``from servewise.x import y`` counts as an import of ``servewise.x.y`` when
    that is a module, else of ``servewise.x``)."""
    paths = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        edges: set[str] = set()
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[:len(base) - node.level + 1]
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module or ""
                targets = [f"{module}.{alias.name}" for alias in node.names]
                for target in targets:
                    edges.add(target if target in paths else module)
            elif isinstance(node, ast.Import):
                edges.update(alias.name for alias in node.names)
        graph[name] = {edge for edge in edges if edge in paths and edge != name}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component: list[str] = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycle_between_modules() -> None:
    """A package's ``__init__`` that re-exports its modules is a module like any other: the
    modules under it must not import it back (import the module that defines the name)."""
    assert _cycles(_module_graph()) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]
