"""Predictions from the index, with no model call: an edit that renamed an identifier proposes the
same rename at every other reference to that symbol (in the file first, then in the workspace); an
edit of a function's parameters points at the function's call sites.

Both look at one edit as the history holds it (the file's text before and after a burst of typing).
Identifiers are tree-sitter leaves, so text in strings and comments is never proposed, and the
occurrence the user edited is never proposed again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from indexer.positions import utf16_column, utf16_length
from lsp_server.completion.document_trees import DocumentTrees
from lsp_server.completion.syntax import MAX_PARSE_CHARS, encode, parse
from lsp_server.next_edit.diffs import changed_span
from lsp_server.next_edit.index_references import references_elsewhere
from lsp_server.next_edit.symbol_scope import (
    binding_scope,
    identifier_covering,
    is_function,
    is_member_name,
    same_symbol,
)

if TYPE_CHECKING:
    import tree_sitter

    from indexer.languages import LanguageSpec
    from indexer.store import IndexStore

Position = tuple[int, int]  # (line, UTF-16 column), as LSP counts them


@dataclass(frozen=True)
class ProposedEdit:
    """Replace ``start``..``end`` of ``path`` with ``text``."""

    path: str
    start: Position
    end: Position
    text: str


@dataclass(frozen=True)
class JumpTarget:
    """A place in ``path`` the user may want to go next (no text to propose there)."""

    path: str
    position: Position


@dataclass(frozen=True)
class Rename:
    """``old`` became ``new`` at byte ``start`` of both texts (the identifier's start)."""

    old: str
    new: str
    start: int


def detect_rename(
    old_tree: tree_sitter.Tree, new_tree: tree_sitter.Tree, before: bytes, after: bytes
) -> Rename | None:
    """The rename the edit ``before`` -> ``after`` made, when all it changed lies in one identifier."""
    start, old_end, new_end = changed_span(before, after)
    if start == old_end == new_end:
        return None
    old_node = identifier_covering(old_tree, start, old_end)
    new_node = identifier_covering(new_tree, start, new_end)
    if old_node is None or new_node is None or old_node.start_byte != new_node.start_byte:
        return None
    old, new = (old_node.text or b"").decode(), (new_node.text or b"").decode()
    return Rename(old, new, old_node.start_byte) if old and new and old != new else None


def propose_renames(
    spec: LanguageSpec,
    path: str,
    before: str,
    after: str,
    store: IndexStore | None = None,
    open_texts: Mapping[str, str] | None = None,
    trees: DocumentTrees | None = None,
) -> list[ProposedEdit]:
    """The same rename at the symbol's other occurrences: in ``path`` from the edited one onwards
    (then wrapping to the file's start), then, for a module-level name, the references the index
    knows in files that import it. Empty when the edit was no rename. ``trees``: the documents'
    trees, shared with the other predictions of the same edit (each text is then parsed once, the
    edited one incrementally from the other)."""
    if max(len(before), len(after)) > MAX_PARSE_CHARS:  # too long to parse on a keystroke, as for completions
        return []
    old_bytes, new_bytes = encode(before), encode(after)
    old_tree, new_tree = _tree(spec, path, old_bytes, trees), _tree(spec, path, new_bytes, trees)
    rename = detect_rename(old_tree, new_tree, old_bytes, new_bytes)
    if rename is None:
        return []
    edited = identifier_covering(old_tree, rename.start, rename.start + len(rename.old.encode()))
    if edited is None:
        return []
    shift = len(rename.new.encode()) - len(rename.old.encode())
    later: list[ProposedEdit] = []
    earlier: list[ProposedEdit] = []
    for node in same_symbol(edited, old_tree.root_node):
        if node == edited:
            continue
        # Positions in the edited text: occurrences after the edit moved by the rename's length.
        moved = node.start_byte + (shift if node.start_byte > rename.start else 0)
        line, column = _position(new_bytes, moved)
        edit = ProposedEdit(path, (line, column), (line, column + utf16_length(rename.old)), rename.new)
        (later if node.start_byte > rename.start else earlier).append(edit)
    proposals = later + earlier
    module_level = not is_member_name(edited) and binding_scope(edited) is None
    if store is not None and module_level:
        for name in references_elsewhere(store, path, rename.old, open_texts=open_texts):
            proposals.append(
                ProposedEdit(
                    name.path, (name.line, name.start_column), (name.line, name.end_column), rename.new
                )
            )
    return proposals


def call_sites_after_signature_change(
    spec: LanguageSpec,
    path: str,
    before: str,
    after: str,
    store: IndexStore | None = None,
    open_texts: Mapping[str, str] | None = None,
    trees: DocumentTrees | None = None,
) -> list[JumpTarget]:
    """When the edit changed only a function's parameter list: the calls of that function, in
    ``path`` (in order) then in other files through the index. Empty for any other edit. ``trees``
    as for ``propose_renames``."""
    if max(len(before), len(after)) > MAX_PARSE_CHARS:  # too long to parse on a keystroke, as for completions
        return []
    old_bytes, new_bytes = encode(before), encode(after)
    new_tree = _tree(spec, path, new_bytes, trees)
    start, _, new_end = changed_span(old_bytes, new_bytes)
    function = _function_with_parameters_around(new_tree, start, new_end)
    name_node = function.child_by_field_name("name") if function is not None else None
    if name_node is None or name_node.text is None:
        return []
    name = name_node.text
    targets = [
        JumpTarget(path, _position(new_bytes, node.start_byte)) for node in _calls_named(new_tree, name)
    ]
    if store is not None:
        for found in references_elsewhere(store, path, name.decode(), frozenset({"call"}), open_texts):
            targets.append(JumpTarget(found.path, (found.line, found.start_column)))
    return targets


def _tree(spec: LanguageSpec, path: str, source: bytes, trees: DocumentTrees | None) -> tree_sitter.Tree:
    return parse(spec, source) if trees is None else trees.tree(path, spec, source)


def _function_with_parameters_around(tree: tree_sitter.Tree, start: int, end: int) -> tree_sitter.Node | None:
    node = tree.root_node.descendant_for_byte_range(start, end)
    while node is not None:
        parent = node.parent
        if parent is not None and is_function(parent) and parent.child_by_field_name("parameters") == node:
            return parent
        node = parent
    return None


def _calls_named(tree: tree_sitter.Tree, name: bytes) -> list[tree_sitter.Node]:
    """The called names of calls to ``name`` (``name(...)`` or ``obj.name(...)``), in order."""
    found = []
    cursor = tree.walk()
    while True:
        node = cursor.node
        if node is not None and "call" in node.type:
            callee = node.child_by_field_name("function")
            if callee is not None and callee.child_count > 0:
                callee = callee.child_by_field_name("attribute") or callee.child_by_field_name("property")
            if callee is not None and callee.text == name:
                found.append(callee)
        if cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return found


def _position(data: bytes, offset: int) -> Position:
    line_start = data.rfind(b"\n", 0, offset) + 1
    return data.count(b"\n", 0, offset), utf16_column(data[line_start:offset])
