"""``codedraft.documents``: the text the server holds for each open document, so that a test or a bug
report can compare it with the editor's own (the soak test in ``tests/e2e/soak`` does, after
thousands of edits)."""

from __future__ import annotations

from typing import Any

from lsp_server.server import CodedraftServer


def setup(server: CodedraftServer) -> None:
    @server.command("codedraft.documents")
    async def documents(ls: CodedraftServer, *args: Any) -> list[dict[str, Any]]:
        """Every open document as ``{uri, version, text}``: the server's copy, with every change it
        has received applied (notifications are handled in order, so all that the editor sent
        before this request)."""
        return [
            {"uri": document.uri, "version": document.version, "text": document.source}
            for document in ls.open_documents()
        ]
