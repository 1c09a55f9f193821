"""The one owner of how a long reply reaches the editor while it is generated.

A refactor's or a fix's text streams as ``codedraft/streamText`` notifications ``{id, delta, done}``
(every client gets them) and, when the client supports work-done progress, as ``$/progress`` reports
under the same token. ``done: true`` and the progress end are sent exactly once, however the reply
ends.
"""

from __future__ import annotations

import contextlib
from typing import Any, Protocol

from lsprotocol import types
from pygls.lsp.server import LanguageServer

STREAM_NOTIFICATION = "codedraft/streamText"


class ReplyStream(Protocol):
    """What a long job tells the editor while it runs."""

    def text(self, delta: str, progress: str | None = None) -> None:
        """Sends ``delta`` as streamText, and ``progress`` (when given) as a progress report."""

    def end(self) -> None:
        """Ends the stream (``done: true``) and the progress report; later calls do nothing."""


class EditorReplyStream:
    """A :class:`ReplyStream` over a pygls server's notifications and work-done progress."""

    def __init__(self, server: LanguageServer, token: str, progress: bool) -> None:
        self._server = server
        self._token = token
        self._progress = progress
        self._ended = False

    def text(self, delta: str, progress: str | None = None) -> None:
        if self._ended:
            return
        if delta:
            self._notify({"id": self._token, "delta": delta, "done": False})
        if progress is not None and self._progress:
            self._server.work_done_progress.report(
                self._token, types.WorkDoneProgressReport(message=progress)
            )

    def end(self) -> None:
        if self._ended:
            return
        self._ended = True
        self._notify({"id": self._token, "delta": "", "done": True})
        if self._progress:
            self._server.work_done_progress.end(self._token, types.WorkDoneProgressEnd(message="done"))

    def _notify(self, params: dict[str, Any]) -> None:
        self._server.protocol.notify(STREAM_NOTIFICATION, params)


async def begin_reply_stream(server: LanguageServer, token: str, title: str) -> EditorReplyStream:
    """Starts a stream named ``token``; its progress report begins when the client supports one."""
    return EditorReplyStream(server, token, await _begin_progress(server, token, title))


async def _begin_progress(server: LanguageServer, token: str, title: str) -> bool:
    window = server.client_capabilities.window
    if window is None or not window.work_done_progress:
        return False
    with contextlib.suppress(Exception):  # a client that refuses the token still gets streamText
        await server.work_done_progress.create_async(token)
        server.work_done_progress.begin(token, types.WorkDoneProgressBegin(title=title, cancellable=False))
        return True
    return False
