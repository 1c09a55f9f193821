from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from lsp_server.rewrite.proposal_check import EditOutsideWorkspace
from lsp_server.rewrite.workspace_edit import annotated_edit, check_inside_workspace


def test_files_inside_the_workspace_pass(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    target = tmp_path / "pkg" / "a.py"
    target.write_text("x = 1\n")
    assert check_inside_workspace(target.as_uri(), tmp_path) == target.resolve()


@pytest.mark.parametrize("make_uri", ["dotdot", "absolute", "symlink", "not-file", "no-root"])
def test_edits_outside_the_workspace_are_refused(tmp_path: Path, make_uri: str) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    outside = tmp_path / "secret.py"
    outside.write_text("token = 'x'\n")
    root: Path | None = workspace
    if make_uri == "dotdot":
        uri = f"file://{workspace}/../secret.py"
    elif make_uri == "absolute":
        uri = outside.as_uri()
    elif make_uri == "symlink":
        (workspace / "link.py").symlink_to(outside)
        uri = (workspace / "link.py").as_uri()
    elif make_uri == "not-file":
        uri = "untitled:Untitled-1"
    else:
        uri, root = (workspace / "a.py").as_uri(), None
    with pytest.raises(EditOutsideWorkspace):
        check_inside_workspace(uri, root)


def test_the_edit_needs_confirmation() -> None:
    span = types.Range(start=types.Position(line=1, character=0), end=types.Position(line=2, character=5))
    edit = annotated_edit("file:///w/a.py", 3, span, "new", "Refactor with codedraft…", "tidy")
    assert edit.change_annotations is not None
    annotation = edit.change_annotations["codedraft"]
    assert annotation.needs_confirmation is True
    (document_edit,) = edit.document_changes or []
    assert isinstance(document_edit, types.TextDocumentEdit)
    assert document_edit.text_document.version == 3
    (text_edit,) = document_edit.edits
    assert isinstance(text_edit, types.AnnotatedTextEdit)
    assert (text_edit.new_text, text_edit.range, text_edit.annotation_id) == ("new", span, "codedraft")
