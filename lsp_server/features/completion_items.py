"""``textDocument/completion``: the same suggestion as one item, for editors without inline completion
(Neovim before 0.12, Helix, Emacs)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from lsprotocol import types

from indexer.positions import cursor_offset, utf16_length
from lsp_server.completion.at_position import suggestion_at
from lsp_server.server import CodedraftServer

_WORD_BEFORE = re.compile(r"[\w$]*$")


def setup(server: CodedraftServer) -> None:
    @server.feature(
        types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=[".", "(", " "])
    )
    async def completion(ls: CodedraftServer, params: types.CompletionParams) -> types.CompletionList:
        outcome = await suggestion_at(ls, params.text_document.uri, params.position)
        document = ls.open_document(params.text_document.uri)
        if outcome.text is None or document is None:
            return types.CompletionList(is_incomplete=True, items=[])
        return types.CompletionList(
            is_incomplete=True, items=[suggestion_item(document.lines, params.position, outcome.text)]
        )


def suggestion_item(lines: Sequence[str], position: types.Position, text: str) -> types.CompletionItem:
    """One item that inserts ``text`` at the cursor. Its edit also covers the word typed before the
    cursor, so editors that filter items by that word keep showing it."""
    line_text = (lines[position.line] if position.line < len(lines) else "").rstrip("\r\n")
    before = line_text[: cursor_offset(line_text, 0, position.character)]
    word = _WORD_BEFORE.search(before)
    typed = word.group(0) if word else ""
    start = types.Position(line=position.line, character=position.character - utf16_length(typed))
    first_line = text.split("\n", 1)[0]
    return types.CompletionItem(
        label=(typed + first_line).strip() or text.strip().split("\n", 1)[0],
        kind=types.CompletionItemKind.Text,
        detail="codedraft",
        documentation=types.MarkupContent(kind=types.MarkupKind.Markdown, value=f"```\n{typed}{text}\n```"),
        filter_text=typed + text,
        text_edit=types.TextEdit(range=types.Range(start=start, end=position), new_text=typed + text),
        insert_text_format=types.InsertTextFormat.PlainText,
        sort_text="0",
        preselect=True,
    )
