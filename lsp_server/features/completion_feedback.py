"""What the editor says became of an inline completion: shown, accepted whole or in part, dismissed.

Named and shaped as Copilot's language server takes them, so its clients (copilot.lua, copilot.el,
copilot.vim …) report to codedraft unchanged, with ``codedraft.didAcceptCompletionItem`` in place of
``github.copilot.didAcceptCompletionItem``:

* ``textDocument/didShowCompletion`` ``{item}``: the item is on screen;
* ``textDocument/didPartiallyAcceptCompletion`` ``{item, acceptedLength}``: the user took its first
  ``acceptedLength`` UTF-16 code units (a word, a line);
* the item's own ``command`` (``codedraft.didAcceptCompletionItem`` with ``[id]``), which the editor
  runs when the user takes the whole item;
* ``codedraft/didDismissCompletion`` ``{item}`` (codedraft's own: Copilot has none): the user
  dismissed it (Esc, typed past it).

``item`` is the inline completion item as the server sent it; only ``item.command.arguments[0]``, the
id, is read. ``codedraft.resetAcceptHistory`` forgets what was learned. Each report updates the
``accepts`` of ``codedraft/status``.
"""

from __future__ import annotations

import logging
from typing import Any

from lsp_server.completion.suggestion_feedback import ACCEPT_COMMAND, item_id_of
from lsp_server.server import CodedraftServer

log = logging.getLogger(__name__)

DID_SHOW = "textDocument/didShowCompletion"
DID_PARTIALLY_ACCEPT = "textDocument/didPartiallyAcceptCompletion"
DID_DISMISS = "codedraft/didDismissCompletion"
RESET_COMMAND = "codedraft.resetAcceptHistory"


def setup(server: CodedraftServer) -> None:
    @server.feature(DID_SHOW)
    def did_show(ls: CodedraftServer, params: Any) -> None:
        identifier = _item_id(params, DID_SHOW)
        if identifier is not None and ls.completions.feedback.shown(identifier):
            _publish(ls, identifier)

    @server.feature(DID_PARTIALLY_ACCEPT)
    def did_partially_accept(ls: CodedraftServer, params: Any) -> None:
        identifier = _item_id(params, DID_PARTIALLY_ACCEPT)
        length = _param(params, "acceptedLength")
        if identifier is None or not isinstance(length, int) or isinstance(length, bool):
            return
        if ls.completions.feedback.partially_accepted(identifier, length):
            _publish(ls, identifier)

    @server.feature(DID_DISMISS)
    def did_dismiss(ls: CodedraftServer, params: Any) -> None:
        identifier = _item_id(params, DID_DISMISS)
        if identifier is not None and ls.completions.feedback.dismissed(identifier):
            _publish(ls, identifier)

    @server.command(ACCEPT_COMMAND)
    async def did_accept(ls: CodedraftServer, *args: Any) -> None:
        """The user took the whole inline completion item whose id is the argument."""
        identifier = args[0] if args and isinstance(args[0], str) else None
        if identifier is not None and ls.completions.feedback.accepted(identifier):
            _publish(ls, identifier)

    @server.command(RESET_COMMAND)
    async def reset(ls: CodedraftServer, *args: Any) -> dict[str, Any]:
        """Forgets the accept history of every model (the gate returns to its calibrated point)."""
        ls.completions.feedback.reset()
        accepts = ls.completions.feedback.summary(ls.daemon.room.model)
        ls.status.update(accepts=accepts)
        return accepts


def _item_id(params: Any, method: str) -> str | None:
    identifier = item_id_of(_param(params, "item"))
    if identifier is None:
        log.debug("ignored %s without an item id: %r", method, params)
    return identifier


def _param(params: Any, name: str) -> Any:
    try:
        return params[name] if isinstance(params, dict) else getattr(params, name)
    except (AttributeError, KeyError, TypeError):
        return None


def _publish(ls: CodedraftServer, identifier: str) -> None:
    model = ls.completions.feedback.model_of(identifier)
    if model is not None and model == ls.daemon.room.model:
        ls.status.update(accepts=ls.completions.feedback.summary(model))
