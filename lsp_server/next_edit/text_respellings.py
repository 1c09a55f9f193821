"""Text respelled inside a string or a comment, repeated where the same text stands in others: the
user changes ``Can't connect`` to ``Cannot connect`` in one message, ``%(schema)s`` to
``{self.schema}`` in one SQL string, ``# noqa: SLF001`` to ``# ruff:ignore[...]`` after one line;
the same run of text in the file's other strings (or comments) is respelled alike. No syntax node
tells those places (each message is its own literal): the run of text does, as a word does for a
rename.

The respelled text is the changed bytes widened to a run (up to spaces, quotes and brackets, which
end a run; ``.``, ``:``, ``-`` and ``/`` do not), so ``1.18.4`` is no site inside ``go1.18.4``. Only
where it is telling: at least ``MIN_RUN`` bytes with a letter, not one plain word (``response`` ->
``request`` in one sentence of a docstring is prose, edited for that sentence), changed inside one
comment or inside one string's text that holds more than the run (a whole literal replaced is a
value, ``edit_rules.py``'s matter), replaced (not deleted, nor punctuation or words inserted beside
it: ``header`` -> ``header.``), on one line. Its sites are the same run in a node of the same type
(a string's text holding more than the run), between the same bytes (a space for any space or the
text's end: ``[None]`` in ``glom([None], spec)`` is not the one in ``target: [None]``); at most
``MAX_CANDIDATES`` occurrences are looked at (a byte search).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lsp_server.next_edit.comment_edits import is_comment

if TYPE_CHECKING:
    import tree_sitter

MIN_RUN = 4
"""Bytes of the respelled run, at least (``1.5`` or ``ok`` tells no place)."""
MAX_RUN = 200
"""Bytes of the respelled run, at most (a paragraph rewritten is no respelling)."""
MAX_CANDIDATES = 2_000
"""Occurrences of the run looked at per file."""
_ENDS = frozenset(b" \t\r\n\"'`()[]{}<>,;")
"""Bytes that end a run of text (a space, a quote, a bracket, a separator)."""
_SPACE = ord(" ")
_LAYOUT = re.compile(rb"\\[nrt]|\s")
"""A space, or a line break or tab written as an escape (``\n``)."""
_STRINGS = frozenset({"string_content", "string_fragment"})
"""The text of a string literal (Python's, JavaScript's), without its quotes and interpolations."""


@dataclass(frozen=True)
class Respelling:
    """Inside nodes of type ``kind``, the run ``old`` between the bytes ``bounds`` (a space for any
    space or the text's end) becomes ``new``; the example's run is bytes ``start``..``end`` of the
    edited text (of the latest example's, for two that agree)."""

    kind: str
    old: bytes
    new: bytes
    bounds: tuple[int, int]
    start: int = field(compare=False)
    end: int = field(compare=False)


def respelling(
    old_tree: tree_sitter.Tree,
    new_tree: tree_sitter.Tree,
    before: bytes,
    after: bytes,
    span: tuple[int, int, int],
) -> Respelling | None:
    """The respelling the edit ``before`` -> ``after`` (changed bytes ``span``: start, old end, new
    end) makes, or None (see the module's docstring)."""
    start, old_end, new_end = span
    old_node = _text_node(old_tree, start, old_end)
    new_node = _text_node(new_tree, start, new_end)
    if old_node is None or new_node is None or old_node.type != new_node.type or new_end == start:
        return None  # a deletion (``be either`` -> ``either``) respells nothing
    written = after[start:new_end]
    if start == old_end and (any(byte in _ENDS for byte in written) or not re.search(rb"\w", written)):
        return None  # words or punctuation inserted beside a run (``header`` -> ``header.``)
    at, end = _run_around(before, start, old_end, old_node)
    new_end_run = end + (new_end - old_end)
    old, new = before[at:end], after[at:new_end_run]
    if not (MIN_RUN <= len(old) <= MAX_RUN) or not re.search(rb"[A-Za-z]", old) or not new.strip():
        return None
    if new == old or b"\n" in old + new or _is_value(old_node, old) or old.isalpha():
        return None  # written over lines, a whole literal replaced (a value), one plain word (prose)
    if _LAYOUT.sub(b"", old) == _LAYOUT.sub(b"", new):
        return None  # the same text laid out otherwise (``tests. `` -> ``tests.\n``)
    bounds = _bounds(before, at, end, old_node)
    return Respelling(old_node.type, old, new, bounds, at, new_end_run)


def _is_value(node: tree_sitter.Node, run: bytes) -> bool:
    """Whether ``run`` is the whole text of the string ``node``: a value (a comment is no value)."""
    return not is_comment(node) and (node.text or b"").strip() == run


def respelled_spans(respelled: Respelling, tree: tree_sitter.Tree, source: bytes) -> list[tuple[int, int]]:
    """Where the run stands in ``source`` (parsed as ``tree``) as a run, inside a node of its kind."""
    found: list[tuple[int, int]] = []
    old = respelled.old
    at, looked = source.find(old), 0
    while at >= 0 and looked < MAX_CANDIDATES:
        looked += 1
        end = at + len(old)
        node = _text_node(tree, at, end) if _bounded(source, at, end) else None
        if node is not None and node.type == respelled.kind and not _is_value(node, old):
            if _bounds(source, at, end, node) == respelled.bounds:
                found.append((at, end))
        at = source.find(old, at + 1)
    return found


def _bounded(source: bytes, start: int, end: int) -> bool:
    """Whether bytes ``start``..``end`` are a whole run: a run's end or the text's on each side."""
    return (start == 0 or source[start - 1] in _ENDS) and (end >= len(source) or source[end] in _ENDS)


def _bounds(source: bytes, start: int, end: int, node: tree_sitter.Node) -> tuple[int, int]:
    """The bytes around the run ``start``..``end`` of ``node``'s text, a space for a space or the
    text's end: a run among words is not the same run in brackets (``[None]`` in ``glom([None],
    spec)`` is not the one in ``target: [None]``)."""
    left = source[start - 1] if start > node.start_byte else _SPACE
    right = source[end] if end < node.end_byte else _SPACE
    return (_SPACE if chr(left).isspace() else left), (_SPACE if chr(right).isspace() else right)


def _run_around(source: bytes, start: int, end: int, node: tree_sitter.Node) -> tuple[int, int]:
    """``start``..``end`` widened to the run of text around it, inside ``node``, by at most
    ``MAX_RUN`` bytes each way (a longer run is no respelling: the caller finds it too long)."""
    low, high = max(node.start_byte, start - MAX_RUN), min(node.end_byte, end + MAX_RUN)
    while start > low and source[start - 1] not in _ENDS:
        start -= 1
    while end < high and source[end] not in _ENDS:
        end += 1
    return start, end


def _text_node(tree: tree_sitter.Tree, start: int, end: int) -> tree_sitter.Node | None:
    """The string's text or the comment that holds bytes ``start``..``end`` whole, if one does."""
    node: tree_sitter.Node | None = tree.root_node.descendant_for_byte_range(start, max(start, end))
    while node is not None and not (node.type in _STRINGS or is_comment(node)):
        node = node.parent
    if node is None or not (node.start_byte <= start and end <= node.end_byte):
        return None
    return node
