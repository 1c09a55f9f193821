"""The suggestion at an LSP position, shared by inline completion and plain completion."""

from __future__ import annotations

from typing import Any, Protocol

from lsprotocol import types
from pygls.workspace import TextDocument

from indexer.positions import cursor_offset
from lsp_server.completion.request import CompletionQuery
from lsp_server.completion.service import SUPERSEDED, CompletionOutcome, CompletionService
from lsp_server.status import StatusReporter

# Larger documents get no suggestions (the daemon would cut the prompt to a window anyway, but
# splitting tens of megabytes per keystroke would stall the server).
MAX_DOCUMENT_CHARS = 8_000_000


class PrefillTiming(Protocol):
    """What the cursor's background prefills (``cursor_prefill.py``) hear of completions."""

    def completing(self, uri: str) -> None:
        """A completion of ``uri`` was asked for: a prefill still waiting there is not needed."""

    def settle(self, uri: str, position: types.Position) -> None:
        """A suggestion at ``position`` sent a local prompt: the full one is computed once typing pauses."""


class CompletionHost(Protocol):
    """What a suggestion at a position needs of the language server."""

    @property
    def status(self) -> StatusReporter:
        """Where the suggestion's figures and suppression reasons go."""

    @property
    def completions(self) -> CompletionService:
        """The service that asks the daemon."""

    @property
    def prefill(self) -> PrefillTiming:
        """The cursor's background prefills (told when a completion starts and when typing pauses)."""

    @property
    def deleted(self) -> dict[str, bool]:
        """Documents whose last change was a deletion, by URI."""

    def open_document(self, uri: str) -> TextDocument | None:
        """The document the editor opened at ``uri``, or None if it never did."""

    def relative_path(self, uri: str) -> str:
        """A document's path relative to the workspace."""


async def suggestion_at(host: CompletionHost, uri: str, position: types.Position) -> CompletionOutcome:
    """The post-processed suggestion at ``position`` of ``uri``, or the reason there is none (also sent
    to the editor as ``codedraft/status``)."""
    outcome = await _suggest(host, uri, position)
    if outcome.from_cache or not outcome.answered:
        # typed through a suggestion the daemon computed, or no answer: lastCompletion keeps
        # describing the last one the daemon gave
        host.status.update(suppressed=outcome.reason)
    else:
        # the daemon answered (even when post-processing then dropped its text): its figures, or
        # "no figures" when they never came
        host.status.update(suppressed=outcome.reason, last_completion=last_completion(outcome))
    return outcome


NO_FIGURES = "no figures"
"""What ``lastCompletion.note`` says when the daemon answered but its figures never came (the stream
was closed before its last chunk): the token counts and first-token time are then null, never 0."""


def last_completion(outcome: CompletionOutcome) -> dict[str, Any]:
    """The ``lastCompletion`` of the status for a suggestion the daemon answered: the daemon's figures,
    or null for each of them and ``note: "no figures"`` when none came."""
    figures = outcome.figures
    described: dict[str, Any] = {
        "latencyMs": round(outcome.latency_ms, 1),
        "promptTokens": figures.prompt_tokens if figures is not None else None,
        "reusedTokens": figures.reused_tokens if figures is not None else None,
        "daemonMs": round(outcome.daemon_ms, 1),
        # the daemon's time from the request's arrival to its first token
        "firstTokenMs": round(figures.time_to_first_token_ms, 1) if figures is not None else None,
        # the lines nearest the cursor stood in for a full prompt the daemon had not computed
        "localPrompt": outcome.local,
    }
    if figures is None:
        described["note"] = NO_FIGURES
    return described


async def _suggest(host: CompletionHost, uri: str, position: types.Position) -> CompletionOutcome:
    query = query_at(host, uri, position)
    if isinstance(query, str):
        return CompletionOutcome(None, query)
    host.prefill.completing(uri)
    outcome = await host.completions.complete(query)
    if outcome.local and outcome.reason != SUPERSEDED:
        host.prefill.settle(uri, position)
    return outcome


def query_at(host: CompletionHost, uri: str, position: types.Position) -> CompletionQuery | str:
    """The completion query at ``position`` of ``uri``, or why there can be none."""
    document = host.open_document(uri)
    if document is None:
        return "the document is not open"
    text = document.source
    if len(text) > MAX_DOCUMENT_CHARS:
        return f"the document is larger than {MAX_DOCUMENT_CHARS} characters"
    if position.line < 0 or position.character < 0 or position.line > text.count("\n"):
        return f"position {position.line}:{position.character} is outside the document"
    offset = cursor_offset(text, position.line, position.character)
    return CompletionQuery(
        uri=uri,
        path=host.relative_path(uri),
        language=document.language_id,
        text=text,
        offset=offset,
        line=position.line,
        column=position.character,
        deleted=host.deleted.get(uri, False),
    )
