"""Edits by example through the real language server, with no daemon at all: after the user adds an
argument to one call, ``textDocument/copilotInlineEdit`` offers the same change at the next call
(accepting it offers the one after), and editors without inline edits get it as the code action
"Apply predicted edit"."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from tests.e2e.lsp.test_next_edit import _apply, _inline_edits, _replace
from tests.e2e.lsp_harness import open_document, running_lsp

SOURCE = "def run(client, timeout):\n    client.get('/a')\n    client.get('/b')\n    client.get('/c')\n"
SETTINGS = {"nextEdit": {"model": False}, "completion": {"prefill": False}}


async def test_an_added_argument_is_offered_at_each_next_call_by_inline_edit_and_code_action(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    gone = f"unix:{tmp_path / 'nobody.sock'}"
    async with running_lsp(
        workspace, tmp_path, client_name="neovim", daemon_address=gone, settings=SETTINGS
    ) as client:
        uri = open_document(client, workspace / "run.py", SOURCE)
        _replace(client, uri, 2, (1, 19), (1, 19), ", timeout=timeout")
        text = SOURCE.replace("'/a')", "'/a', timeout=timeout)")
        first, second = await _inline_edits(client, uri, 1, 36)
        assert (first["range"]["start"], first["range"]["end"]) == (
            {"line": 2, "character": 4},
            {"line": 2, "character": 20},
        )
        assert (first["text"], second["text"]) == (
            "client.get('/b', timeout=timeout)",
            "client.get('/c', timeout=timeout)",
        )
        _replace(client, uri, 3, (2, 4), (2, 20), first["text"])
        text = _apply(text, first)
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="codedraft.acceptInlineEdit", arguments=first["command"]["arguments"]
            )
        )
        cursor = types.Range(
            start=types.Position(line=2, character=4), end=types.Position(line=2, character=4)
        )
        actions = await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=cursor,
                context=types.CodeActionContext(
                    diagnostics=[], trigger_kind=types.CodeActionTriggerKind.Invoked
                ),
            )
        )
        (apply,) = [action for action in actions or [] if action.title == "Apply predicted edit"]
        (document_edit,) = apply.edit.document_changes
        (edit,) = document_edit.edits
        assert (edit.range.start.line, edit.new_text) == (3, "client.get('/c', timeout=timeout)")
