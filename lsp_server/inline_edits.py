"""Next-edit predictions on the wire, as Copilot's language server speaks them, so the clients that
already speak it (sidekick.nvim, copilot-lsp, the codedraft extension) work unchanged:

* request ``textDocument/copilotInlineEdit`` ``{textDocument: {uri, version}, position, context}`` ->
  ``{edits: [{text, range, textDocument: {uri, version}, command}]}``, the first edit to show now (it
  may be in another document), the rest to follow it; no edits, and the reason in
  ``codedraft/status``, when the server stays quiet;
* notification ``textDocument/didShowInlineEdit`` ``{item: {command: {arguments: [id]}}}``;
* commands ``codedraft.acceptInlineEdit`` and ``codedraft.rejectInlineEdit`` with the edit's id, run
  by the client after applying or dismissing it.

For editors with neither, ``code_actions.py`` offers the same edits as "Apply predicted edit".
"""

from __future__ import annotations

import logging
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from lsp_server.completion.at_position import MAX_DOCUMENT_CHARS
from lsp_server.daemon_supervisor import RequestRejected
from lsp_server.next_edit.pending import PendingEdit, position_of
from lsp_server.server import CodedraftServer

log = logging.getLogger(__name__)

INLINE_EDIT = "textDocument/copilotInlineEdit"
DID_SHOW_INLINE_EDIT = "textDocument/didShowInlineEdit"
ACCEPT = "codedraft.acceptInlineEdit"
REJECT = "codedraft.rejectInlineEdit"
APPLY_TITLE = "Apply predicted edit"


async def predicted_edits(ls: CodedraftServer, uri: str, line: int, column: int) -> list[dict[str, Any]]:
    """The prediction at a cursor as Copilot's inline edits (empty, with the reason in the status,
    when the server stays quiet); a daemon that cannot answer means no edits, never an error."""
    document = ls.open_document(uri)
    if document is None:
        return []
    if len(document.source) > MAX_DOCUMENT_CHARS:  # bounded as completions are
        ls.status.update(suppressed=f"next edit: the document is larger than {MAX_DOCUMENT_CHARS} characters")
        return []
    lines = document.source.count("\n") + 1
    if line >= lines:
        raise JsonRpcInvalidParams(f"line {line} is past the end of {uri} ({lines} lines)")
    path = ls.relative_path(uri)
    try:
        answer = await ls.next_edits.predict(path, line, column)
    except (ConnectionError, TimeoutError, RequestRejected) as error:
        log.info("next edit at %s:%d: %s", path, line, error)
        ls.status.update(suppressed=f"next edit: {error or type(error).__name__}")
        return []
    if answer.figures is not None:
        ls.status.update(last_next_edit=answer.figures)
    if answer.quiet is not None:
        ls.status.update(suppressed=f"next edit: {answer.quiet}")
    documents: dict[str, tuple[str, str, int | None] | None] = {}  # path -> (text, uri, version)
    for edit in answer.edits:
        if edit.path not in documents:
            documents[edit.path] = _document(ls, edit.path)
    return [_wire(edit, found) for edit in answer.edits if (found := documents[edit.path]) is not None]


def workspace_edit(ls: CodedraftServer, edit: dict[str, Any]) -> types.WorkspaceEdit:
    """One inline edit as a WorkspaceEdit against the document version it was made for."""
    document = edit["textDocument"]
    return types.WorkspaceEdit(
        document_changes=[
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(
                    uri=document["uri"], version=document.get("version")
                ),
                edits=[types.TextEdit(range=_range(edit["range"]), new_text=edit["text"])],
            )
        ]
    )


def _document(ls: CodedraftServer, path: str) -> tuple[str, str, int | None] | None:
    """The text, URI and editor version (None: not open) of ``path``; None when unreadable."""
    text = ls.documents.text(path)
    if text is None:
        return None
    uri = ls.documents.uri(path)
    document = ls.open_document(uri)
    return text, uri, document.version if document is not None else None


def _wire(edit: PendingEdit, document: tuple[str, str, int | None]) -> dict[str, Any]:
    text, uri, version = document
    start, end = position_of(text, edit.start), position_of(text, edit.end)
    return {
        "text": edit.new,
        "range": {
            "start": {"line": start[0], "character": start[1]},
            "end": {"line": end[0], "character": end[1]},
        },
        "textDocument": {"uri": uri, "version": version},
        "command": {"title": "Accept next edit", "command": ACCEPT, "arguments": [edit.id]},
    }


def _range(wire: dict[str, Any]) -> types.Range:
    start, end = wire["start"], wire["end"]
    return types.Range(
        start=types.Position(line=start["line"], character=start["character"]),
        end=types.Position(line=end["line"], character=end["character"]),
    )


def field(value: Any, name: str) -> Any:
    """A field of params that pygls hands over as a named tuple (or a dict)."""
    if isinstance(value, dict):
        return value.get(name)
    return getattr(value, name, None)


def wire_cursor(params: Any) -> tuple[str, int, int]:
    document, position = field(params, "textDocument"), field(params, "position")
    uri, line, column = field(document, "uri"), field(position, "line"), field(position, "character")
    if not isinstance(uri, str) or not isinstance(line, int) or not isinstance(column, int):
        raise JsonRpcInvalidParams("copilotInlineEdit needs textDocument.uri and position {line, character}")
    if line < 0 or column < 0:
        raise JsonRpcInvalidParams(f"position out of range: line {line}, character {column}")
    return uri, line, column


def edit_id(arguments: Any) -> str | None:
    if isinstance(arguments, list | tuple) and arguments and isinstance(arguments[0], str):
        return arguments[0]
    return None
