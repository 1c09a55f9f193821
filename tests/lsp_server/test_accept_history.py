"""The accept history's file: bounded, only figures, reset, and a corrupt or unwritable one ignored."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from lsp_server.completion.accept_history import MAX_OUTCOMES, AcceptHistory, Outcome, state_dir

SCORES = {"mean": -0.25, "min": -0.75, "first": -0.5}
COUNTS = {"shown": 1, "accepted": 0, "partial": 0, "dismissed": 0}


def test_counts_and_outcomes_survive_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "accept_history.json"
    history = AcceptHistory(path)
    for how in ("accepted", "partial", "dismissed", "dismissed"):
        history.shown("m")
        history.settled("m", SCORES, how)
    history.shown("m")
    history.settled("m", None, "accepted")  # no figures: counted, not an outcome
    again = AcceptHistory(path).model("m")
    assert (again.shown, again.accepted, again.partial, again.dismissed) == (5, 2, 1, 2)
    assert again.accept_rate == 3 / 5
    assert list(again.outcomes) == [
        Outcome(SCORES, True),
        Outcome(SCORES, True),
        Outcome(SCORES, False),
        Outcome(SCORES, False),
    ]
    assert AcceptHistory(path).model("other").shown == 0


def test_the_file_holds_only_figures(tmp_path: Path) -> None:
    path = tmp_path / "accept_history.json"
    history = AcceptHistory(path)
    history.shown("m")
    history.settled("m", SCORES, "accepted")
    assert json.loads(path.read_text()) == {
        "version": 1,
        "models": {
            "m": {"shown": 1, "accepted": 1, "partial": 0, "dismissed": 0, "outcomes": [[SCORES, 1]]},
        },
    }
    assert sorted(p.name for p in tmp_path.iterdir()) == ["accept_history.json"]  # no temporary left


def test_only_the_last_outcomes_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "accept_history.json"
    history = AcceptHistory(path)
    for index in range(MAX_OUTCOMES + 7):
        history.settled("m", {"mean": float(-index), "min": 0.0, "first": 0.0}, "dismissed")
    kept = AcceptHistory(path).model("m")
    assert kept.dismissed == MAX_OUTCOMES + 7
    assert len(kept.outcomes) == MAX_OUTCOMES
    assert kept.outcomes[0].scores["mean"] == -7.0  # the oldest seven went
    assert kept.outcomes[-1].scores["mean"] == float(-(MAX_OUTCOMES + 6))


def test_reset_forgets_every_model_on_disk_too(tmp_path: Path) -> None:
    path = tmp_path / "accept_history.json"
    history = AcceptHistory(path)
    history.shown("a")
    history.settled("b", SCORES, "accepted")
    history.reset()
    assert history.model("a").shown == 0
    assert json.loads(path.read_text()) == {"version": 1, "models": {}}
    assert AcceptHistory(path).model("b").accepted == 0


@pytest.mark.parametrize(
    "content",
    [
        "{not json",
        json.dumps({"version": 1, "models": {"m": {**COUNTS, "shown": -3, "outcomes": []}}}),
        '{"version": 99, "models": {}}',
        '{"version": 1, "models": {"m": {"shown": 1}}}',
        json.dumps({"version": 1, "models": {"m": {**COUNTS, "outcomes": [[3, 1]]}}}),
        "[]",
    ],
)
def test_a_corrupt_file_is_ignored_with_a_warning_and_then_replaced(
    tmp_path: Path, content: str, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "accept_history.json"
    path.write_text(content)
    history = AcceptHistory(path)
    with caplog.at_level(logging.WARNING, "lsp_server.completion.accept_history"):
        assert history.model("m").shown == 0
    assert len(caplog.records) == 1
    assert caplog.records[0].message.startswith(f"ignored the accept history in {path}")
    history.shown("m")
    assert json.loads(path.read_text())["models"]["m"]["shown"] == 1


def test_an_unwritable_folder_keeps_the_history_in_memory_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "state"
    blocker.write_text("a file where the state folder should be")  # unwritable even for root
    path = blocker / "accept_history.json"
    history = AcceptHistory(path)
    with caplog.at_level(logging.WARNING, "lsp_server.completion.accept_history"):
        history.shown("m")
        history.settled("m", SCORES, "accepted")
        history.reset()
        history.shown("m")
    assert history.model("m").shown == 1
    assert [r.message.split(" (")[0] for r in caplog.records] == [f"cannot keep the accept history in {path}"]
    assert blocker.read_text() == "a file where the state folder should be"


def test_the_state_folder_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CODEDRAFT_STATE_DIR", str(tmp_path / "mine"))
    assert state_dir() == tmp_path / "mine"
    monkeypatch.delenv("CODEDRAFT_STATE_DIR")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert state_dir() == tmp_path / "xdg" / "codedraft"
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert state_dir() == tmp_path / "home" / ".local" / "state" / "codedraft"
