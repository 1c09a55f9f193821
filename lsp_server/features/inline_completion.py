"""``textDocument/inlineCompletion`` (LSP 3.18): ghost text, the main path."""

from __future__ import annotations

from lsprotocol import types

from lsp_server.completion.at_position import suggestion_at
from lsp_server.server import CodedraftServer


def setup(server: CodedraftServer) -> None:
    # pygls advertises inline completion only when options are passed.
    @server.feature(types.TEXT_DOCUMENT_INLINE_COMPLETION, types.InlineCompletionOptions())
    async def inline_completion(
        ls: CodedraftServer, params: types.InlineCompletionParams
    ) -> types.InlineCompletionList | None:
        outcome = await suggestion_at(ls, params.text_document.uri, params.position)
        if outcome.text is None:
            return types.InlineCompletionList(items=[])
        cursor = types.Range(start=params.position, end=params.position)
        return types.InlineCompletionList(
            items=[types.InlineCompletionItem(insert_text=outcome.text, range=cursor)]
        )
