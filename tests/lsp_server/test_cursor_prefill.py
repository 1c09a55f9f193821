"""When the server prefills the prompt at a cursor: once the cursor rests at a new place, never for
the typing cursor, one prefill per document, a local prompt before its full one, the full one after
a local suggestion once typing pauses, and no more after the daemon said it skips them."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest
from lsprotocol import types

from inference.api.codedraft.v1 import inference_pb2 as pb
from lsp_server import cursor_prefill
from lsp_server.completion.cold_prompts import PlannedPrompt
from lsp_server.config import CompletionSettings
from lsp_server.cursor_prefill import CursorPrefill
from lsp_server.daemon_supervisor import RequestRejected
from lsp_server.features.cursor import cursor_from

DELAY_MS = 10


class _Daemon:
    """Records the prefills sent; each waits for `release` unless it is already set."""

    def __init__(self, reply: pb.PrefillResponse | None = None, local_first: bool = False) -> None:
        self.sent: list[pb.CompleteRequest] = []
        self.local_first = local_first
        self.cancelled = 0
        self.answered = 0
        """Prefills the daemon finished (computed, not stopped)."""
        self.release = asyncio.Event()
        self.release.set()
        self.reply = reply or pb.PrefillResponse(prefilled=True)

    async def build(self, uri: str, position: types.Position) -> list[PlannedPrompt]:
        full = PlannedPrompt.full(
            pb.CompleteRequest(session_id=uri, prefix=f"{position.line}:{position.character}")
        )
        if not self.local_first:
            return [full]
        local = pb.CompleteRequest(session_id=uri, prefix=f"local {position.line}:{position.character}")
        return [PlannedPrompt(local, None), full]

    async def send(self, prompt: PlannedPrompt, timeout_s: float) -> pb.PrefillResponse | None:
        self.sent.append(prompt.request)
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        self.answered += 1
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
    assert daemon.answered == 1


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
    assert daemon.cancelled == 2 and daemon.answered == 0


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

    rejected: list[str] = []

    async def superseded(prompt: PlannedPrompt, timeout_s: float) -> pb.PrefillResponse | None:
        rejected.append(prompt.request.prefix)
        raise RequestRejected("CANCELLED: superseded by request x of the same session 'a'")

    prefill = CursorPrefill(lambda: CompletionSettings(prefill_delay_ms=DELAY_MS), daemon.build, superseded)
    prefill.moved("a", _at(1, 0))
    await _settle()
    assert rejected == ["1:0"] and prefill.skipped is None


async def test_a_local_prompt_is_prefilled_before_its_full_one_and_typing_stops_both() -> None:
    daemon = _Daemon(local_first=True)
    prefill = _prefill(daemon)
    prefill.moved("a", _at(4, 2))
    await _settle()
    assert [r.prefix for r in daemon.sent] == ["local 4:2", "4:2"] and daemon.answered == 2
    daemon.sent.clear()
    daemon.release.clear()
    prefill.moved("a", _at(7, 0))
    await _settle()
    prefill.edited("a")  # while the local prompt is computed: the full one is never asked for
    await _settle()
    assert [r.prefix for r in daemon.sent] == ["local 7:0"] and daemon.cancelled == 1


async def test_after_a_local_suggestion_the_full_prompt_waits_for_a_pause_in_typing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(cursor_prefill, "QUIET_S", DELAY_MS * 3 / 1000)
    daemon = _Daemon(local_first=True)
    prefill = _prefill(daemon)
    prefill.edited("a")
    prefill.settle("a", _at(2, 5))
    await asyncio.sleep(DELAY_MS / 1000)
    prefill.edited("a")  # typing goes on: the waiting prefill is dropped
    prefill.settle("a", _at(2, 6))
    await asyncio.sleep(DELAY_MS * 2 / 1000)
    assert daemon.sent == []  # not yet a pause
    await asyncio.sleep(DELAY_MS * 3 / 1000)
    assert [r.prefix for r in daemon.sent] == ["local 2:6", "2:6"]
    prefill.moved("a", _at(2, 6))  # the cursor resting where the prefill was: nothing new
    await _settle()
    assert len(daemon.sent) == 2


def test_cursor_notifications_are_read_from_pygls_objects_or_dicts() -> None:
    plain = {"textDocument": {"uri": "file:///a.py"}, "position": {"line": 3, "character": 4}}
    assert cursor_from(plain) == ("file:///a.py", _at(3, 4))
    assert (
        cursor_from({"textDocument": {"uri": "file:///a.py"}, "position": {"line": -1, "character": 0}})
        is None
    )
    assert cursor_from({"position": {"line": 1, "character": 0}}) is None
    assert cursor_from(None) is None
