"""The editor's side of a soak session: its copy of each open document, edits turned into LSP
changes (UTF-16 positions, as the protocol counts), and the files it writes on disk.

Every edit is applied here first and then sent, so this copy is what the server's must equal.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types

# What typing inserts: identifiers, code punctuation, indentation, new lines, and characters outside
# ASCII (two UTF-8 bytes, and one outside the BMP: two UTF-16 units) so positions are exercised.
TYPED = (
    "x",
    "total",
    "_",
    " ",
    "    ",
    "\n",
    "(",
    ")",
    ":",
    "=",
    "def f(",
    "return ",
    "é",
    "😀",
    "\n    ",
    "class Item:\n    pass\n",
)


def source_file(name: str, variant: int) -> str:
    """A small Python module with definitions the index records (different for each ``variant``)."""
    return (
        f'"""Module {name}, variant {variant}."""\n\n'
        f"LIMIT_{variant} = {variant}\n\n\n"
        f"def compute_{name}_{variant}(items):\n"
        f"    total = 0\n"
        f"    for item in items:\n"
        f"        total += item * {variant}\n"
        f"    return total\n\n\n"
        f"class Holder{variant}:\n"
        f"    def value(self):\n"
        f"        return compute_{name}_{variant}([LIMIT_{variant}])\n"
    )


def position(text: str, offset: int) -> types.Position:
    """The LSP position (line, UTF-16 column) of code point ``offset`` in ``text``."""
    line = text.count("\n", 0, offset)
    start = text.rfind("\n", 0, offset) + 1
    column = sum(2 if ord(char) > 0xFFFF else 1 for char in text[start:offset])
    return types.Position(line=line, character=column)


@dataclass
class OpenDocument:
    """The editor's copy of an open document."""

    path: Path
    text: str
    version: int = 1

    @property
    def uri(self) -> str:
        return self.path.as_uri()

    def replace(self, start: int, end: int, inserted: str) -> types.TextDocumentContentChangePartial:
        """Replaces code points ``start:end`` by ``inserted``; returns the change to send."""
        change = types.TextDocumentContentChangePartial(
            range=types.Range(start=position(self.text, start), end=position(self.text, end)),
            text=inserted,
        )
        self.text = self.text[:start] + inserted + self.text[end:]
        return change

    def reload(self, text: str) -> types.TextDocumentContentChangeWholeDocument:
        """The whole text replaced (an editor reloading a file changed on disk)."""
        self.text = text
        return types.TextDocumentContentChangeWholeDocument(text=text)

    def changed(
        self, changes: list[types.TextDocumentContentChangeEvent]
    ) -> types.DidChangeTextDocumentParams:
        """The next version's didChange params carrying ``changes``."""
        self.version += 1
        return types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=self.uri, version=self.version),
            content_changes=changes,
        )


def watched(changes: list[tuple[Path, types.FileChangeType]]) -> types.DidChangeWatchedFilesParams:
    """``workspace/didChangeWatchedFiles`` params for files created, changed or deleted on disk."""
    return types.DidChangeWatchedFilesParams(
        changes=[types.FileEvent(uri=path.as_uri(), type=kind) for path, kind in changes]
    )
