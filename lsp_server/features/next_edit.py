"""Next-edit suggestions as Copilot's language server speaks them (see ``lsp_server/inline_edits.py``
for the wire): the ``textDocument/copilotInlineEdit`` request, the ``textDocument/didShowInlineEdit``
notification, and the ``codedraft.acceptInlineEdit`` / ``codedraft.rejectInlineEdit`` commands a client
runs after applying or dismissing an edit."""

from __future__ import annotations

import logging
from typing import Any

from lsp_server.inline_edits import (
    ACCEPT,
    DID_SHOW_INLINE_EDIT,
    INLINE_EDIT,
    REJECT,
    edit_id,
    field,
    predicted_edits,
    wire_cursor,
)
from lsp_server.server import CodedraftServer

log = logging.getLogger(__name__)


def setup(server: CodedraftServer) -> None:
    @server.feature(INLINE_EDIT)
    async def inline_edit(ls: CodedraftServer, params: Any) -> dict[str, Any]:
        uri, line, column = wire_cursor(params)
        return {"edits": await predicted_edits(ls, uri, line, column)}

    @server.feature(DID_SHOW_INLINE_EDIT)
    def did_show(ls: CodedraftServer, params: Any) -> None:
        shown = edit_id(field(field(field(params, "item"), "command"), "arguments"))
        log.debug("next edit %s shown", shown)

    @server.command(ACCEPT)
    def accept(ls: CodedraftServer, *args: Any) -> None:
        accepted = edit_id(args)
        if accepted is not None:
            ls.next_edits.accepted(accepted)

    @server.command(REJECT)
    def reject(ls: CodedraftServer, *args: Any) -> None:
        rejected = edit_id(args)
        if rejected is not None:
            ls.next_edits.rejected(rejected)
