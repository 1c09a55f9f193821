"""The suggestion at an LSP position, shared by inline completion and plain completion."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from indexer.positions import cursor_offset
from lsp_server.completion.service import SUPERSEDED, CompletionOutcome, CompletionQuery

if TYPE_CHECKING:
    from lsp_server.server import CodedraftServer  # the server builds its prefills from query_at

# Larger documents get no suggestions (the daemon would cut the prompt to a window anyway, but
# splitting tens of megabytes per keystroke would stall the server).
MAX_DOCUMENT_CHARS = 8_000_000


async def suggestion_at(ls: CodedraftServer, uri: str, position: types.Position) -> CompletionOutcome:
    """The post-processed suggestion at ``position`` of ``uri``, or the reason there is none (also sent
    to the editor as ``codedraft/status``)."""
    outcome = await _suggest(ls, uri, position)
    figures = outcome.figures
    answered = outcome.text is not None or (figures is not None and outcome.reason != SUPERSEDED)
    if outcome.from_cache or not answered:
        # typed through a suggestion the daemon computed, or no answer: lastCompletion keeps
        # describing the last one the daemon gave
        ls.status.update(suppressed=outcome.reason)
    else:
        # the daemon answered (even when post-processing then dropped its text): its figures
        ls.status.update(
            suppressed=outcome.reason,
            last_completion={
                "latencyMs": round(outcome.latency_ms, 1),
                "promptTokens": figures.prompt_tokens if figures is not None else 0,
                "reusedTokens": figures.reused_tokens if figures is not None else 0,
                "daemonMs": round(outcome.daemon_ms, 1),
                # the daemon's time from the request's arrival to its first token
                "firstTokenMs": round(figures.time_to_first_token_ms, 1) if figures is not None else 0.0,
                # the lines nearest the cursor stood in for a full prompt the daemon had not computed
                "localPrompt": outcome.local,
            },
        )
    return outcome


async def _suggest(ls: CodedraftServer, uri: str, position: types.Position) -> CompletionOutcome:
    query = query_at(ls, uri, position)
    if isinstance(query, str):
        return CompletionOutcome(None, query)
    ls.prefill.completing(uri)
    outcome = await ls.completions.complete(query)
    if outcome.local and outcome.reason != SUPERSEDED:
        ls.prefill.settle(uri, position)
    return outcome


def query_at(ls: CodedraftServer, uri: str, position: types.Position) -> CompletionQuery | str:
    """The completion query at ``position`` of ``uri``, or why there can be none."""
    document = ls.open_document(uri)
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
        path=ls.relative_path(uri),
        language=document.language_id,
        text=text,
        offset=offset,
        line=position.line,
        column=position.character,
        deleted=ls.deleted.get(uri, False),
    )
