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
from lsp_server.agent.edits import EditOutsideWorkspace, Target
from lsp_server.agent.loop import FixResult, FixTask, run_fix
from lsp_server.agent.model_calls import daemon_generate
from lsp_server.agent.sandbox import Limits, Sandbox
from lsp_server.daemon_supervisor import RequestRejected
from lsp_server.progress import begin_progress
from lsp_server.rewrite.session import STREAM_NOTIFICATION
from lsp_server.rewrite.workspace_edit import ANNOTATION_ID, check_inside_workspace

if TYPE_CHECKING:
    from pygls.workspace import TextDocument

    from lsp_server.server import CodedraftServer


@dataclass
class AgentFix:
    """What the server tells the client: the edit (when verified), and the loop's account of itself."""

    id: str
    edit: types.WorkspaceEdit | None = None
    error: str | None = None
    result: FixResult | None = None
    summary: dict[str, Any] = field(default_factory=dict)


async def run_agent_fix(
    ls: CodedraftServer,
    uri: str,
    span: types.Range,
    diagnostics: list[str],
    title: str,
    instruction: str | None = None,
) -> AgentFix:
    """Runs the agent loop for the lines of ``span`` in ``uri`` with the configured check: a fix, or
    with ``instruction`` a refactor that must leave the check passing."""
    fix = AgentFix(id=uuid.uuid4().hex)
    settings = ls.settings.agent
    document = ls.open_document(uri)
    root = ls.workspace_root
    if document is None or root is None or not settings.check_command:
        fix.error = "the agent needs an open document, a workspace folder and codedraft.agent.checkCommand"
        return fix
    try:
        path = check_inside_workspace(uri, root)
    except EditOutsideWorkspace as error:
        fix.error = str(error)
        return fix
    first, last = span.start.line, span.end.line
    if span.end.character == 0 and last > first:
        last -= 1
    relative = path.relative_to(root.resolve()).as_posix()
    task = FixTask(
        workspace=root,
        target=Target(relative, first, last),
        check_command=settings.check_command,
        diagnostics=diagnostics,
        overlays={relative: doc.source for relative, doc in _open_documents(ls, root).items()},
        step_limit=settings.step_limit,
        time_limit_s=float(settings.time_limit_s),
        use_tools=await _model_takes_tools(ls),
        instruction=instruction,
    )
    progress = await begin_progress(ls, fix.id, title)

    def report(message: str) -> None:
        if progress:
            ls.work_done_progress.report(fix.id, types.WorkDoneProgressReport(message=message))
        ls.protocol.notify(
            STREAM_NOTIFICATION, {"id": fix.id, "delta": f"\n[codedraft] {message}\n", "done": False}
        )

    def delta(_request_id: str, text: str) -> None:
        ls.protocol.notify(STREAM_NOTIFICATION, {"id": fix.id, "delta": text, "done": False})

    generate = daemon_generate(ls.daemon.stream_generate, f"{uri}#agent", delta)
    sandbox = Sandbox("auto", Limits(wall_s=float(settings.time_limit_s)))
    try:
        fix.result = await run_fix(task, generate, sandbox, report)
    except (ConnectionError, TimeoutError, RequestRejected) as error:
        fix.error = f"the model could not answer: {error or 'timed out'}"
        return fix
    finally:
        ls.protocol.notify(STREAM_NOTIFICATION, {"id": fix.id, "delta": "", "done": True})
        if progress:
            ls.work_done_progress.end(fix.id, types.WorkDoneProgressEnd(message="done"))
    result = fix.result
    for warning in result.warnings:  # e.g. no sandbox at all: the user must hear it, not just the log
        ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=warning))
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
        versions = {relative: doc.version for relative, doc in _open_documents(ls, root).items()}
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


def _open_documents(ls: CodedraftServer, root: Path) -> dict[str, TextDocument]:
    """The editor's open documents inside the workspace, by relative path (their unsaved text wins)."""
    documents: dict[str, TextDocument] = {}
    for document in list(ls.workspace.text_documents.values()):
        with contextlib.suppress(EditOutsideWorkspace, ValueError):
            path = check_inside_workspace(document.uri, root)
            documents[path.relative_to(root.resolve()).as_posix()] = document
    return documents


async def _model_takes_tools(ls: CodedraftServer) -> bool:
    try:
        client = await ls.daemon.client()
        info = await client.model_info(timeout=5.0)
    except Exception:  # no model info: the fixed pipeline works with any model
        return False
    return bool(info.supports_tools)
