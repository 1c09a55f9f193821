"""Issued suggestions and the editor's reports about them: each settles once, typing through keeps
its id, a replaced one counts as dismissed, and the gate's point follows the history."""

from __future__ import annotations

from pathlib import Path

from lsp_server.completion.accept_history import AcceptHistory, Outcome
from lsp_server.completion.confidence_gate import OperatingPoint
from lsp_server.completion.suggestion_feedback import MAX_TRACKED, SuggestionFeedback, item_id_of

SCORES = {"mean": -0.2, "min": -0.4, "first": -0.1}
URI = "file:///w/a.py"


def feedback(tmp_path: Path) -> SuggestionFeedback:
    return SuggestionFeedback(AcceptHistory(tmp_path / "accept_history.json"))


def counts(fb: SuggestionFeedback, model: str = "m") -> tuple[int, int, int, int]:
    entry = fb.history.model(model)
    return entry.shown, entry.accepted, entry.partial, entry.dismissed


def test_a_suggestion_settles_once_at_its_first_outcome(tmp_path: Path) -> None:
    fb = feedback(tmp_path)
    first = fb.issue(URI, "return total", "m", SCORES, typed_through=False)
    assert fb.shown(first) is True
    assert fb.shown(first) is False  # shown again (the editor redraws): counted once
    assert fb.partially_accepted(first, 6) is True
    assert fb.accepted(first) is False
    assert fb.dismissed(first) is False
    assert counts(fb) == (1, 0, 1, 0)
    assert list(fb.history.model("m").outcomes) == [Outcome(SCORES, True)]
    assert fb.accepted("no-such-id") is False
    assert fb.partially_accepted(fb.issue(URI, "x", "m", None, False), 0) is False  # nothing taken


def test_accepting_or_dismissing_an_unreported_show_counts_the_show(tmp_path: Path) -> None:
    fb = feedback(tmp_path)
    fb.accepted(fb.issue(URI, "a", "m", SCORES, False))
    fb.dismissed(fb.issue(URI, "b", "m", None, False))
    assert counts(fb) == (2, 1, 0, 1)
    assert list(fb.history.model("m").outcomes) == [Outcome(SCORES, True)]  # no figures: no outcome


def test_a_shown_suggestion_replaced_by_another_of_its_document_was_passed_over(tmp_path: Path) -> None:
    fb = feedback(tmp_path)
    first = fb.issue(URI, "return total", "m", SCORES, False)
    fb.shown(first)
    other_document = fb.issue("file:///w/b.py", "pass", "m", SCORES, False)
    fb.shown(other_document)
    second = fb.issue(URI, "return 0", "m", SCORES, False)
    fb.shown(second)
    assert counts(fb) == (3, 0, 0, 1)
    assert fb.accepted(first) is False  # already settled as dismissed
    assert fb.accepted(second) is True
    assert fb.accepted(other_document) is True
    assert counts(fb) == (3, 2, 0, 1)


def test_typing_through_keeps_the_suggestions_id(tmp_path: Path) -> None:
    fb = feedback(tmp_path)
    first = fb.issue(URI, "return total", "m", SCORES, False)
    fb.shown(first)
    assert fb.issue(URI, "urn total", "m", None, typed_through=True) == first
    assert fb.shown(first) is False
    fb.accepted(first)
    again = fb.issue(URI, "total", "m", None, typed_through=True)
    assert again != first  # settled: a new one, with the figures the cache does not hand out
    fb.dismissed(again)
    other = fb.issue(URI, "other", "m", None, typed_through=True)
    assert other not in (first, again)  # not the rest of the latest: a new one, without figures
    fb.dismissed(other)
    assert counts(fb) == (3, 1, 0, 2)
    assert list(fb.history.model("m").outcomes) == [Outcome(SCORES, True), Outcome(SCORES, False)]


def test_only_the_latest_suggestions_are_tracked(tmp_path: Path) -> None:
    fb = feedback(tmp_path)
    oldest = fb.issue(URI, "0", "m", SCORES, False)
    for index in range(MAX_TRACKED):
        fb.issue(f"file:///w/{index}.py", str(index), "m", SCORES, False)
    assert fb.accepted(oldest) is False
    assert counts(fb) == (0, 0, 0, 0)


def test_the_point_follows_the_history_and_reset_restores_it(tmp_path: Path) -> None:
    fb = feedback(tmp_path)
    base = OperatingPoint("min", -1.0)
    for _ in range(60):
        fb.dismissed(fb.issue(URI, "x", "m", SCORES, False))
    assert fb.adapt("m", base, 0.5) == OperatingPoint("min", -0.5)
    assert fb.summary("m") == {
        "shown": 60,
        "accepted": 0,
        "partial": 0,
        "dismissed": 60,
        "rate": 0.0,
        "gate": {
            "feature": "min",
            "figure": "first line least log-probability",
            "threshold": -0.5,
            "calibratedThreshold": -1.0,
        },
    }
    assert fb.adapt("m", None, None) is None  # completion.confidence off: no gate, nothing adapted
    assert "gate" not in fb.summary("m")
    fb.reset()
    assert fb.adapt("m", base, 0.5) == base
    assert fb.summary("m") == {
        "shown": 0,
        "accepted": 0,
        "partial": 0,
        "dismissed": 0,
        "rate": None,
        "gate": {
            "feature": "min",
            "figure": "first line least log-probability",
            "threshold": -1.0,
            "calibratedThreshold": -1.0,
        },
    }


def test_the_item_id_is_read_from_the_items_command() -> None:
    class Params:  # as pygls hands over a custom method's params
        def __init__(self, **fields: object) -> None:
            self.__dict__.update(fields)

    assert item_id_of({"insertText": "x", "command": {"command": "c", "arguments": ["abc"]}}) == "abc"
    assert item_id_of(Params(command=Params(arguments=["abc"]))) == "abc"
    assert item_id_of({"command": {"arguments": []}}) is None
    assert item_id_of({"command": {"arguments": [7]}}) is None
    assert item_id_of({"insertText": "x"}) is None
    assert item_id_of(None) is None
