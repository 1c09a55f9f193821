"""The completion service's gate with the user's accept history: the calibrated point until enough
outcomes, then the adapted one; ``off`` stays off; a corrupt history leaves the calibrated point."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from inference.api.codedraft.v1 import inference_pb2 as pb
from lsp_server.completion.accept_history import AcceptHistory
from lsp_server.completion.service import CompletionService
from lsp_server.completion.suggestion_feedback import SuggestionFeedback
from lsp_server.config import CompletionSettings
from lsp_server.model_room import ModelRoom
from tests.lsp_server.test_completion_service import ScriptedDaemon, query

SETTINGS = CompletionSettings(debounce_ms=1, max_debounce_ms=2)
SURE = {"mean": -0.3, "min": -0.6, "first": -0.1}  # passes the conservative point (mean >= -0.5)


def service_with(history: AcceptHistory, settings: CompletionSettings = SETTINGS) -> CompletionService:
    daemon = ScriptedDaemon(["return total"])
    daemon.figures = pb.RequestFigures(
        prompt_tokens=40,
        generated_tokens=3,
        lines=[pb.LineConfidence(tokens=3, mean_logprob=SURE["mean"], min_logprob=SURE["min"])],
        first_token_logprob=SURE["first"],
    )
    # an unmeasured model: the conservative point, mean log-probability >= -0.5
    service = CompletionService(lambda: settings, daemon.stream, room=lambda: ModelRoom(model="unmeasured"))
    service.feedback = SuggestionFeedback(history)
    return service


def dismissals(history: AcceptHistory, count: int) -> None:
    for _ in range(count):
        history.shown("unmeasured")
        history.settled("unmeasured", SURE, "dismissed")


async def test_the_calibrated_point_holds_until_enough_outcomes(tmp_path: Path) -> None:
    history = AcceptHistory(tmp_path / "accept_history.json")
    dismissals(history, 49)
    outcome = await service_with(history).complete(query("def f(total):\n    |\n"))
    assert outcome.text == "return total"


async def test_a_user_who_dismisses_sure_suggestions_gets_a_stricter_gate(tmp_path: Path) -> None:
    history = AcceptHistory(tmp_path / "accept_history.json")
    dismissals(history, 50)
    service = service_with(history)
    outcome = await service.complete(query("def f(total):\n    |\n"))
    # no threshold reaches the 0.5 target: the band's top, -0.5 + 0.5 = 0.0, above this -0.3
    assert outcome.text is None
    assert outcome.reason == "not confident enough (first line mean log-probability -0.30 < 0.00)"
    assert service.feedback.summary("unmeasured")["gate"] == {
        "feature": "mean",
        "figure": "first line mean log-probability",
        "threshold": 0.0,
        "calibratedThreshold": -0.5,
    }


async def test_off_stays_off_whatever_the_history(tmp_path: Path) -> None:
    history = AcceptHistory(tmp_path / "accept_history.json")
    dismissals(history, 80)
    service = service_with(history, dataclasses.replace(SETTINGS, confidence="off"))
    outcome = await service.complete(query("def f(total):\n    |\n"))
    assert outcome.text == "return total"
    assert "gate" not in service.feedback.summary("unmeasured")


async def test_a_corrupt_history_leaves_the_calibrated_point(tmp_path: Path) -> None:
    path = tmp_path / "accept_history.json"
    path.write_text('{"version": 1, "models": {"unmeasured": "garbage"}}')
    service = service_with(AcceptHistory(path))
    outcome = await service.complete(query("def f(total):\n    |\n"))
    assert outcome.text == "return total"
    assert service.feedback.summary("unmeasured")["gate"]["threshold"] == -0.5
