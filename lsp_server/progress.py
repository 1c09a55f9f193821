"""Work-done progress (``$/progress``) for long commands, when the client supports it."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from lsprotocol import types

if TYPE_CHECKING:
    from lsp_server.server import CodedraftServer


async def begin_progress(ls: CodedraftServer, token: str, title: str) -> bool:
    """Creates and begins a progress report named ``token``; False when the client has none (it still
    gets ``codedraft/streamText``)."""
    window = ls.client_capabilities.window
    if window is None or not window.work_done_progress:
        return False
    with contextlib.suppress(Exception):  # a client that refuses the token still gets streamText
        await ls.work_done_progress.create_async(token)
        ls.work_done_progress.begin(token, types.WorkDoneProgressBegin(title=title, cancellable=False))
        return True
    return False
