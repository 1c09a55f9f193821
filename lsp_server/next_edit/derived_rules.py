"""Rules an edit makes other than by its pattern: deleting one whole node (a decorator line, a
trailing comment) deletes the same node where it stands the same way; making a function ``async``
puts ``await`` before its calls."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsp_server.next_edit.comment_edits import line_shape
from lsp_server.next_edit.edit_pattern import Hole, Leaf, Template
from lsp_server.next_edit.edit_rule import EditRule
from lsp_server.next_edit.node_roles import role_of

if TYPE_CHECKING:
    import tree_sitter

CONTAINERS = frozenset(
    {"module", "program", "source_file", "block", "statement_block", "class_body", "declaration_list"}
)
"""Nodes that hold statements: never a rule's node."""
MAX_NODE_BYTES = 1_500
"""A rule's node may be at most this long: widening stops short of whole blocks and functions."""


def deletion_rule(old_tree: tree_sitter.Tree, before: bytes, start: int, end: int) -> EditRule | None:
    """The rule of an edit that deleted one whole node (and only spaces around it): the same node,
    by its text, deleted elsewhere in the same way (its line, or the spaces before it: then after a
    line of code of the same shape, ``comment_edits.py``)."""
    span = before[start:end]
    first = start + len(span) - len(span.lstrip())
    last = end - (len(span) - len(span.rstrip()))
    if last <= first:
        return None
    node: tree_sitter.Node | None = old_tree.root_node.descendant_for_byte_range(first, last)
    while node is not None and not (node.is_named and node.start_byte == first and node.end_byte == last):
        if node.start_byte < first or node.end_byte > last:
            return None
        node = node.parent
    if node is None or node.type in CONTAINERS or node.has_error or last - first > MAX_NODE_BYTES:
        return None
    how = deletion_shape(before, first, last)
    if how is None:
        return None
    trails = line_shape(old_tree, before, first) if how == "inline" else None
    return EditRule(Leaf(node.type, node.text or b""), (b"",), role=role_of(node), deletes=how, trails=trails)


def deletion_shape(source: bytes, start: int, end: int) -> str | None:
    """How bytes ``start``..``end`` stand on their line: "line" alone on it, "inline" after other
    code with nothing but spaces after them; None otherwise."""
    line_start = source.rfind(b"\n", 0, start) + 1
    line_end = source.find(b"\n", end)
    line_end = len(source) if line_end < 0 else line_end
    if source[end:line_end].strip():
        return None
    return "line" if not source[line_start:start].strip() else "inline"


def deletion_span(source: bytes, start: int, end: int, how: str) -> tuple[int, int]:
    """What deleting the node at ``start``..``end`` removes: its whole line (with its end) or the
    spaces before it too."""
    if how == "line":
        line_start = source.rfind(b"\n", 0, start) + 1
        line_end = source.find(b"\n", end)
        return line_start, len(source) if line_end < 0 else line_end + 1
    return len(source[:start].rstrip(b" \t")), end


def await_rule(old: tree_sitter.Node, new: tree_sitter.Node) -> EditRule | None:
    """``await`` before the calls of a function the edit just made ``async``."""
    name_old, name_new = old.child_by_field_name("name"), new.child_by_field_name("name")
    if "function" not in old.type or name_old is None or name_new is None or name_old.text != name_new.text:
        return None
    head_old = (old.text or b"")[: name_old.start_byte - old.start_byte]
    head_new = (new.text or b"")[: name_new.start_byte - new.start_byte]
    if b"async" in head_old.split() or b"async" not in head_new.split():
        return None
    call = "call" if old.type == "function_definition" else "call_expression"
    after: Template = (0, b".await") if old.type == "function_item" else (b"await ", 0)
    return EditRule(Hole(0, call), after, calls=name_new.text)
