"""The live-request table, the one owner of cancel-previous: a newer completion of a session stops
the older one and the session's prefill, a newer prefill stops the older prefill, and nothing else
stops anything."""

from __future__ import annotations

from inference.call_status import Failure
from inference.server.live_requests import LiveRequest, LiveRequests


def _completion(request_id: str, session_id: str) -> LiveRequest:
    return LiveRequest(request_id, session_id, supersedable=True)


def test_a_newer_completion_of_the_session_stops_the_older() -> None:
    table = LiveRequests()
    old, new = _completion("old", "doc"), _completion("new", "doc")
    assert table.add(old) == []
    assert table.add(new) == [old]
    assert old.stop_status == (
        Failure.CANCELLED,
        "superseded by request new of the same session 'doc'",
    )
    assert new.stop_status is None
    table.remove(old)  # the older stream ends after the newer one arrived: the session keeps the newer
    assert table.add(_completion("newest", "doc")) == [new]
    assert len(table) == 2 and "old" not in table


def test_other_sessions_generations_and_sessionless_calls_are_not_stopped() -> None:
    table = LiveRequests()
    running = _completion("a", "doc-1")
    table.add(running)
    assert table.add(_completion("b", "doc-2")) == []
    assert table.add(LiveRequest("gen", "doc-1", supersedable=False)) == []
    assert table.add(_completion("c", "")) == []
    assert table.add(_completion("d", "")) == []
    assert running.stop_status is None and len(table) == 5


def test_a_first_stop_reason_wins() -> None:
    table = LiveRequests()
    old = _completion("old", "doc")
    table.add(old)
    assert table.stop("old", Failure.CANCELLED, "cancelled by a Cancel call") is old
    table.add(_completion("new", "doc"))
    assert old.stop_status == (Failure.CANCELLED, "cancelled by a Cancel call")
    assert table.stop("unknown", Failure.CANCELLED, "x") is None


def test_a_finished_completion_leaves_no_session_entry() -> None:
    table = LiveRequests()
    old = _completion("old", "doc")
    table.add(old)
    table.remove(old)
    assert len(table) == 0
    assert table.add(_completion("new", "doc")) == []


def _prefill(request_id: str, session_id: str) -> LiveRequest:
    return LiveRequest(request_id, session_id, supersedable=True, prefill=True)


def test_a_completion_stops_its_sessions_prefill_and_a_prefill_only_the_older_prefill() -> None:
    table = LiveRequests()
    first, second = _prefill("p1", "doc"), _prefill("p2", "doc")
    assert table.add(first) == []
    assert table.add(second) == [first]  # the cursor moved on
    completion = _completion("c1", "doc")
    assert table.add(completion) == [second]
    assert second.stop_status == (
        Failure.CANCELLED,
        "superseded by request c1 of the same session 'doc'",
    )
    third = _prefill("p3", "doc")
    assert table.add(third) == []  # a prefill never stops a completion
    assert completion.stop_status is None
    assert table.add(_prefill("p4", "other-doc")) == []
    assert table.add(_completion("c2", "doc")) == [completion, third]
    table.remove(third)
    assert table.add(_prefill("p5", "doc")) == []
