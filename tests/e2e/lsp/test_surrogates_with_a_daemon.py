"""Lone surrogates (which JSON carries and UTF-8 cannot) in a document, with a daemon answering: every
request that sends the document's text to the daemon (ghost text, next edit, refactor, fix) is
answered; before, next edits, refactors and fixes failed with UnicodeEncodeError."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from tests.e2e.lsp_harness import inline_params, open_document, running_lsp

SETTINGS = {"completion": {"prefill": False}, "index": {"enabled": False}}
DROPS = "the proposal drops the definition of total; not offered, ask again or reword the request"


async def test_requests_on_a_document_with_lone_surrogates_answer(
    tmp_path: Path, scripted_daemon: str
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    async with running_lsp(workspace, tmp_path, daemon_address=scripted_daemon, settings=SETTINGS) as client:
        uri = open_document(client, workspace / "a.py", "s = '\ud800'\ndef total(items):\n    \n")
        inline = await client.text_document_inline_completion_async(inline_params(uri, 2, 4))
        assert inline is not None
        params = {
            "textDocument": {"uri": uri, "version": 1},
            "position": {"line": 2, "character": 4},
            "context": {"triggerKind": 2},
        }
        edits = await client.protocol.send_request_async("textDocument/copilotInlineEdit", params)
        assert isinstance(edits.edits, list)
        span = {"start": {"line": 0, "character": 0}, "end": {"line": 3, "character": 0}}
        for command in ("codedraft.refactor", "codedraft.fix"):
            result = await client.workspace_execute_command_async(
                types.ExecuteCommandParams(
                    command=command, arguments=[{"uri": uri, "range": span, "instruction": "sum the items"}]
                )
            )
            assert (result["applied"], result["reason"]) == (False, DROPS)
        status = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="codedraft.status", arguments=[])
        )
        assert status["state"] == "ready"
