"""``workspace/executeCommand``: ``codedraft.refactor``, ``codedraft.fix``, ``codedraft.reindex`` and
``codedraft.status``."""

from __future__ import annotations

import asyncio
from typing import Any

from lsprotocol import types

from lsp_server.agent.lsp_fix import run_agent_fix
from lsp_server.features.code_actions import FIX_TITLE, NOT_VERIFIED, REFACTOR_TITLE, range_from_json
from lsp_server.features.lifecycle import start_index
from lsp_server.rewrite.prompts import DEFAULT_INSTRUCTION, fix_instruction
from lsp_server.rewrite.session import run_rewrite
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

    @server.command("codedraft.refactor")
    async def refactor(ls: CodedraftServer, *args: Any) -> dict[str, Any]:
        """Rewrites ``{uri, range}`` following ``instruction`` and proposes the edit for confirmation."""
        target = _target(args)
        instruction = str(target.get("instruction") or DEFAULT_INSTRUCTION)
        if ls.settings.agent.check_command:
            return await _verified_fix_and_apply(ls, target, [], REFACTOR_TITLE, instruction)
        return await _rewrite_and_apply(ls, target, instruction, [], REFACTOR_TITLE)

    @server.command("codedraft.fix")
    async def fix(ls: CodedraftServer, *args: Any) -> dict[str, Any]:
        """Fixes the problems (``diagnostics``: messages) in ``{uri, range}`` and proposes the edit."""
        target = _target(args)
        messages = [str(m) for m in target.get("diagnostics") or []]
        if ls.settings.agent.check_command:
            return await _verified_fix_and_apply(ls, target, messages, FIX_TITLE)
        response = await _rewrite_and_apply(ls, target, fix_instruction(messages), messages, FIX_TITLE)
        return {**response, "verified": False, "note": NOT_VERIFIED}


def _target(args: tuple[Any, ...]) -> dict[str, Any]:
    """The command's one argument ``{uri, range, ...}``; ValueError (an error response) when malformed."""
    target: Any = args[0] if args else None
    if isinstance(target, list) and target:
        target = target[0]
    target = _plain(target)
    if not isinstance(target, dict) or not isinstance(target.get("uri"), str) or "range" not in target:
        raise ValueError("expected one argument {uri, range, instruction?}")
    return target


async def _rewrite_and_apply(
    ls: CodedraftServer, target: dict[str, Any], instruction: str, diagnostics: list[str], title: str
) -> dict[str, Any]:
    span = range_from_json(_plain(target["range"]))
    result = await run_rewrite(ls, target["uri"], span, instruction, diagnostics, title)
    if result.edit is None:
        return {"id": result.id, "applied": False, "reason": result.error}
    response = await ls.workspace_apply_edit_async(
        types.ApplyWorkspaceEditParams(edit=result.edit, label=title)
    )
    return {
        "id": result.id,
        "applied": bool(response.applied),
        "reason": None if response.applied else (response.failure_reason or "the edit was not applied"),
    }


async def _verified_fix_and_apply(
    ls: CodedraftServer,
    target: dict[str, Any],
    messages: list[str],
    title: str,
    instruction: str | None = None,
) -> dict[str, Any]:
    """The agent loop's fix or refactor: proposed for confirmation only once the configured check
    passed with it."""
    span = range_from_json(_plain(target["range"]))
    fix = await run_agent_fix(ls, target["uri"], span, messages, title, instruction)
    if fix.edit is None:
        return {"id": fix.id, "applied": False, "verified": False, "reason": fix.error, **fix.summary}
    response = await ls.workspace_apply_edit_async(types.ApplyWorkspaceEditParams(edit=fix.edit, label=title))
    return {
        "id": fix.id,
        **fix.summary,
        "applied": bool(response.applied),
        "reason": None if response.applied else (response.failure_reason or "the edit was not applied"),
    }


def _plain(value: Any) -> Any:
    """JSON values pygls hands over as named tuples, as dicts."""
    if hasattr(value, "_asdict"):
        return {key: _plain(item) for key, item in value._asdict().items()}
    return value
