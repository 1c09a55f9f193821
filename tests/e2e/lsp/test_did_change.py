"""``textDocument/didChange`` bursts and a daemon that dies mid-stream: the server keeps serving."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types

from tests.e2e.daemon_process import running_daemon, wait_until_active
from tests.e2e.lsp_harness import change_document, inline_params, open_document, running_lsp, wait_for_status
from tests.fixtures.waiting import wait_until

SOURCE = "def total_of(values):\n    total = sum(values)\n    \n"


async def test_a_burst_of_edits_then_a_completion(tmp_path: Path, scripted_daemon: str) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    async with running_lsp(workspace, tmp_path, daemon_address=scripted_daemon) as client:
        uri = open_document(client, workspace / "calc.py", SOURCE)
        requests = []
        for version, char in enumerate("# noise", start=2):
            change_document(client, uri, version, char, (3, version - 2))
            requests.append(client.text_document_inline_completion_async(inline_params(uri, 3, version - 1)))
        answers = await asyncio.gather(*requests, return_exceptions=True)
        assert all(not isinstance(a, BaseException) or "cancel" in str(a).lower() for a in answers)
        # the document the server holds is exactly what the editor sent
        result = await client.text_document_inline_completion_async(inline_params(uri, 2, 4))
        assert [item.insert_text for item in result.items] == ["return total"]


async def test_a_daemon_that_dies_mid_stream_is_survived_and_reconnected(
    tmp_path: Path, looping_model: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    socket = tmp_path / "run4" / "d.sock"
    # No prefill (didOpen's, at the document's start): the test waits for the completion's activity.
    settings = {"completion": {"maxTokens": 6000, "timeoutMs": 120000, "prefill": False}}
    with running_daemon(looping_model, socket, tmp_path / "daemon.log") as daemon:
        async with running_lsp(
            workspace, tmp_path, daemon_address=daemon.address, settings=settings
        ) as client:
            uri = open_document(client, workspace / "calc.py", SOURCE)
            pending = asyncio.ensure_future(
                client.text_document_inline_completion_async(inline_params(uri, 2, 4))
            )
            await wait_until_active(daemon.address)
            daemon.process.process.kill()
            result = await asyncio.wait_for(pending, 30)
            assert list(result.items) == []
            status = await wait_for_status(client, lambda s: s["state"] == "degraded")
            assert "unavailable" in status["message"]
            assert sum("unavailable" in m.message for m in client.messages) == 1
            # a daemon back on the same socket is found again once the back-off has passed
            with running_daemon(looping_model, socket, tmp_path / "daemon2.log"):

                async def suggestion() -> list[types.InlineCompletionItem]:
                    answer = await client.text_document_inline_completion_async(inline_params(uri, 2, 4))
                    return list(answer.items)

                items = await wait_until(suggestion, 60, "a suggestion from the restarted daemon", 0.2)
                assert items[0].insert_text.startswith("return total")
