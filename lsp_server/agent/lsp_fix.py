"""``codedraft.fix`` and the "Fix with codedraft" resolve through the agent loop, inside the server.

Progress streams step by step (``$/progress`` and ``codedraft/streamText``); the result is a
``WorkspaceEdit`` that needs the user's confirmation, built from the changes whose check passed.
"""

from __future__ import annotations

import contextlib
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from indexer.positions import utf16_length
from lsp_server.agent.edits import Target
from lsp_server.agent.loop import FixResult, FixTask, run_fix
from lsp_server.agent.model_calls import daemon_generate
from lsp_server.agent.model_fit import cannot_fix, reply_form
from lsp_server.agent.sandbox import Limits, Sandbox
from lsp_server.config import AgentSettings
from lsp_server.daemon_supervisor import RequestRejected
from lsp_server.edit_target import selected_lines
from lsp_server.editor_host import EditorHost
from lsp_server.rewrite.proposal_check import EditOutsideWorkspace
from lsp_server.rewrite.workspace_edit import ANNOTATION_ID, check_inside_workspace

if TYPE_CHECKING:
    from pygls.workspace import TextDocument


_TOLD: set[str] = set()
"""The models this server has already said cannot fix (``model_fit.cannot_fix``)."""


@dataclass
class AgentFix:
    """What the server tells the client: the edit (when verified), and the loop's account of itself."""

    id: str
    edit: types.WorkspaceEdit | None = None
    error: str | None = None
    result: FixResult | None = None
    summary: dict[str, Any] = field(default_factory=dict)


async def run_agent_fix(
    host: EditorHost,
    settings: AgentSettings,
    uri: str,
    span: types.Range,
    diagnostics: list[str],
    title: str,
    instruction: str | None = None,
) -> AgentFix:
    """Runs the agent loop for the lines of ``span`` in ``uri`` with the configured check: a fix, or
    with ``instruction`` a refactor that must leave the check passing."""
    fix = AgentFix(id=uuid.uuid4().hex)
    document = host.open_document(uri)
    root = host.workspace_root
    if document is None or root is None or not settings.check_command:
        fix.error = "the agent needs an open document, a workspace folder and codedraft.agent.checkCommand"
        return fix
    try:
        path = check_inside_workspace(uri, root)
    except EditOutsideWorkspace as error:
        fix.error = str(error)
        return fix
    model = host.served_model
    unable = cannot_fix(model.name, model.parameters) if instruction is None else None
    if unable is not None:
        fix.error = unable
        if model.name not in _TOLD:  # a message window once; each later fix answers with the reason
            _TOLD.add(model.name)
            host.show_warning(unable)
        return fix
    first, last = selected_lines(span)
    relative = path.relative_to(root.resolve()).as_posix()
    target = Target(relative, first, last)
    task = FixTask(
        workspace=root,
        target=target,
        check_command=settings.check_command,
        diagnostics=diagnostics,
        overlays={relative: doc.source for relative, doc in _open_documents(host, root).items()},
        step_limit=settings.step_limit,
        time_limit_s=float(settings.time_limit_s),
        use_tools=host.model_supports_tools,
        instruction=instruction,
        reply_form=reply_form(model.parameters, target),
    )
    stream = await host.reply_stream(fix.id, title)

    def report(message: str) -> None:
        stream.text(f"\n[codedraft] {message}\n", progress=message)

    def delta(_request_id: str, text: str) -> None:
        stream.text(text)

    generate = daemon_generate(host.stream_generate, f"{uri}#agent", delta, reply_form=task.reply_form)
    sandbox = Sandbox("auto", Limits(wall_s=float(settings.time_limit_s)))
    try:
        fix.result = await run_fix(task, generate, sandbox, report)
    except (ConnectionError, TimeoutError, RequestRejected) as error:
        fix.error = f"the model could not answer: {error or 'timed out'}"
        return fix
    finally:
        stream.end()
    result = fix.result
    for warning in result.warnings:  # e.g. no sandbox at all: the user must hear it, not just the log
        host.show_warning(warning)
    fix.summary = {
        "verified": result.verified,
        "status": result.status,
        "check": (result.check or result.baseline).summary(),
        "output": (result.check or result.baseline).output[-4000:],
        "attempts": [f"attempt {a.step}: {a.outcome}" for a in result.attempts],
        "warnings": result.warnings,
    }
    if not result.verified:
        fix.error = result.report()
        return fix
    try:
        versions = {relative: doc.version for relative, doc in _open_documents(host, root).items()}
        fix.edit = verified_edit(result.changes, root, versions, title, result.report())
    except EditOutsideWorkspace as error:
        fix.error = str(error)
    return fix


def verified_edit(
    changes: dict[str, tuple[str | None, str]],
    root: Path,
    versions: dict[str, int | None],
    label: str,
    description: str,
) -> types.WorkspaceEdit:
    """One confirmed edit per changed file (the changed lines only); new files are created first."""
    document_changes: list[Any] = []
    for relative, (before, after) in sorted(changes.items()):
        uri = (root / relative).as_uri()
        check_inside_workspace(uri, root)
        if before is None:
            document_changes.append(types.CreateFile(uri=uri, annotation_id=ANNOTATION_ID))
            before = ""
        span, new_text = changed_lines(before, after)
        edit = types.AnnotatedTextEdit(range=span, new_text=new_text, annotation_id=ANNOTATION_ID)
        identifier = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=versions.get(relative))
        document_changes.append(types.TextDocumentEdit(text_document=identifier, edits=[edit]))
    annotation = types.ChangeAnnotation(label=label, needs_confirmation=True, description=description)
    return types.WorkspaceEdit(
        document_changes=document_changes, change_annotations={ANNOTATION_ID: annotation}
    )


def changed_lines(before: str, after: str) -> tuple[types.Range, str]:
    """The smallest run of whole lines of ``before`` to replace, and its replacement, to get ``after``."""
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    prefix = 0
    while prefix < min(len(old), len(new)) and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(len(old), len(new)) - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    end_line = len(old) - suffix
    if end_line < len(old) or not old or old[-1].endswith(("\n", "\r")):
        end = types.Position(line=end_line, character=0)
    else:  # through the end of a last line without a newline
        last = old[-1]
        end = types.Position(line=len(old) - 1, character=utf16_length(last))
    start = types.Position(line=prefix, character=0)
    return types.Range(start=start, end=end), "".join(new[prefix : len(new) - suffix])


def _open_documents(host: EditorHost, root: Path) -> dict[str, TextDocument]:
    """The editor's open documents inside the workspace, by relative path (their unsaved text wins)."""
    documents: dict[str, TextDocument] = {}
    for document in host.open_documents():
        with contextlib.suppress(EditOutsideWorkspace, ValueError):
            path = check_inside_workspace(document.uri, root)
            documents[path.relative_to(root.resolve()).as_posix()] = document
    return documents
