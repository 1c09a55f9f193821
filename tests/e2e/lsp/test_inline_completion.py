"""``textDocument/inlineCompletion`` against a real daemon serving a scripted model."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types

from tests.e2e.daemon_process import daemon_stats, running_daemon, wait_until_active
from tests.e2e.lsp_harness import (
    CLIENTS,
    change_document,
    inline_params,
    open_document,
    running_lsp,
    wait_for_status,
)
from tests.fixtures.waiting import wait_until

SOURCE = "def total_of(values):\n    total = sum(values)\n    \n"


@pytest.mark.parametrize("client_name", CLIENTS)
async def test_ghost_text_comes_from_the_daemon(
    tmp_path: Path, client_name: str, scripted_daemon: str
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    async with running_lsp(workspace, tmp_path, client_name, daemon_address=scripted_daemon) as client:
        uri = open_document(client, workspace / "calc.py", SOURCE)
        result = await client.text_document_inline_completion_async(inline_params(uri, 2, 4))
        assert result is not None
        (item,) = result.items
        assert item.insert_text == "return total"
        assert item.range == types.Range(
            start=types.Position(line=2, character=4), end=types.Position(line=2, character=4)
        )
        status = await wait_for_status(client, lambda s: "lastCompletion" in s)
        assert status["lastCompletion"]["promptTokens"] > 0
        assert status["state"] in ("ready", "indexing")


async def test_typing_through_the_suggestion_needs_no_model_call(
    tmp_path: Path, scripted_daemon: str
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    no_prefill = {"completion": {"prefill": False}}  # the test counts the daemon's requests
    async with running_lsp(
        workspace, tmp_path, daemon_address=scripted_daemon, settings=no_prefill
    ) as client:
        uri = open_document(client, workspace / "calc.py", SOURCE)
        first = await client.text_document_inline_completion_async(inline_params(uri, 2, 4))
        assert [i.insert_text for i in first.items] == ["return total"]
        before = await daemon_stats(scripted_daemon)
        change_document(client, uri, 2, "ret", (2, 4))
        second = await client.text_document_inline_completion_async(inline_params(uri, 2, 7))
        assert [i.insert_text for i in second.items] == ["urn total"]
        after = await daemon_stats(scripted_daemon)
        assert after.get("requests_total") == before.get("requests_total")
        # the status still describes the completion the daemon computed, not the cache hit
        last = [s["lastCompletion"] for s in client.statuses if "lastCompletion" in s][-1]
        assert last["promptTokens"] > 0 and last["daemonMs"] > 0


async def test_deleting_asks_for_nothing(tmp_path: Path, scripted_daemon: str) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    async with running_lsp(workspace, tmp_path, daemon_address=scripted_daemon) as client:
        uri = open_document(client, workspace / "calc.py", SOURCE + "x = 12")
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                content_changes=[
                    types.TextDocumentContentChangePartial(
                        range=types.Range(
                            start=types.Position(line=3, character=5), end=types.Position(line=3, character=6)
                        ),
                        text="",
                    )
                ],
            )
        )
        result = await client.text_document_inline_completion_async(inline_params(uri, 3, 5))
        assert list(result.items) == []
        await wait_for_status(client, lambda s: s.get("suppressed") == "the last edit deleted text")


async def test_cancel_request_stops_the_daemon(tmp_path: Path, looping_model: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    # No prefill (didOpen's, at the document's start): the test waits for the completion's activity.
    settings = {"completion": {"maxTokens": 6000, "timeoutMs": 120000, "prefill": False}}
    with running_daemon(looping_model, tmp_path / "run2" / "d.sock", tmp_path / "daemon.log") as daemon:
        address = daemon.address
        async with running_lsp(workspace, tmp_path, daemon_address=address, settings=settings) as client:
            uri = open_document(client, workspace / "calc.py", SOURCE)
            pending = client.protocol.send_request(
                types.TEXT_DOCUMENT_INLINE_COMPLETION, inline_params(uri, 2, 4), msg_id="slow-1"
            )
            await wait_until_active(address)
            client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="slow-1"))
            with pytest.raises(Exception):  # noqa: B017 - the client sees RequestCancelled
                await asyncio.wait_for(asyncio.wrap_future(pending), 30)

            async def idle_stats() -> dict[str, float] | None:
                stats = await daemon_stats(address)
                return stats if stats.get("requests_active", 0) == 0 else None

            stats = await wait_until(idle_stats, 10, "the cancelled request ended in the daemon")
            assert stats.get("requests_cancelled", 0) == 1
            assert stats.get("generated_tokens", 0) < 6000  # stopped long before max_tokens


async def test_a_newer_request_cancels_the_older_in_the_daemon(tmp_path: Path, looping_model: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    # No prefill (didOpen's, at the document's start): the test waits for the completion's activity.
    settings = {"completion": {"maxTokens": 6000, "timeoutMs": 120000, "prefill": False}}
    with running_daemon(looping_model, tmp_path / "run3" / "d.sock", tmp_path / "daemon.log") as daemon:
        address = daemon.address
        async with running_lsp(workspace, tmp_path, daemon_address=address, settings=settings) as client:
            uri = open_document(client, workspace / "calc.py", SOURCE)
            older = asyncio.ensure_future(
                client.text_document_inline_completion_async(inline_params(uri, 2, 4))
            )
            await wait_until_active(address)
            change_document(client, uri, 2, "x", (2, 4))
            newer = asyncio.ensure_future(
                client.text_document_inline_completion_async(inline_params(uri, 2, 5))
            )
            superseded = await asyncio.wait_for(older, 30)
            assert list(superseded.items) == []
            await wait_for_status(client, lambda s: s.get("suppressed") == "superseded by a newer request")
            stats = await daemon_stats(address)
            assert stats.get("requests_cancelled", 0) >= 1
            newer.cancel()
