"""No cold first suggestion: the prompt at a cursor is computed before the user asks for it there.

LSP has no cursor notification, so the server learns where the cursor rests from ``didOpen`` (the
start of the document), from the custom notification ``codedraft/cursor`` that the VS Code
extension sends when the selection changes, and from the range of a ``textDocument/codeAction``
request (editors ask for code actions where the cursor is). Once the cursor has rested for
``completion.prefillDelayMs`` at a new place, the server builds the very request a completion there
would send and hands it to the daemon's ``Prefill``, which computes its KV at the lowest priority and
generates nothing; the next suggestion there reuses it. Where that request is the local stand-in of a
cold full prompt (:mod:`lsp_server.completion.cold_prompts`), the full prompt is computed next, and
suggestions there send it once it is done. After a suggestion that sent a local prompt, the full one
is computed once typing has paused for ``QUIET_S``.

Typing always comes first: an edit or a completion request of the document drops a prefill that is
still waiting, a cursor that moves while the document is being typed in (within ``QUIET_S`` of an edit
or a completion request) starts none, and in the daemon a completion of the document supersedes a
running prefill, which keeps what it computed. One prefill per document at a time: a newer one
cancels the older. A daemon that skips prefills (it serves a remote engine) is not asked again.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from lsprotocol import types

from inference.api.codedraft.v1 import inference_pb2 as pb
from lsp_server.completion.cold_prompts import PlannedPrompt
from lsp_server.config import CompletionSettings
from lsp_server.daemon_supervisor import RequestRejected

log = logging.getLogger(__name__)

# A cursor that moves this soon after an edit or a completion request of its document is the typing
# cursor: the completion requests that typing sends compute its prompt already.
QUIET_S = 1.0
# A prefill waits behind every other request in the daemon; past this it is given up (what it
# computed stays cached).
PREFILL_TIMEOUT_S = 120.0

BuildPrompts = Callable[[str, types.Position], Awaitable[Sequence[PlannedPrompt]]]
"""The prompts to compute ahead of a completion at a cursor, in order; none where no completion would
ask the daemon."""

SendPrefill = Callable[[PlannedPrompt, float], Awaitable[pb.PrefillResponse | None]]
"""The daemon's ``Prefill`` with a timeout in seconds; None while no daemon is ready. Raises
``TimeoutError``, ``ConnectionError`` or ``RequestRejected`` (a completion superseded it)."""


@dataclass
class _Document:
    """One document's prefill state: the cursor prefilled last, and the waiting or running prefill."""

    cursor: tuple[int, int] | None = None
    waiting: asyncio.TimerHandle | None = None
    running: asyncio.Task[None] | None = None
    typed_at: float = float("-inf")


class CursorPrefill:
    """Decides when the prompt at a document's cursor is computed ahead of a completion there."""

    def __init__(
        self, settings: Callable[[], CompletionSettings], build: BuildPrompts, send: SendPrefill
    ) -> None:
        self._settings = settings
        self._build = build
        self._send = send
        self._documents: dict[str, _Document] = {}
        self.skipped: str | None = None
        """Why the daemon skips prefills (then none is sent), or None."""

    def moved(self, uri: str, position: types.Position) -> None:
        """The cursor of ``uri`` is now at ``position``: prefill there once it has rested."""
        settings = self._settings()
        if not settings.prefill or self.skipped is not None:
            return
        document = self._documents.setdefault(uri, _Document())
        cursor = (position.line, position.character)
        if cursor == document.cursor or time.monotonic() - document.typed_at < QUIET_S:
            return
        self._schedule(uri, document, position, settings.prefill_delay_ms / 1000.0)

    def settle(self, uri: str, position: types.Position) -> None:
        """A suggestion at ``position`` sent a local prompt: compute the full one there once typing has
        paused for ``QUIET_S`` (an edit or a completion request before then drops it)."""
        settings = self._settings()
        if not settings.prefill or self.skipped is not None:
            return
        document = self._documents.setdefault(uri, _Document())
        self._schedule(uri, document, position, max(QUIET_S, settings.prefill_delay_ms / 1000.0))

    def edited(self, uri: str) -> None:
        """The user typed in ``uri``: its cursor's prompt changed, and completions will compute it."""
        document = self._documents.setdefault(uri, _Document())
        document.typed_at = time.monotonic()
        document.cursor = None
        _cancel_waiting(document)
        if document.running is not None:
            document.running.cancel()  # stopped in the daemon, which keeps what it computed

    def completing(self, uri: str) -> None:
        """A completion of ``uri`` was asked for: a waiting prefill is not needed any more (a running
        one is superseded in the daemon when the completion gets there, and keeps what it computed)."""
        document = self._documents.setdefault(uri, _Document())
        document.typed_at = time.monotonic()
        _cancel_waiting(document)

    def forget(self, uri: str) -> None:
        """The document closed: drop its prefill."""
        document = self._documents.pop(uri, None)
        if document is not None:
            _cancel_waiting(document)
            if document.running is not None:
                document.running.cancel()

    def _schedule(self, uri: str, document: _Document, position: types.Position, delay_s: float) -> None:
        """The prefill at ``position`` in ``delay_s``, in place of one still waiting."""
        _cancel_waiting(document)
        document.cursor = (position.line, position.character)
        document.waiting = asyncio.get_running_loop().call_later(
            delay_s, self._start, uri, document, position
        )

    def _start(self, uri: str, document: _Document, position: types.Position) -> None:
        document.waiting = None
        if document.running is not None:
            document.running.cancel()
        document.running = asyncio.ensure_future(self._prefill(uri, document, position))

    async def _prefill(self, uri: str, document: _Document, position: types.Position) -> None:
        try:
            for prompt in await self._build(uri, position):
                reply = await self._send(prompt, PREFILL_TIMEOUT_S)
                if reply is None:
                    return
                if reply.skipped:
                    self.skipped = reply.skipped
                    log.info("the daemon skips prefills (%s); no more are sent", reply.skipped)
                    return
                log.debug(
                    "prefilled %s %s:%s (%s prompt): %d prompt tokens, %d computed",
                    uri,
                    position.line,
                    position.character,
                    "local" if prompt.local else "full",
                    reply.figures.prompt_tokens,
                    reply.figures.computed_tokens,
                )
        except (TimeoutError, ConnectionError, RequestRejected) as error:
            log.debug("prefill at %s %s:%s stopped: %s", uri, position.line, position.character, error)
        finally:
            if document.running is asyncio.current_task():
                document.running = None


def _cancel_waiting(document: _Document) -> None:
    if document.waiting is not None:
        document.waiting.cancel()
        document.waiting = None
