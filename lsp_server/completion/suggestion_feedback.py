"""The suggestions handed to the editor, what the editor said became of them, and the gate's point
adapted from that.

Every inline completion item gets an id (``issue``); the editor reports it shown, accepted whole
(the item's command), accepted in part, or dismissed. A suggestion settles once, at its first of
accepted, partially accepted or dismissed; a shown one that the editor replaces by another suggestion
of the same document without saying more counts as dismissed (an editor that reports only shows and
accepts, as Copilot's clients do, still teaches the gate what was passed over). Typing through a
suggestion keeps its id: the shorter rest the server hands out is the same suggestion (once that one is
settled, its rest handed out again is a new suggestion with the same figures). Events for
unknown or settled ids change nothing, so a late or repeated report is harmless.
"""

from __future__ import annotations

import uuid
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from lsp_server.completion.accept_history import AcceptHistory
from lsp_server.completion.adaptive_threshold import adapted_point
from lsp_server.completion.confidence_gate import OperatingPoint, describe

MAX_TRACKED = 256
"""Issued suggestions remembered for their reports (the oldest are forgotten first)."""


@dataclass
class IssuedSuggestion:
    """A suggestion handed to the editor: where, its text (in memory only), the model and the gate's
    figures, and whether it was shown and settled."""

    uri: str
    text: str
    model: str
    scores: dict[str, float] | None
    shown: bool = False
    settled: bool = False


class SuggestionFeedback:
    """Ids for issued suggestions, their reports, and the adapted operating point per model."""

    def __init__(self, history: AcceptHistory | None = None) -> None:
        self.history = history if history is not None else AcceptHistory()
        self._issued: OrderedDict[str, IssuedSuggestion] = OrderedDict()
        self._latest: dict[str, str] = {}
        self._points: dict[str, tuple[OperatingPoint, OperatingPoint]] = {}

    def issue(
        self, uri: str, text: str, model: str, scores: dict[str, float] | None, typed_through: bool
    ) -> str:
        """The id of a suggestion about to be handed out: the earlier one's when ``typed_through`` (a
        cached suggestion) and it is the rest of that one, still open; a new one otherwise (with the
        earlier one's figures when it is its rest: the cache hands out no figures)."""
        latest = self._issued.get(self._latest.get(uri, ""))
        if typed_through and latest is not None and latest.text.endswith(text):
            if not latest.settled:
                latest.text = text
                return self._latest[uri]
            scores = latest.scores  # the cache's copy of a settled one: the same figures
        identifier = uuid.uuid4().hex
        self._issued[identifier] = IssuedSuggestion(uri, text, model, scores)
        self._latest[uri] = identifier
        while len(self._issued) > MAX_TRACKED:
            self._issued.popitem(last=False)
        return identifier

    def shown(self, identifier: str) -> bool:
        """The editor showed the suggestion; an earlier shown one of the document is passed over."""
        item = self._issued.get(identifier)
        if item is None or item.shown:
            return False
        for other_id, other in self._issued.items():
            if other_id != identifier and other.uri == item.uri and other.shown and not other.settled:
                self._settle(other, "dismissed")
        item.shown = True
        self.history.shown(item.model)
        return True

    def accepted(self, identifier: str) -> bool:
        """The user took the whole suggestion."""
        return self._report(identifier, "accepted")

    def partially_accepted(self, identifier: str, length: int) -> bool:
        """The user took the first ``length`` characters (UTF-16 code units) of the suggestion."""
        return length > 0 and self._report(identifier, "partial")

    def dismissed(self, identifier: str) -> bool:
        """The user dismissed the suggestion (Esc, typed past it, another replaced it)."""
        return self._report(identifier, "dismissed")

    def adapt(self, model: str, point: OperatingPoint | None, target: float | None) -> OperatingPoint | None:
        """``point`` moved by ``model``'s history (``adaptive_threshold``); None stays None."""
        if point is None or target is None:
            self._points.pop(model, None)
            return point
        adapted = adapted_point(point, self.history.model(model).outcomes, target)
        self._points[model] = (point, adapted)
        return adapted

    def reset(self) -> None:
        """Forgets the history (on disk too) and the adapted points."""
        self.history.reset()
        self._points.clear()

    def summary(self, model: str) -> dict[str, Any]:
        """The ``accepts`` object of ``codedraft/status`` for ``model``."""
        entry = self.history.model(model)
        rate = entry.accept_rate
        summary: dict[str, Any] = {
            "shown": entry.shown,
            "accepted": entry.accepted,
            "partial": entry.partial,
            "dismissed": entry.dismissed,
            "rate": round(rate, 4) if rate is not None else None,
        }
        if model in self._points:
            calibrated, adapted = self._points[model]
            summary["gate"] = {
                "feature": adapted.feature,
                "figure": describe(adapted.feature),
                "threshold": round(adapted.threshold, 4),
                "calibratedThreshold": round(calibrated.threshold, 4),
            }
        return summary

    def model_of(self, identifier: str) -> str | None:
        """The model that wrote an issued suggestion (None when unknown)."""
        item = self._issued.get(identifier)
        return item.model if item is not None else None

    def _report(self, identifier: str, how: str) -> bool:
        item = self._issued.get(identifier)
        if item is None or item.settled:
            return False
        if not item.shown:  # an editor that does not report shows: taking or dismissing implies one
            item.shown = True
            self.history.shown(item.model)
        self._settle(item, how)
        return True

    def _settle(self, item: IssuedSuggestion, how: str) -> None:
        item.settled = True
        self.history.settled(item.model, item.scores, how)


ACCEPT_COMMAND = "codedraft.didAcceptCompletionItem"
"""The command on every inline completion item, run by the editor when the user takes the item
(arguments: ``[id]``), as Copilot's ``github.copilot.didAcceptCompletionItem``."""


def item_id_of(item: Any) -> str | None:
    """The id of an inline completion item as an editor sends it back (``{command: {arguments:
    [id]}}``, as a dict or as pygls hands over a custom method's params), or None."""
    try:
        arguments = _field(_field(item, "command"), "arguments")
        identifier = arguments[0]
    except (AttributeError, KeyError, TypeError, IndexError):
        return None
    return identifier if isinstance(identifier, str) and identifier else None


def _field(value: Any, name: str) -> Any:
    return value[name] if isinstance(value, dict) else getattr(value, name)
