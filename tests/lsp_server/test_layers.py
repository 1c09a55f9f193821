"""The language server's modules import only downward: no import circle (type-only imports
included), features never import each other, and only the command line imports the composition."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "lsp_server"


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The package's modules that ``path`` imports anywhere (functions and TYPE_CHECKING too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        found.update(name for name in names if name in modules)
    return found


def import_graph(package: str) -> dict[str, set[str]]:
    """Each module of ``package`` and the modules of it that it imports (packages' ``__init__`` left out:
    importing ``a.b`` is counted as importing module ``a.b`` only)."""
    files = {
        _module_name(path): path for path in (ROOT / package).rglob("*.py") if path.name != "__init__.py"
    }
    return {name: _imports(path, set(files)) - {name} for name, path in files.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_circle_finder_finds_a_circle() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_the_language_server_has_no_import_circle() -> None:
    assert circles(import_graph(PACKAGE)) == []


def test_features_import_no_other_feature_and_nothing_imports_the_composition() -> None:
    graph = import_graph(PACKAGE)
    features = {name for name in graph if name.startswith("lsp_server.features.")}
    assert len(features) == 7
    for feature in sorted(features):
        assert graph[feature] & features == set(), feature
    importers = sorted(name for name, targets in graph.items() if "lsp_server.composition" in targets)
    assert importers == []
    assert graph["lsp_server.composition"] >= features
