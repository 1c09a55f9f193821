"""The live-request table, the one owner of cancel-previous: a newer completion of a session stops
the older one, and nothing else does."""

from __future__ import annotations

import grpc

from inference.server.live_requests import LiveRequest, LiveRequests


def _completion(request_id: str, session_id: str) -> LiveRequest:
    return LiveRequest(request_id, session_id, supersedable=True)


def test_a_newer_completion_of_the_session_stops_the_older() -> None:
    table = LiveRequests()
    old, new = _completion("old", "doc"), _completion("new", "doc")
    assert table.add(old) is None
    assert table.add(new) is old
    assert old.stop_status == (
        grpc.StatusCode.CANCELLED,
        "superseded by request new of the same session 'doc'",
    )
    assert new.stop_status is None
    table.remove(old)  # the older stream ends after the newer one arrived: the session keeps the newer
    assert table.add(_completion("newest", "doc")) is new
    assert len(table) == 2 and "old" not in table


def test_other_sessions_generations_and_sessionless_calls_are_not_stopped() -> None:
    table = LiveRequests()
    running = _completion("a", "doc-1")
    table.add(running)
    assert table.add(_completion("b", "doc-2")) is None
    assert table.add(LiveRequest("gen", "doc-1", supersedable=False)) is None
    assert table.add(_completion("c", "")) is None
    assert table.add(_completion("d", "")) is None
    assert running.stop_status is None and len(table) == 5


def test_a_first_stop_reason_wins() -> None:
    table = LiveRequests()
    old = _completion("old", "doc")
    table.add(old)
    assert table.stop("old", grpc.StatusCode.CANCELLED, "cancelled by a Cancel call") is old
    table.add(_completion("new", "doc"))
    assert old.stop_status == (grpc.StatusCode.CANCELLED, "cancelled by a Cancel call")
    assert table.stop("unknown", grpc.StatusCode.CANCELLED, "x") is None


def test_a_finished_completion_leaves_no_session_entry() -> None:
    table = LiveRequests()
    old = _completion("old", "doc")
    table.add(old)
    table.remove(old)
    assert len(table) == 0
    assert table.add(_completion("new", "doc")) is None
