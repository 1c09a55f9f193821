"""The edit a refactor or fix proposes: one text edit, annotated so the editor asks before applying."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types
from pygls.uris import to_fs_path

from lsp_server.rewrite.proposal_check import EditOutsideWorkspace

ANNOTATION_ID = "codedraft"


def check_inside_workspace(uri: str, root: Path | None) -> Path:
    """The file of ``uri``, resolved through symlinks; raises when it is not inside ``root``."""
    path_text = to_fs_path(uri) if uri.startswith("file:") else None
    if path_text is None:
        raise EditOutsideWorkspace(f"not a file in the workspace: {uri}")
    path = Path(path_text).resolve()
    if root is None or not path.is_relative_to(root.resolve()):
        raise EditOutsideWorkspace(f"refusing to edit {path}: it is outside the workspace {root}")
    return path


def annotated_edit(
    uri: str, version: int | None, span: types.Range, new_text: str, label: str, description: str
) -> types.WorkspaceEdit:
    """A workspace edit replacing ``span`` of ``uri`` with ``new_text`` that needs the user's
    confirmation (a change annotation with ``needsConfirmation``)."""
    edit = types.AnnotatedTextEdit(range=span, new_text=new_text, annotation_id=ANNOTATION_ID)
    return types.WorkspaceEdit(
        document_changes=[
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
                edits=[edit],
            )
        ],
        change_annotations={
            ANNOTATION_ID: types.ChangeAnnotation(
                label=label, needs_confirmation=True, description=description
            )
        },
    )
