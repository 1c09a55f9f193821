"""The daemon's packages import only downward: no import circle, the backends below the server, and
the HTTP face over the request runner (never the gRPC servicer)."""

from __future__ import annotations

from tests.fixtures.import_graph import circles, import_graph


def test_the_daemon_has_no_import_circle() -> None:
    assert circles(import_graph("inference")) == []


def test_backends_layers_and_faces_look_down() -> None:
    graph = import_graph("inference")

    def imports(prefix: str, of: str) -> list[tuple[str, str]]:
        return sorted(
            (module, target)
            for module, targets in graph.items()
            if module.startswith(prefix)
            for target in targets
            if target.startswith(of)
        )

    assert imports("inference.backends.", "inference.server.") == []
    assert imports("inference.layers.", "inference.models.") == []
    assert imports("inference.loading.", "inference.engine.") == []
    assert imports("inference.http.", "inference.server.servicer") == []
