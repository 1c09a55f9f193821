"""Definitions and references of one parsed file, from the language's tags query.

A tags query marks the name with ``@name`` and the whole definition or reference with
``@definition.KIND`` or ``@reference.KIND`` (the convention of the grammars' own ``tags.scm``). Other
captures (``@doc``, ``@local.scope``) are ignored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from indexer.positions import LineIndex
from indexer.records import Tag

if TYPE_CHECKING:
    import tree_sitter

    from indexer.languages import LanguageSpec

# A function whose innermost enclosing definition is one of these is a method.
_CLASS_KINDS = frozenset({"class", "interface", "struct", "impl", "trait", "module"})


@dataclass(slots=True)
class _RawTag:
    name: str
    kind: str
    is_definition: bool
    name_node: tree_sitter.Node
    node: tree_sitter.Node


class TagsExtractor:
    """Runs a language's tags query over a tree and returns ``Tag`` records with scopes.

    Invariant of the result: sorted by ``start_byte``; at most one tag per name position, a definition
    winning over a reference at the same spot.
    """

    def __init__(self, spec: LanguageSpec) -> None:
        import tree_sitter

        self.spec = spec
        self._cursor = tree_sitter.QueryCursor(spec.tags_query())

    def extract(self, tree: tree_sitter.Tree, lines: LineIndex) -> list[Tag]:
        """All tags of ``tree``, whose source bytes ``lines`` indexes."""
        raw = self._raw_tags(tree)
        return _with_scopes(raw, lines)

    def _raw_tags(self, tree: tree_sitter.Tree) -> list[_RawTag]:
        found: dict[int, _RawTag] = {}
        for _, captures in self._cursor.matches(tree.root_node):
            role = next((key for key in captures if key.startswith(("definition.", "reference."))), None)
            names = captures.get("name")
            if role is None or not names:
                continue
            is_definition = role.startswith("definition.")
            kind = role.partition(".")[2]
            node = _definition_extent(captures[role][0]) if is_definition else captures[role][0]
            for name_node in names:
                text = (name_node.text or b"").decode("utf-8", "replace")
                if not text or "\n" in text:
                    continue
                previous = found.get(name_node.start_byte)
                if previous is not None and (previous.is_definition or not is_definition):
                    continue
                found[name_node.start_byte] = _RawTag(text, kind, is_definition, name_node, node)
        return [found[key] for key in sorted(found)]


def _with_scopes(raw: list[_RawTag], lines: LineIndex) -> list[Tag]:
    """Attaches the dotted scope of enclosing definitions, and marks functions inside classes as methods."""
    definitions = sorted(
        (tag for tag in raw if tag.is_definition), key=lambda t: (t.node.start_byte, -t.node.end_byte)
    )
    # Definitions open in turn; a stack of (end byte, qualified name, kind) holds those enclosing the
    # position being visited, innermost last.
    stack: list[tuple[int, str, str]] = []
    next_definition = 0
    scope_of: dict[int, tuple[str, str]] = {}

    def close_ended(position: int) -> None:
        while stack and stack[-1][0] <= position:
            stack.pop()

    result: list[Tag] = []
    for tag in raw:
        position = tag.name_node.start_byte
        while next_definition < len(definitions) and definitions[next_definition].node.start_byte <= position:
            opening = definitions[next_definition]
            close_ended(opening.node.start_byte)
            parent_name, parent_kind = (stack[-1][1], stack[-1][2]) if stack else ("", "")
            scope_of[id(opening)] = (parent_name, parent_kind)
            qualified = f"{parent_name}.{opening.name}" if parent_name else opening.name
            stack.append((opening.node.end_byte, qualified, _kind(opening.kind, parent_kind)))
            next_definition += 1
        close_ended(position)
        if tag.is_definition:
            scope, parent_kind = scope_of.get(id(tag), ("", ""))
            kind = _kind(tag.kind, parent_kind)
        else:
            scope = next((name for end, name, _ in reversed(stack) if end > position), "")
            kind = tag.kind
        row, byte_column = tag.name_node.start_point
        result.append(
            Tag(
                name=tag.name,
                kind=kind,
                is_definition=tag.is_definition,
                start_byte=tag.name_node.start_byte,
                end_byte=tag.name_node.end_byte,
                line=row,
                column=lines.column(row, byte_column),
                node_start_line=tag.node.start_point[0],
                node_end_line=tag.node.end_point[0],
                scope=scope,
            )
        )
    return result


def _definition_extent(node: tree_sitter.Node) -> tree_sitter.Node:
    """The whole definition: C's tags capture the declarator, Python's miss the decorators."""
    parent = node.parent
    while node.type.endswith("declarator") and parent is not None and parent.type.endswith("declarator"):
        node, parent = parent, parent.parent
    if parent is not None and (
        parent.type == "decorated_definition"
        or (node.type.endswith("declarator") and parent.type == "function_definition")
    ):
        return parent
    return node


def _kind(kind: str, parent_kind: str) -> str:
    return "method" if kind == "function" and parent_kind in _CLASS_KINDS else kind
