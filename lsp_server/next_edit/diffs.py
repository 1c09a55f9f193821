"""One edit of one file as a next-edit model reads it: a unified diff, and the same change as
original / updated hunks (Sweep's format reads those instead of diff syntax)."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import AnyStr

_LINE_END = re.compile(r"\r\n|\r|\n")

CONTEXT_LINES = 3
"""Unchanged lines kept around each change, in the diff and in the hunks."""


@dataclass(frozen=True)
class Hunk:
    """One changed place: ``original`` and ``updated`` are whole lines (with their context lines),
    starting at the 0-based lines ``original_start`` and ``updated_start`` of each text."""

    original_start: int
    original: str
    updated_start: int
    updated: str


@dataclass(frozen=True)
class FileEdit:
    """A change of ``path`` from ``before`` to ``after`` (whole file texts).

    ``accepted`` marks an edit that applied a suggestion rather than the user's typing.
    ``at`` is when the edit last changed (seconds on the caller's clock).
    """

    path: str
    before: str
    after: str
    at: float
    accepted: bool = False

    @property
    def diff(self) -> str:
        """The unified diff, ``--- a/path`` / ``+++ b/path`` then its hunks; "" for no change."""
        return unified_diff(self.path, self.before, self.after)

    @property
    def hunks(self) -> list[Hunk]:
        """The changed places, first to last."""
        return hunks(self.before, self.after)


def _lines(text: str) -> list[str]:
    """The lines of ``text`` as LSP counts them (\\n, \\r\\n, \\r end a line), without their ends; a
    final line end opens no further line."""
    lines = _LINE_END.split(text)
    if lines[-1] == "":
        lines.pop()
    return lines


def unified_diff(path: str, before: str, after: str, context: int = CONTEXT_LINES) -> str:
    """``before`` -> ``after`` as a unified diff with ``context`` lines around each change, lines
    joined by "\\n"; "" when the texts are equal."""
    lines = list(
        difflib.unified_diff(_lines(before), _lines(after), f"a/{path}", f"b/{path}", n=context, lineterm="")
    )
    # Texts that differ only in line ends (or a final newline) have no hunk: nothing to show.
    return "\n".join(lines) + "\n" if lines else ""


def hunks(before: str, after: str, context: int = CONTEXT_LINES) -> list[Hunk]:
    """The hunks of ``before`` -> ``after`` as the unified diff groups them (same context)."""
    old, new = _lines(before), _lines(after)
    if old == new:
        return []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    result = []
    for group in matcher.get_grouped_opcodes(context):
        i1, j1 = group[0][1], group[0][3]
        i2, j2 = group[-1][2], group[-1][4]
        result.append(Hunk(i1, "\n".join(old[i1:i2]), j1, "\n".join(new[j1:j2])))
    return result


def changed_lines(before: str, after: str) -> tuple[int, int, int]:
    """Where two texts differ, in lines: (first changed line, end of the change in ``before``, end
    of the change in ``after``), ends exclusive; the common leading and trailing lines are left out."""
    old, new = before.split("\n"), after.split("\n")
    start = 0
    limit = min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    tail = 0
    while tail < limit - start and old[len(old) - 1 - tail] == new[len(new) - 1 - tail]:
        tail += 1
    return start, len(old) - tail, len(new) - tail


def changed_span(before: AnyStr, after: AnyStr) -> tuple[int, int, int]:
    """(start, end in ``before``, end in ``after``) of the characters (or bytes) that differ."""
    limit = min(len(before), len(after))
    start = 0
    step = 4096
    while start < limit:  # compare in slices: a per-character loop is slow on long texts
        size = min(step, limit - start)
        if before[start : start + size] != after[start : start + size]:
            while before[start] == after[start]:
                start += 1
            break
        start += size
    tail = 0
    room = limit - start
    while tail < room:  # from the end, in slices too
        size = min(step, room - tail)
        if (
            before[len(before) - tail - size : len(before) - tail]
            != after[len(after) - tail - size : len(after) - tail]
        ):
            while before[-1 - tail] == after[-1 - tail]:
                tail += 1
            break
        tail += size
    return start, len(before) - tail, len(after) - tail


MAX_SLIDE = 200
"""Bytes a deletion is slid left or right, at most, to find where it reads as whole lines."""


def deletion_slides(before: bytes, start: int, end: int) -> list[tuple[int, int]]:
    """The spans of ``before`` whose deletion leaves the same text as deleting ``start``..``end``:
    that span, then slid left, then right, a byte at a time while the byte leaving the span equals
    the one entering it. A line deleted before a line that begins alike (``sock.settimeout(1)``
    above ``sock.bind(…)``) differs from the text after it from ``settimeout``, not from the line's
    start: the slid span is the whole line (found in the anyio history)."""
    spans = [(start, end)]
    at, to = start, end
    while at > 0 and start - at < MAX_SLIDE and before[at - 1] == before[to - 1]:
        at, to = at - 1, to - 1
        spans.append((at, to))
    at, to = start, end
    while to < len(before) and to - end < MAX_SLIDE and before[at] == before[to]:
        at, to = at + 1, to + 1
        spans.append((at, to))
    return spans


def inserts_whole_tokens(after: bytes, start: int, old_end: int, new_end: int) -> bool:
    """Whether the edit replaced nothing and what it wrote joins no word it touches (``property`` ->
    ``cached_property`` replaces a name)."""
    if start != old_end or new_end == start:
        return False
    written = after[start:new_end]
    joins_before = start > 0 and _is_word_byte(after[start - 1]) and _is_word_byte(written[0])
    joins_after = new_end < len(after) and _is_word_byte(after[new_end]) and _is_word_byte(written[-1])
    return not joins_before and not joins_after


def _is_word_byte(byte: int) -> bool:
    return chr(byte).isalnum() or byte == ord("_")
