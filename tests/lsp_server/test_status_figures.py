"""The ``codedraft/status`` notification after a suggestion the daemon answered: its figures when
they came (also when the filters then dropped the text), null and "no figures" when they did not."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from lsprotocol import types
from pygls.workspace import TextDocument

from lsp_server.completion.at_position import suggestion_at
from lsp_server.completion.service import CompletionService
from lsp_server.status import STATUS_NOTIFICATION, StatusReporter
from tests.lsp_server.test_completion_service import SETTINGS, ScriptedDaemon

URI = "file:///w/totals.py"
# sum(|): the reply breaks the line (prefer_parsable drops it) and its third line ends the block first.
SOURCE = "def total_of(items):\n    total = sum()\n    return total\n"
CURSOR = types.Position(line=1, character=16)
REPLY = ["pass", "\n    y", "\nvalue", " = compute(items)"]


class NoPrefill:
    def completing(self, uri: str) -> None:
        pass

    def settle(self, uri: str, position: types.Position) -> None:
        pass


@dataclass
class Host:
    """What `suggestion_at` needs of the server: a status that records its notifications."""

    completions: CompletionService
    sent: list[dict[str, Any]] = field(default_factory=list)
    prefill: NoPrefill = field(default_factory=NoPrefill)
    deleted: dict[str, bool] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.status = StatusReporter(self._notify, lambda message: None)

    def _notify(self, method: str, params: Any) -> None:
        assert method == STATUS_NOTIFICATION
        self.sent.append(json.loads(json.dumps(params)))  # as the editor reads it

    def open_document(self, uri: str) -> TextDocument | None:
        return TextDocument(uri, SOURCE, language_id="python") if uri == URI else None

    def relative_path(self, uri: str) -> str:
        return "totals.py"


async def test_a_dropped_suggestion_reports_the_daemons_figures() -> None:
    daemon = ScriptedDaemon(REPLY)
    host = Host(CompletionService(lambda: SETTINGS, daemon.stream, cancel=daemon.cancel))
    outcome = await suggestion_at(host, URI, CURSOR)  # type: ignore[arg-type]
    assert (outcome.text, outcome.reason) == (None, "filtered (prefer_parsable)")
    assert daemon.cancelled == ["r0"]  # stopped at the block's end, its last chunk read for the figures
    status = host.sent[-1]
    assert status["suppressed"] == "filtered (prefer_parsable)"
    last = status["lastCompletion"]
    assert (last["promptTokens"], last["reusedTokens"], last["firstTokenMs"]) == (40, 32, 0.0)
    assert "note" not in last


async def test_a_suggestion_whose_figures_never_came_says_so() -> None:
    daemon = ScriptedDaemon(REPLY)
    # no Cancel: the stream is closed at the block's end, before its last chunk
    host = Host(CompletionService(lambda: SETTINGS, daemon.stream))
    outcome = await suggestion_at(host, URI, CURSOR)  # type: ignore[arg-type]
    assert outcome.figures is None and outcome.reason == "filtered (prefer_parsable)"
    last = host.sent[-1]["lastCompletion"]
    assert (last["promptTokens"], last["reusedTokens"], last["firstTokenMs"]) == (None, None, None)
    assert last["note"] == "no figures"
    assert last["latencyMs"] > 0 and last["localPrompt"] is False
