"""``workspace/executeCommand``: ``codedraft.refactor``, ``codedraft.fix``, ``codedraft.reindex`` and
``codedraft.status``."""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from lsp_server.edit_target import command_target, range_from_json
from lsp_server.indexing import refresh_index, start_index
from lsp_server.proposed_edit import FIX_TITLE, NOT_VERIFIED, REFACTOR_TITLE, ProposedEdit, propose_edit
from lsp_server.rewrite.prompts import DEFAULT_INSTRUCTION
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
            ls.index = await start_index(ls.settings.index, ls.status, ls.workspace_root, ls)
            return {"indexed": ls.index is not None}
        ls.status.update(indexing=True, index_message=f"re-indexing {ls.workspace_root.name}")
        try:
            report = await refresh_index(
                ls.index, ls.status, ls, f"codedraft: re-indexing {ls.workspace_root.name}"
            )
        finally:
            ls.status.update(indexing=False, index_message=None)
        return {"indexed": True, "added": report.added, "updated": report.updated, "deleted": report.deleted}

    @server.command("codedraft.refactor")
    async def refactor(ls: CodedraftServer, *args: Any) -> dict[str, Any]:
        """Rewrites ``{uri, range}`` following ``instruction`` and proposes the edit for confirmation."""
        target = command_target(args)
        instruction = str(target.get("instruction") or DEFAULT_INSTRUCTION)
        span = range_from_json(target["range"])
        proposal = await propose_edit(
            ls, ls.settings.agent, target["uri"], span, [], REFACTOR_TITLE, instruction
        )
        return await _apply(ls, proposal, REFACTOR_TITLE)

    @server.command("codedraft.fix")
    async def fix(ls: CodedraftServer, *args: Any) -> dict[str, Any]:
        """Fixes the problems (``diagnostics``: messages) in ``{uri, range}`` and proposes the edit."""
        target = command_target(args)
        messages = [str(m) for m in target.get("diagnostics") or []]
        span = range_from_json(target["range"])
        proposal = await propose_edit(ls, ls.settings.agent, target["uri"], span, messages, FIX_TITLE)
        return await _apply(ls, proposal, FIX_TITLE)


async def _apply(ls: CodedraftServer, proposal: ProposedEdit, title: str) -> dict[str, Any]:
    """Asks the editor to apply the proposed edit (it asks the user to confirm) and says what happened:
    ``applied``, ``reason``, ``verified`` (with the agent's account, or a ``note`` when unverified)."""
    account: dict[str, Any] = {"verified": proposal.verified, **proposal.summary}
    if not proposal.summary:
        account["note"] = NOT_VERIFIED
    if proposal.edit is None:
        return {"id": proposal.id, **account, "applied": False, "reason": proposal.error}
    response = await ls.workspace_apply_edit_async(
        types.ApplyWorkspaceEditParams(edit=proposal.edit, label=title)
    )
    return {
        "id": proposal.id,
        **account,
        "applied": bool(response.applied),
        "reason": None if response.applied else (response.failure_reason or "the edit was not applied"),
    }
