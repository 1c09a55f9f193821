"""The HTTP face sits beside the gRPC face over the request runner: it imports neither the gRPC server
nor its servicer or interceptor (it shares the runner, the bearer check and the listen rules)."""

from __future__ import annotations

from tests.fixtures.import_graph import import_graph

GRPC_FACE = ("inference.server.grpc_server", "inference.server.servicer", "inference.server.grpc_auth")


def test_the_http_face_imports_nothing_of_the_grpc_face() -> None:
    graph = import_graph("inference")
    http = {module: targets for module, targets in graph.items() if module.startswith("inference.http.")}
    assert sorted(http) == [
        "inference.http.face",
        "inference.http.openai_replies",
        "inference.http.openai_requests",
        "inference.http.request_guard",
    ]
    assert {(m, t) for m, targets in http.items() for t in targets if t.startswith(GRPC_FACE)} == set()


def test_the_grpc_face_imports_nothing_of_the_http_face() -> None:
    graph = import_graph("inference")
    assert {(m, t) for m in GRPC_FACE for t in graph[m] if t.startswith("inference.http.")} == set()
    assert "inference.server.request_runner" in graph["inference.server.servicer"]
    assert "inference.server.request_runner" in graph["inference.http.face"]


def test_the_bearer_check_has_one_owner_for_both_faces() -> None:
    graph = import_graph("inference")
    assert "inference.server.bearer_token" in graph["inference.server.grpc_auth"]
    assert "inference.server.bearer_token" in graph["inference.http.request_guard"]
