"""``workspace/executeCommand``: ``codedraft.reindex`` and ``codedraft.status``."""

from __future__ import annotations

import asyncio
from typing import Any

from lsp_server.features.lifecycle import start_index
from lsp_server.server import CodedraftServer


def setup(server: CodedraftServer) -> None:
    @server.command("codedraft.status")
    async def status(ls: CodedraftServer, *args: Any) -> dict[str, Any]:
        """The backend's status (the same object ``codedraft/status`` notifications carry)."""
        return ls.status.status.to_wire()

    @server.command("codedraft.reindex")
    async def reindex(ls: CodedraftServer, *args: Any) -> dict[str, Any]:
        """Re-indexes the workspace (changed files only) and returns what the refresh did."""
        if ls.workspace_root is None:
            return {"indexed": False, "reason": "no workspace folder"}
        if ls.index is None:
            await start_index(ls, ls.workspace_root)
            return {"indexed": ls.index is not None}
        ls.status.update(indexing=True, index_message=f"re-indexing {ls.workspace_root.name}")
        try:
            report = await asyncio.to_thread(ls.index.refresh, ls.status.index_progress)
        finally:
            ls.status.update(indexing=False, index_message=None)
        return {"indexed": True, "added": report.added, "updated": report.updated, "deleted": report.deleted}
