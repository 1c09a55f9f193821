"""``textDocument/inlineCompletion`` when there is nothing sane to suggest: the server answers with an
empty list, says why in ``codedraft/status``, and keeps serving."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from tests.e2e.lsp_harness import CLIENTS, inline_params, open_document, running_lsp, wait_for_status


@pytest.mark.parametrize("client_name", CLIENTS)
async def test_bad_requests_get_empty_answers_and_the_server_survives(
    tmp_path: Path, client_name: str
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    async with running_lsp(
        workspace, tmp_path, client_name, daemon_address=f"unix:{tmp_path}/none.sock"
    ) as client:
        never_opened = await client.text_document_inline_completion_async(
            inline_params((workspace / "ghost.py").as_uri(), 0, 0)
        )
        assert never_opened is not None and list(never_opened.items) == []
        await wait_for_status(client, lambda s: s.get("suppressed") == "the document is not open")

        uri = open_document(client, workspace / "a.py", "def f(x):\n    return x\n\ud83d\ude00 = 1\n")
        out_of_range = await client.text_document_inline_completion_async(inline_params(uri, 99, 0))
        assert list(out_of_range.items) == []
        await wait_for_status(client, lambda s: "outside the document" in (s.get("suppressed") or ""))

        lone_surrogate = open_document(client, workspace / "b.py", "x = '\ud800'\ny = ")
        no_daemon = await client.text_document_inline_completion_async(inline_params(lone_surrogate, 1, 4))
        assert list(no_daemon.items) == []
        status = await wait_for_status(client, lambda s: "daemon unavailable" in (s.get("suppressed") or ""))
        assert "none.sock" in status["suppressed"]

        # the user is told once that the daemon is down, not on every keystroke
        for _ in range(3):
            await client.text_document_inline_completion_async(inline_params(uri, 1, 4))
        assert sum("unavailable" in m.message for m in client.messages) == 1

        result = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="codedraft.status", arguments=[])
        )
        assert result["state"] == "degraded"


async def test_a_huge_document_gets_an_empty_answer_quickly(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    async with running_lsp(workspace, tmp_path, daemon_address=f"unix:{tmp_path}/none.sock") as client:
        huge = "value = 1\n" * 900_000  # 9 million characters
        uri = open_document(client, workspace / "huge.py", huge)
        result = await client.text_document_inline_completion_async(inline_params(uri, 10, 0))
        assert list(result.items) == []
        await wait_for_status(client, lambda s: "larger than" in (s.get("suppressed") or ""))
        small = open_document(client, workspace / "small.py", "x = 1\n")
        assert (
            list((await client.text_document_inline_completion_async(inline_params(small, 1, 0))).items) == []
        )
