"""``textDocument/completion``: the suggestion as one item, for editors without inline completion."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from tests.e2e.lsp_harness import CLIENTS, change_document, open_document, running_lsp


@pytest.mark.parametrize("client_name", CLIENTS)
async def test_one_item_that_keeps_the_typed_word(
    tmp_path: Path, client_name: str, scripted_daemon: str
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    async with running_lsp(workspace, tmp_path, client_name, daemon_address=scripted_daemon) as client:
        uri = open_document(
            client, workspace / "calc.py", "def total_of(values):\n    total = sum(values)\n    \n"
        )
        result = await client.text_document_completion_async(
            types.CompletionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=types.Position(line=2, character=4),
            )
        )
        assert isinstance(result, types.CompletionList) and result.is_incomplete
        (item,) = result.items
        assert item.label == "return total"
        assert isinstance(item.text_edit, types.TextEdit) and item.text_edit.new_text == "return total"

        change_document(client, uri, 2, "ret", (2, 4))
        typed = await client.text_document_completion_async(
            types.CompletionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=types.Position(line=2, character=7),
            )
        )
        (item,) = typed.items
        # the edit starts at the typed word, so editors filtering by "ret" keep the item
        assert isinstance(item.text_edit, types.TextEdit)
        assert item.text_edit.range.start == types.Position(line=2, character=4)
        assert item.text_edit.new_text == "return total" and item.filter_text == "return total"
