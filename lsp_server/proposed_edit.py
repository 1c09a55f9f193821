"""The one owner of how a fix or a refactor is proposed.

With ``codedraft.agent.checkCommand`` set, the agent loop proposes an edit and offers it only once the
check passed with it in a sandbox (verified). Without one, the model rewrites the lines once and the
edit is offered labelled as not verified. The code action and both commands ask here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lsprotocol import types

from lsp_server.agent.lsp_fix import run_agent_fix
from lsp_server.config import AgentSettings
from lsp_server.editor_host import EditorHost
from lsp_server.rewrite.prompts import fix_instruction
from lsp_server.rewrite.session import run_rewrite
from lsp_server.rewrite.workspace_edit import ANNOTATION_ID

REFACTOR_TITLE = "Refactor with codedraft…"
FIX_TITLE = "Fix with codedraft"
NOT_VERIFIED = "not verified: set codedraft.agent.checkCommand to have fixes checked before they are offered"


@dataclass
class ProposedEdit:
    """An edit for the user to confirm, or why there is none."""

    id: str
    edit: types.WorkspaceEdit | None
    error: str | None
    verified: bool
    """Whether the configured check passed with the edit."""
    summary: dict[str, Any] = field(default_factory=dict)
    """The agent loop's account of itself (status, check, attempts); empty for a plain rewrite."""


async def propose_edit(
    host: EditorHost,
    agent: AgentSettings,
    uri: str,
    span: types.Range,
    diagnostics: list[str],
    title: str,
    instruction: str | None = None,
) -> ProposedEdit:
    """A fix of ``diagnostics`` in the lines of ``span`` (or, with ``instruction``, a refactor),
    verified by the agent loop when a check is configured."""
    if agent.check_command:
        fix = await run_agent_fix(host, agent, uri, span, diagnostics, title, instruction)
        return ProposedEdit(fix.id, fix.edit, fix.error, fix.edit is not None, fix.summary)
    wanted = instruction if instruction is not None else fix_instruction(diagnostics)
    result = await run_rewrite(host, uri, span, wanted, diagnostics, title)
    if result.edit is not None and result.edit.change_annotations:
        result.edit.change_annotations[ANNOTATION_ID].description = NOT_VERIFIED
    return ProposedEdit(result.id, result.edit, result.error, verified=False)
