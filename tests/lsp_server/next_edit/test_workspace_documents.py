"""The documents next-edit predictions read: the editor's text of an open document, else the file's
on disk, and None for a file that is not UTF-8, too large or unreadable (the prediction skips it)."""

from __future__ import annotations

from pathlib import Path

from pygls.workspace import TextDocument

from lsp_server.workspace_documents import MAX_DISK_BYTES, WorkspaceDocuments


class _Editor:
    def __init__(self, root: Path, documents: list[TextDocument]) -> None:
        self.root = root
        self.documents = documents

    @property
    def workspace_root(self) -> Path | None:
        return self.root

    def open_documents(self) -> list[TextDocument]:
        return self.documents

    def relative_path(self, uri: str) -> str:
        return str(Path(uri.removeprefix("file://")).relative_to(self.root))


def test_open_text_wins_and_bad_files_on_disk_read_as_none(tmp_path: Path) -> None:
    (tmp_path / "open.py").write_text("on disk\n", encoding="utf-8")
    (tmp_path / "plain.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "latin1.py").write_bytes(b"name = '\xe9t\xe9'\n")
    (tmp_path / "huge.py").write_bytes(b"#" * (MAX_DISK_BYTES + 1))
    editor = _Editor(tmp_path, [TextDocument((tmp_path / "open.py").as_uri(), "unsaved\n")])
    documents = WorkspaceDocuments(editor)
    assert documents.text("open.py") == "unsaved\n"
    assert documents.text("plain.py") == "x = 1\n"
    assert documents.text("latin1.py") is None
    assert documents.text("huge.py") is None
    assert documents.text("missing.py") is None
    assert documents.uri("open.py") == (tmp_path / "open.py").as_uri()
    assert documents.open_texts() == {"open.py": "unsaved\n"}
