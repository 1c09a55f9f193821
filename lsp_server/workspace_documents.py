"""The workspace's documents by workspace-relative path, as the editor has them: an open document's
text (unsaved edits included), else the file on disk. Next-edit predictions read other files through
it (a rename's references elsewhere) and turn paths back into the editor's URIs."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from pygls.workspace import TextDocument

from indexer.languages import language_name_for_path

MAX_DISK_BYTES = 2_000_000
"""A file on disk larger than this is not read for a prediction (as the history bounds documents)."""


class Editor(Protocol):
    """What the language server knows of the editor's documents."""

    @property
    def workspace_root(self) -> Path | None:
        """The workspace folder; None without one."""

    def open_documents(self) -> list[TextDocument]:
        """Every document open in the editor."""

    def relative_path(self, uri: str) -> str:
        """A document's path relative to the workspace (its absolute path when outside it)."""


class WorkspaceDocuments:
    """Open documents and files on disk, by the paths the index and the edit history use."""

    def __init__(self, server: Editor) -> None:
        self.server = server

    def _open(self, path: str) -> TextDocument | None:
        for document in self.server.open_documents():
            if self.server.relative_path(document.uri) == path:
                return document
        return None

    def text(self, path: str) -> str | None:
        """The editor's text of ``path`` when open, else the file's (None: unreadable, not UTF-8 or
        too large)."""
        document = self._open(path)
        if document is not None:
            return document.source
        file = self.file(path)
        try:
            if file.stat().st_size > MAX_DISK_BYTES:
                return None
            return file.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    def language(self, path: str) -> str | None:
        """The open document's language id, else the language its extension names."""
        document = self._open(path)
        if document is not None and document.language_id:
            return document.language_id
        return language_name_for_path(path)

    def open_texts(self) -> dict[str, str]:
        return {self.server.relative_path(d.uri): d.source for d in self.server.open_documents()}

    def file(self, path: str) -> Path:
        """The file of ``path`` (relative to the workspace, or absolute outside it)."""
        root = self.server.workspace_root
        return Path(path) if root is None or Path(path).is_absolute() else root / path

    def uri(self, path: str) -> str:
        """The editor's URI of ``path`` (an open document's own, else the file's)."""
        document = self._open(path)
        return document.uri if document is not None else self.file(path).as_uri()
