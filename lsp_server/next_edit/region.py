"""The editable region a next-edit model rewrites: 10 to 20 whole lines around the cursor, cut where
the syntax tree allows (whole statements and blocks), and the edits a rewrite of it makes.

Bounded like completions: a document too long to parse is cut by lines only, and a region is at most
``MAX_REGION_BYTES`` of UTF-8 (lines farthest from the cursor go first; a cursor line longer than
that alone has no region).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from indexer.positions import utf16_length
from lsp_server.completion.syntax import MAX_PARSE_CHARS, encode

if TYPE_CHECKING:
    import tree_sitter

MIN_LINES = 10
TARGET_LINES = 15
MAX_LINES = 20
MAX_REGION_BYTES = 4096

Position = tuple[int, int]  # (line, UTF-16 column), as LSP counts them
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


@dataclass(frozen=True)
class EditableRegion:
    """Lines ``start_line`` up to ``end_line`` (exclusive) of a document: ``text`` is them with
    their line ends, at character offsets ``start_offset``..``end_offset`` of the document."""

    start_line: int
    end_line: int
    text: str
    start_offset: int
    end_offset: int


@dataclass(frozen=True)
class RegionEdit:
    """Replace ``start``..``end`` (LSP positions in the document) with ``text``."""

    start: Position
    end: Position
    text: str


def editable_region(
    text: str,
    cursor_line: int,
    tree: tree_sitter.Tree | None = None,
    min_lines: int = MIN_LINES,
    max_lines: int = MAX_LINES,
    max_bytes: int = MAX_REGION_BYTES,
) -> EditableRegion | None:
    """The region around ``cursor_line`` of ``text``; ``tree`` (the document's syntax tree, when it
    has one) moves its edges to statement boundaries. None when the cursor's line alone is too long."""
    total = text.count("\n") + 1
    cursor = min(max(cursor_line, 0), total - 1)
    lo, hi = max(0, cursor - max_lines + 1), min(total, cursor + max_lines)
    starts = _line_starts(text, lo, hi)
    span = None
    if tree is not None and len(text) <= MAX_PARSE_CHARS:
        blank = [not text[starts[i] : starts[i + 1]].strip() for i in range(hi - lo)]
        span = _syntax_span(tree, blank, cursor, total, lo, hi, min_lines, max_lines)
    start, end = span or _line_span(cursor, total, min(max(min_lines, TARGET_LINES), max_lines))

    def size(first: int, last: int) -> int:
        return len(encode(text[starts[first - lo] : starts[last - lo]]))

    while size(start, end) > max_bytes:
        if end - start == 1:
            return None
        if cursor - start > end - 1 - cursor:
            start += 1
        else:
            end -= 1
    first, last = starts[start - lo], starts[end - lo]
    return EditableRegion(start, end, text[first:last], first, last)


def _line_starts(text: str, lo: int, hi: int) -> list[int]:
    """Character offsets where lines ``lo``..``hi`` start (``hi`` past the last line: len(text))."""
    offset = 0
    for _ in range(lo):
        offset = text.index("\n", offset) + 1
    starts = [offset]
    for _ in range(lo, hi):
        newline = text.find("\n", starts[-1])
        starts.append(len(text) if newline == -1 else newline + 1)
    return starts


def _line_span(cursor: int, total: int, lines: int) -> tuple[int, int]:
    """``lines`` lines with the cursor's line in their middle, moved inside the document."""
    start = max(0, cursor - (lines - 1) // 2)
    end = min(total, start + lines)
    return max(0, end - lines), end


def _syntax_span(
    tree: tree_sitter.Tree,
    blank: list[bool],
    cursor: int,
    total: int,
    lo: int,
    hi: int,
    min_lines: int,
    max_lines: int,
) -> tuple[int, int] | None:
    """The best clean span: every syntax node that crosses one of its edges holds the whole span
    (so the span is whole statements of the blocks around it). Best is nearest ``TARGET_LINES``
    with the cursor nearest the middle; None when no span is clean."""
    min_end, max_start = _crossings(tree, lo, hi)
    least = min(min_lines, total)
    # Blank lines at a span's end belong to no statement: the nodes crossing its start need only
    # reach its last non-blank line.
    last_code: list[int] = []
    for line in range(lo, hi):
        last_code.append(line if not blank[line - lo] else (last_code[-1] if last_code else line))
    best: tuple[float, int, int] | None = None
    for start in range(lo, cursor + 1):
        for end in range(cursor + 1, min(hi, start + max_lines) + 1):
            if end - start < least:
                continue
            if min_end.get(start, total) < max(start, last_code[end - 1 - lo]):
                continue
            if max_start.get(end, -1) > start:
                continue
            score = abs(end - start - TARGET_LINES) + abs((cursor - start) - (end - 1 - cursor)) / 2
            if best is None or score < best[0]:
                best = (score, start, end)
    return None if best is None else (best[1], best[2])


def _crossings(tree: tree_sitter.Tree, lo: int, hi: int) -> tuple[dict[int, int], dict[int, int]]:
    """For each line boundary ``b`` in lo..hi (between lines b-1 and b): the least last line and
    the greatest first line of the named nodes that cross it."""
    min_end: dict[int, int] = {}
    max_start: dict[int, int] = {}
    root = tree.root_node
    cursor = tree.walk()
    while True:
        node = cursor.node
        descend = node is not None and node.id == root.id  # the root holds every span
        if node is not None and not descend and node.end_point[0] >= lo and node.start_point[0] <= hi:
            first, last = node.start_point[0], node.end_point[0]
            if node.end_point[1] == 0 and last > first:
                last -= 1  # a node that ends with its line's newline does not reach the next line
            if node.is_named:
                for boundary in range(max(first + 1, lo), min(last, hi) + 1):
                    min_end[boundary] = min(min_end.get(boundary, last), last)
                    max_start[boundary] = max(max_start.get(boundary, first), first)
            descend = last > first
        if descend and cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return min_end, max_start


def region_edits(original: str, rewritten: str, first_line: int = 0) -> list[RegionEdit]:
    """The edits that turn ``original`` (a region starting at document line ``first_line``) into
    ``rewritten``: changed lines found line by line, then each cut to the characters that differ.
    Empty when the texts are equal."""
    old, new = _lines_with_ends(original), _lines_with_ends(rewritten)
    edits = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        # A block that keeps its line count is changed line by line: one edit per changed line.
        pairs = [(i1 + k, j1 + k, 1, 1) for k in range(i2 - i1)] if i2 - i1 == j2 - j1 else []
        for i, j, old_count, new_count in pairs or [(i1, j1, i2 - i1, j2 - j1)]:
            before, after = "".join(old[i : i + old_count]), "".join(new[j : j + new_count])
            if before == after:
                continue
            head = _common_prefix(before, after)
            tail = _common_suffix(before[head:], after[head:])
            start = _position(i, before[:head], first_line)
            end = _position(i, before[: len(before) - tail], first_line)
            edits.append(RegionEdit(start, end, after[head : len(after) - tail]))
    return edits


def _lines_with_ends(text: str) -> list[str]:
    """The lines of ``text`` with their ends (\\n, \\r\\n or \\r, as LSP counts lines)."""
    return _LINE.findall(text)


def _position(line: int, text_before: str, first_line: int) -> Position:
    """The position after ``text_before``, which starts at the beginning of region line ``line``."""
    inner = _lines_with_ends(text_before)
    breaks = len(inner) - (1 if inner and not inner[-1].endswith(("\n", "\r")) else 0)
    column_text = inner[-1] if inner and not inner[-1].endswith(("\n", "\r")) else ""
    return first_line + line + breaks, utf16_length(column_text)


def _common_prefix(a: str, b: str) -> int:
    size = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        size += 1
    return size


def _common_suffix(a: str, b: str) -> int:
    size = 0
    for x, y in zip(reversed(a), reversed(b), strict=False):
        if x != y:
            break
        size += 1
    return size
