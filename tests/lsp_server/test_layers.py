"""The language server's modules import only downward: no import circle (type-only imports
included), features never import each other, and only the command line imports the composition."""

from __future__ import annotations

from tests.fixtures.import_graph import circles, import_graph

PACKAGE = "lsp_server"


def test_the_circle_finder_finds_a_circle() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_the_language_server_has_no_import_circle() -> None:
    assert circles(import_graph(PACKAGE)) == []


def test_the_language_servers_packages_have_no_import_circle() -> None:
    """``agent/`` sits above ``rewrite/`` (it checks proposals with the rewrite's floor) and both above
    ``completion/``; none of them reaches back up, nor does a top-level module they use."""
    graph = import_graph(PACKAGE)

    def unit(module: str) -> str:  # lsp_server.agent.loop -> lsp_server.agent; top-level modules stay
        return ".".join(module.split(".")[:2])

    units: dict[str, set[str]] = {}
    for module, targets in graph.items():
        units.setdefault(unit(module), set()).update(unit(t) for t in targets if unit(t) != unit(module))
    assert circles(units) == []


def test_features_import_no_other_feature_and_nothing_imports_the_composition() -> None:
    graph = import_graph(PACKAGE)
    features = {name for name in graph if name.startswith("lsp_server.features.")}
    assert len(features) == 11
    for feature in sorted(features):
        assert graph[feature] & features == set(), feature
    importers = sorted(name for name, targets in graph.items() if "lsp_server.composition" in targets)
    assert importers == []
    assert graph["lsp_server.composition"] >= features
