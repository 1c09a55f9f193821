"""Predicted edits waiting for the user: kept at their place while the user types elsewhere, checked
against the text before each is offered, and recognised when the editor applies one.

An edit is held as character offsets into its document's text as last seen (the editor's text for an
open document, the disk's for another file), with the text it replaces. Each change of an open
document moves the edits after it and drops those it touched; an edit whose document no longer
holds its old text at its place is never offered.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from indexer.positions import cursor_offset, utf16_length
from lsp_server.next_edit.diffs import changed_span

Position = tuple[int, int]  # (line, UTF-16 column), as LSP counts them


@dataclass(frozen=True)
class PendingEdit:
    """Replace ``old`` at characters ``start``..``end`` of ``path``'s text with ``new``.

    ``prediction`` groups the edits of one prediction (a rename's occurrences); ``id`` names this
    edit in the editor's accept and reject commands; ``source`` is "rename", "rule" (a repeat of
    the user's edit) or "model"."""

    id: str
    prediction: str
    path: str
    start: int
    end: int
    old: str
    new: str
    source: str

    def applied_to(self, text: str) -> str:
        """``text`` with this edit made."""
        return text[: self.start] + self.new + text[self.end :]


def offset_of(text: str, position: Position) -> int:
    """The character offset of an LSP position in ``text`` (clamped to the line's end)."""
    return cursor_offset(text, position[0], position[1])


def position_of(text: str, offset: int) -> Position:
    """The LSP position of character ``offset`` of ``text``."""
    line = text.count("\n", 0, offset)
    line_start = text.rfind("\n", 0, offset) + 1
    return line, utf16_length(text[line_start:offset])


class PendingEdits:
    """The predictions offered and not yet taken or dismissed, across a workspace's files."""

    def __init__(self) -> None:
        self._edits: list[PendingEdit] = []
        self._ids = itertools.count(1)

    def add(self, path_edits: Iterable[tuple[str, int, int, str, str]], source: str) -> list[PendingEdit]:
        """A new prediction from (path, start, end, old, new) edits, in the order to offer them; it
        replaces every prediction before it."""
        prediction = f"p{next(self._ids)}"
        edits = [
            PendingEdit(f"{prediction}.{n}", prediction, path, start, end, old, new, source)
            for n, (path, start, end, old, new) in enumerate(path_edits)
        ]
        self._edits = edits
        return edits

    def clear(self) -> None:
        self._edits = []

    def withdraw(self, source: str) -> None:
        """The edits from ``source`` go (their reason is gone: the user undid the edit they repeat)."""
        self._edits = [edit for edit in self._edits if edit.source != source]

    def __len__(self) -> int:
        return len(self._edits)

    def offered(self, text_of: Callable[[str], str | None]) -> list[PendingEdit]:
        """The edits still standing, in order: each one's document (``text_of(path)``, None when
        unreadable) still holds its old text at its place; the others are dropped."""
        standing = []
        texts: dict[str, str | None] = {}  # one read per document, however many edits it holds
        for edit in self._edits:
            if edit.path not in texts:
                texts[edit.path] = text_of(edit.path)
            text = texts[edit.path]
            if text is not None and text[edit.start : edit.end] == edit.old:
                standing.append(edit)
        self._edits = standing
        return list(standing)

    def find(self, edit_id: str) -> PendingEdit | None:
        return next((edit for edit in self._edits if edit.id == edit_id), None)

    def taken(self, edit_id: str) -> None:
        """The user applied this edit (its place is now the new text): it is no longer offered."""
        self._edits = [edit for edit in self._edits if edit.id != edit_id]

    def dismissed(self, edit_id: str) -> None:
        """The user dismissed this edit: its whole prediction goes."""
        edit = self.find(edit_id)
        if edit is not None:
            self._edits = [other for other in self._edits if other.prediction != edit.prediction]

    def changed(self, path: str, before: str, after: str) -> PendingEdit | None:
        """``path``'s text went from ``before`` to ``after``: edits after the change move with it,
        edits it touched go. Returns the pending edit the change applied, if it was one (it goes)."""
        mine = [edit for edit in self._edits if edit.path == path]
        if not mine:
            return None
        start, old_end, new_end = changed_span(before, after)
        applied = next(
            (
                edit
                for edit in mine
                if edit.start <= old_end and edit.end >= start and edit.applied_to(before) == after
            ),
            None,
        )
        delta = new_end - old_end
        kept = []
        for edit in self._edits:
            if edit.path != path:
                kept.append(edit)
            elif edit.end <= start and not (edit.end == start and applied is edit):
                kept.append(edit)
            elif edit.start >= old_end and edit is not applied:
                kept.append(replace(edit, start=edit.start + delta, end=edit.end + delta))
        self._edits = kept
        return applied
