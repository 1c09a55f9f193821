"""Text as an editor sends it over LSP: positions in UTF-16 code units, an edit typed as a few
incremental changes, and the server's edits applied back to the text."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from lsp_server.next_edit.diffs import changed_span as diff_span

Position = tuple[int, int]  # (line, UTF-16 column), as LSP counts them


@dataclass(frozen=True)
class Change:
    """Replace ``start``..``end`` of the text as it is when the change is sent with ``text``."""

    start: Position
    end: Position
    text: str


def position_at(text: str, offset: int) -> Position:
    """The LSP position of character ``offset`` of ``text`` (lines end at "\\n")."""
    line = text.count("\n", 0, offset)
    line_start = text.rfind("\n", 0, offset) + 1
    return line, len(text[line_start:offset].encode("utf-16-le")) // 2


def offset_at(text: str, position: Position) -> int:
    """The character offset of an LSP position in ``text``; past a line's end means its end."""
    line, column = position
    start = 0
    for _ in range(line):
        found = text.find("\n", start)
        if found < 0:
            return len(text)
        start = found + 1
    end = text.find("\n", start)
    end = len(text) if end < 0 else end
    units = 0
    for index in range(start, end):
        if units >= column:
            return index
        units += 2 if ord(text[index]) > 0xFFFF else 1
    return end


def changed_span(old: str, new: str) -> tuple[int, int, str]:
    """The smallest single replacement that turns ``old`` into ``new``: ``old[start:end]`` becomes
    the returned text (the span from the language server's own ``diffs.changed_span``)."""
    start, end, new_end = diff_span(old, new)
    return start, end, new[start:new_end]


def keystrokes(old: str, new: str, pieces: int = 3) -> list[Change]:
    """``old`` -> ``new`` as an editor sends a user's typing: the removed text deleted first, then
    the new text typed in at most ``pieces`` chunks. Each change applies to the text as the ones
    before it left it; [] when the texts are equal."""
    start, end, inserted = changed_span(old, new)
    changes = []
    if end > start:
        changes.append(Change(position_at(old, start), position_at(old, end), ""))
    text = old[:start] + old[end:]
    size = max(1, -(-len(inserted) // pieces))
    for at in range(0, len(inserted), size):
        chunk = inserted[at : at + size]
        where = position_at(text, start + at)
        changes.append(Change(where, where, chunk))
        text = text[: start + at] + chunk + text[start + at :]
    return changes


def apply_changes(text: str, changes: Iterable[Change]) -> str:
    """``text`` with ``changes`` applied one after the other (as :func:`keystrokes` lists them)."""
    for change in changes:
        text = text[: offset_at(text, change.start)] + change.text + text[offset_at(text, change.end) :]
    return text


def apply_edits(text: str, edits: Iterable[Change]) -> str:
    """``text`` with ``edits`` applied at once: every range refers to ``text`` itself (as the edits
    of one LSP answer do) and none overlap."""
    spans = sorted(((offset_at(text, e.start), offset_at(text, e.end), e.text) for e in edits), reverse=True)
    for start, end, inserted in spans:
        text = text[:start] + inserted + text[end:]
    return text
