"""When the server prefills the prompt at a cursor: once the cursor rests at a new place, never for
the typing cursor, one prefill per document, and no more after the daemon said it skips them."""

from __future__ import annotations

import asyncio
import dataclasses

from lsprotocol import types

from inference.api.codedraft.v1 import inference_pb2 as pb
from lsp_server.config import CompletionSettings
from lsp_server.cursor_prefill import CursorPrefill
from lsp_server.daemon import RequestRejected
from lsp_server.features.cursor import cursor_from

DELAY_MS = 10


class _Daemon:
    """Records the prefills sent; each waits for `release` unless it is already set."""

    def __init__(self, reply: pb.PrefillResponse | None = None) -> None:
        self.sent: list[pb.CompleteRequest] = []
        self.cancelled = 0
        self.release = asyncio.Event()
        self.release.set()
        self.reply = reply or pb.PrefillResponse(prefilled=True)

    async def build(self, uri: str, position: types.Position) -> pb.CompleteRequest | None:
        return pb.CompleteRequest(session_id=uri, prefix=f"{position.line}:{position.character}")

    async def send(self, request: pb.CompleteRequest, timeout_s: float) -> pb.PrefillResponse | None:
        self.sent.append(request)
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        return self.reply


def _prefill(daemon: _Daemon, **settings: object) -> CursorPrefill:
    chosen = dataclasses.replace(CompletionSettings(prefill_delay_ms=DELAY_MS), **settings)  # type: ignore[arg-type]
    return CursorPrefill(lambda: chosen, daemon.build, daemon.send)


def _at(line: int, character: int) -> types.Position:
    return types.Position(line=line, character=character)


async def _settle() -> None:
    await asyncio.sleep(DELAY_MS / 1000 * 5)


async def test_the_cursor_that_rests_is_prefilled_once_and_only_where_it_rested() -> None:
    daemon = _Daemon()
    prefill = _prefill(daemon)
    prefill.moved("a", _at(1, 0))
    prefill.moved("a", _at(5, 2))  # before the delay: only the place where it rests counts
    await _settle()
    prefill.moved("a", _at(5, 2))  # the same place again: nothing new to compute
    await _settle()
    assert [(r.session_id, r.prefix) for r in daemon.sent] == [("a", "5:2")]
    assert prefill.finished == 1 and prefill.last is not None and prefill.last.prefilled


async def test_typing_drops_waiting_prefills_and_quiets_the_cursor() -> None:
    daemon = _Daemon()
    prefill = _prefill(daemon)
    prefill.moved("a", _at(1, 0))
    prefill.edited("a")
    prefill.moved("a", _at(1, 1))  # the cursor that typing moved
    prefill.moved("b", _at(3, 0))
    prefill.completing("b")
    await _settle()
    assert daemon.sent == []


async def test_an_edit_stops_a_running_prefill_and_a_newer_place_replaces_it() -> None:
    daemon = _Daemon()
    daemon.release.clear()
    prefill = _prefill(daemon)
    prefill.moved("a", _at(1, 0))
    await _settle()
    prefill.moved("a", _at(9, 0))
    await _settle()
    assert [r.prefix for r in daemon.sent] == ["1:0", "9:0"] and daemon.cancelled == 1
    prefill.edited("a")
    await asyncio.sleep(0)
    assert daemon.cancelled == 2 and prefill.finished == 0


async def test_a_daemon_that_skips_prefills_is_not_asked_again() -> None:
    daemon = _Daemon(pb.PrefillResponse(skipped="the daemon serves a remote engine"))
    prefill = _prefill(daemon)
    prefill.moved("a", _at(1, 0))
    await _settle()
    prefill.moved("a", _at(2, 0))
    await _settle()
    assert len(daemon.sent) == 1 and prefill.skipped == "the daemon serves a remote engine"


async def test_off_sends_nothing_and_a_superseded_prefill_is_quiet() -> None:
    daemon = _Daemon()
    off = _prefill(daemon, prefill=False)
    off.moved("a", _at(1, 0))
    await _settle()
    assert daemon.sent == []

    async def superseded(request: pb.CompleteRequest, timeout_s: float) -> pb.PrefillResponse | None:
        raise RequestRejected("CANCELLED: superseded by request x of the same session 'a'")

    prefill = CursorPrefill(lambda: CompletionSettings(prefill_delay_ms=DELAY_MS), daemon.build, superseded)
    prefill.moved("a", _at(1, 0))
    await _settle()
    assert prefill.finished == 0 and prefill.skipped is None


def test_cursor_notifications_are_read_from_pygls_objects_or_dicts() -> None:
    plain = {"textDocument": {"uri": "file:///a.py"}, "position": {"line": 3, "character": 4}}
    assert cursor_from(plain) == ("file:///a.py", _at(3, 4))
    assert (
        cursor_from({"textDocument": {"uri": "file:///a.py"}, "position": {"line": -1, "character": 0}})
        is None
    )
    assert cursor_from({"position": {"line": 1, "character": 0}}) is None
    assert cursor_from(None) is None
