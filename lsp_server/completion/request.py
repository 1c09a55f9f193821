"""The ``CompleteRequest`` the language server sends for a cursor: the document window that the
budgets allow, the retrieved snippets, and the completion settings. ``codedraft bench model --model``
builds its prompts here too, so that it scores the prompts users get."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from indexer.retrieval.base import Snippet
from inference.api.codedraft.v1 import inference_pb2 as pb
from lsp_server.completion.budgets import PromptBudgets
from lsp_server.completion.window import cursor_window
from lsp_server.config import CompletionSettings

_SPECULATION = {
    "auto": pb.SPECULATION_MODE_AUTO,
    "off": pb.SPECULATION_MODE_OFF,
    "ngram": pb.SPECULATION_MODE_NGRAM,
    "draft": pb.SPECULATION_MODE_DRAFT,
}


@dataclass(frozen=True)
class CompletionQuery:
    """A cursor in an open document. ``line`` is 0-based and ``column`` in UTF-16 units (LSP)."""

    uri: str
    path: str
    language: str | None
    text: str
    offset: int
    line: int
    column: int
    deleted: bool = False


def complete_request(
    *,
    session_id: str,
    text: str,
    offset: int,
    path: str,
    language: str | None,
    snippets: Sequence[Snippet],
    settings: CompletionSettings,
    budgets: PromptBudgets,
) -> pb.CompleteRequest:
    """The request for the cursor at character ``offset`` of the document ``text``."""
    window = cursor_window(text, offset, budgets.prefix, budgets.suffix, budgets.line_step, budgets.estimate)
    return pb.CompleteRequest(
        session_id=session_id,
        prefix=valid_utf8(window.prefix),
        suffix=valid_utf8(window.suffix),
        path=path,
        language=language or "",
        snippets=[
            pb.ContextSnippet(
                path=s.path,
                text=valid_utf8(s.text),
                score=s.score,
                source="+".join(s.sources),
                start_line=s.start_line + 1,
            )
            for s in snippets
        ],
        sampling=pb.SamplingParams(temperature=settings.temperature, max_tokens=settings.max_tokens),
        speculation=_SPECULATION.get(settings.speculation, pb.SPECULATION_MODE_AUTO),
    )


def request_at(
    query: CompletionQuery, settings: CompletionSettings, budgets: PromptBudgets, snippets: Sequence[Snippet]
) -> pb.CompleteRequest:
    """The request for ``query``'s cursor with these budgets and snippets."""
    return complete_request(
        session_id=query.uri,
        text=query.text,
        offset=query.offset,
        path=query.path,
        language=query.language,
        snippets=snippets,
        settings=settings,
        budgets=budgets,
    )


def valid_utf8(text: str) -> str:
    """``text`` with lone surrogates (which JSON can carry but UTF-8 cannot) replaced."""
    return text.encode("utf-8", "replace").decode("utf-8")
