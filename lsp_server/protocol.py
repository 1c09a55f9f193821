"""pygls's language server protocol, with UTF-16 positions (`utf16_positions.Utf16Protocol`) and
without its growth per message.

pygls (2.1) files every handler it runs in ``_request_futures`` under a fresh id: each notification
(``didChange`` on every keystroke, ``codedraft/cursor``) and each step of its own generator handlers
(the text-sync ones hand over to ours). Only answered requests and cancellations take entries out,
so a day of typing keeps a future and a task per keystroke (about 3 KB each: 30 MB per 10,000
edits, found by the soak test). Here an entry leaves once its handler is done.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from functools import partial
from typing import Any

from lsp_server.utf16_positions import Utf16Protocol


class CodedraftProtocol(Utf16Protocol):
    """``LanguageServerProtocol`` whose ``_request_futures`` holds only handlers still running (and
    requests not answered yet): what ``$/cancelRequest`` needs, and no more."""

    def _execute_handler(
        self,
        msg_id: Any,
        handler: Callable[..., Any],
        callback: Callable[[Future[Any]], None],
        args: tuple[Any, ...] | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        super()._execute_handler(msg_id, handler, callback, args, kwargs)
        running = self._request_futures.get(msg_id)
        if running is not None:
            running.add_done_callback(partial(self._forget, msg_id))

    def _forget(self, msg_id: Any, done: Any) -> None:
        # a request's entry may already be gone (answered), or a newer one filed under its id
        if self._request_futures.get(msg_id) is done:
            # a new dict, not a deletion: pygls cancels what runs at shutdown by iterating this one,
            # and a cancelled future of its generator handlers calls back at once, mid-iteration
            # (the dict holds only the handlers still running: a short copy)
            self._request_futures = {key: f for key, f in self._request_futures.items() if key != msg_id}
