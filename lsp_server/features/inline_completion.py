"""``textDocument/inlineCompletion`` (LSP 3.18): ghost text, the main path.

Each item carries the command ``codedraft.didAcceptCompletionItem`` with its id, which the editor
runs when the user takes it (see ``completion_feedback.py`` for the other reports)."""

from __future__ import annotations

from lsprotocol import types

from lsp_server.completion.at_position import suggestion_at
from lsp_server.completion.confidence_gate import gate_figures
from lsp_server.completion.suggestion_feedback import ACCEPT_COMMAND
from lsp_server.server import CodedraftServer


def setup(server: CodedraftServer) -> None:
    # pygls advertises inline completion only when options are passed.
    @server.feature(types.TEXT_DOCUMENT_INLINE_COMPLETION, types.InlineCompletionOptions())
    async def inline_completion(
        ls: CodedraftServer, params: types.InlineCompletionParams
    ) -> types.InlineCompletionList | None:
        uri = params.text_document.uri
        outcome = await suggestion_at(ls, uri, params.position)
        if outcome.text is None:
            return types.InlineCompletionList(items=[])
        model = ls.daemon.room.model
        feedback = ls.completions.feedback
        identifier = feedback.issue(
            uri, outcome.text, model, gate_figures(outcome.figures), outcome.from_cache
        )
        ls.status.update(accepts=feedback.summary(model))
        cursor = types.Range(start=params.position, end=params.position)
        accepted = types.Command(
            title="Accept the suggestion", command=ACCEPT_COMMAND, arguments=[identifier]
        )
        return types.InlineCompletionList(
            items=[types.InlineCompletionItem(insert_text=outcome.text, range=cursor, command=accepted)]
        )
