"""The server's protocol forgets each handler once it is done (pygls keeps a future per notification:
30 MB per 10,000 keystrokes, found by the soak test)."""

from __future__ import annotations

import asyncio
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol

from lsp_server.protocol import CodedraftProtocol
from tests.fixtures.waiting import wait_until


def _server(
    protocol: type[LanguageServerProtocol], opened: asyncio.Event | None = None
) -> tuple[LanguageServer, list[Any]]:
    server = LanguageServer("test", "1", protocol_cls=protocol)
    seen: list[Any] = []

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: LanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        if opened is not None:
            await opened.wait()
        seen.append(params.text_document.uri)

    @server.feature("custom/ping")
    async def ping(ls: LanguageServer, params: Any) -> None:
        seen.append(params)

    for _ in server.protocol.lsp_initialize(types.InitializeParams(capabilities=types.ClientCapabilities())):
        pass  # a generator (it would hand over to an initialize feature; there is none)
    return server, seen


async def _notify_many(server: LanguageServer, seen: list[Any]) -> None:
    for number in range(50):
        document = types.TextDocumentItem(
            uri=f"file:///t{number}.py", language_id="python", version=1, text="x"
        )
        server.protocol._handle_notification(
            types.TEXT_DOCUMENT_DID_OPEN, types.DidOpenTextDocumentParams(text_document=document)
        )
        server.protocol._handle_notification("custom/ping", number)
    # every handler has run (they are tasks on this loop: however slow the machine, they end)
    await wait_until(lambda: len(seen) == 100, 30, "the 100 handlers running")


async def test_handled_notifications_leave_nothing_behind() -> None:
    server, seen = _server(CodedraftProtocol)
    await _notify_many(server, seen)
    # each handler's future is forgotten once it is done (its callback runs right after the handler)
    await wait_until(lambda: server.protocol._request_futures == {}, 30, "the handlers' futures forgotten")


async def test_pygls_alone_keeps_a_future_per_notification() -> None:
    """What the subclass is for: if pygls stops leaking, this fails and the subclass can go."""
    server, seen = _server(LanguageServerProtocol)
    await _notify_many(server, seen)
    await asyncio.sleep(0)  # the futures' done callbacks have had their turn: pygls's keep them
    assert len(server.protocol._request_futures) >= 100


async def test_shutdown_cancels_the_handlers_still_running() -> None:
    """pygls cancels them by iterating the dict, and each cancelled one calls back at once."""
    never = asyncio.Event()
    server, seen = _server(CodedraftProtocol, opened=never)
    for number in range(3):
        document = types.TextDocumentItem(
            uri=f"file:///t{number}.py", language_id="python", version=1, text="x"
        )
        server.protocol._handle_notification(
            types.TEXT_DOCUMENT_DID_OPEN, types.DidOpenTextDocumentParams(text_document=document)
        )
    # pygls's own handler and ours, for each, waiting
    await wait_until(lambda: len(server.protocol._request_futures) == 6, 30, "six handlers running")
    for _ in server.protocol.lsp_shutdown():
        pass
    await wait_until(lambda: server.protocol._request_futures == {}, 30, "the cancelled handlers forgotten")
    assert seen == []
