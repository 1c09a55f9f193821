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
    """A capture's positions, read off its nodes once (each node attribute is a call into the binding)."""

    name: str
    kind: str
    is_definition: bool
    start_byte: int
    end_byte: int
    row: int
    byte_column: int
    node_start_byte: int
    node_end_byte: int
    node_start_line: int
    node_end_line: int


class TagsExtractor:
    """Runs a language's tags query over a tree and returns ``Tag`` records with scopes.

    Invariant of the result: sorted by ``start_byte``; at most one tag per name position, a definition
    winning over a reference at the same spot.
    """

    def __init__(self, spec: LanguageSpec) -> None:
        import tree_sitter

        self.spec = spec
        self._cursor = tree_sitter.QueryCursor(spec.tags_query())
        # pattern index -> its role capture ("definition.function"), learnt from the first match.
        self._roles: dict[int, str] = {}

    def extract(self, tree: tree_sitter.Tree, lines: LineIndex) -> list[Tag]:
        """All tags of ``tree``, whose source bytes ``lines`` indexes."""
        raw = self._raw_tags(tree)
        return _with_scopes(raw, lines)

    def _role(self, pattern: int, captures: dict[str, list[tree_sitter.Node]]) -> str | None:
        role = self._roles.get(pattern)
        if role is not None and role in captures:
            return role
        role = next((key for key in captures if key.startswith(("definition.", "reference."))), None)
        if role is not None:
            self._roles[pattern] = role
        return role

    def _raw_tags(self, tree: tree_sitter.Tree) -> list[_RawTag]:
        found: dict[int, _RawTag] = {}
        for pattern, captures in self._cursor.matches(tree.root_node):
            role = self._role(pattern, captures)
            names = captures.get("name")
            if role is None or not names:
                continue
            is_definition = role.startswith("definition.")
            kind = role.partition(".")[2]
            node = _definition_extent(captures[role][0]) if is_definition else captures[role][0]
            node_extent: tuple[int, int, int, int] | None = None
            for name_node in names:
                text = (name_node.text or b"").decode("utf-8", "replace")
                if not text or "\n" in text:
                    continue
                start_byte = name_node.start_byte
                previous = found.get(start_byte)
                if previous is not None and (previous.is_definition or not is_definition):
                    continue
                if node_extent is None:
                    node_extent = (node.start_byte, node.end_byte, node.start_point[0], node.end_point[0])
                row, byte_column = name_node.start_point
                found[start_byte] = _RawTag(
                    text, kind, is_definition, start_byte, name_node.end_byte, row, byte_column, *node_extent
                )
        return [found[key] for key in sorted(found)]


def _with_scopes(raw: list[_RawTag], lines: LineIndex) -> list[Tag]:
    """Attaches the dotted scope of enclosing definitions, and marks functions inside classes as methods."""
    definitions = sorted(
        (tag for tag in raw if tag.is_definition), key=lambda t: (t.node_start_byte, -t.node_end_byte)
    )
    # Definitions open in turn; a stack of (end byte, qualified name, kind) holds those enclosing the
    # position being visited, innermost last.
    stack: list[tuple[int, str, str]] = []
    next_definition = 0
    scope_of: dict[int, tuple[str, str]] = {}
    column = lines.column

    def close_ended(position: int) -> None:
        while stack and stack[-1][0] <= position:
            stack.pop()

    result: list[Tag] = []
    for tag in raw:
        position = tag.start_byte
        while next_definition < len(definitions) and definitions[next_definition].node_start_byte <= position:
            opening = definitions[next_definition]
            close_ended(opening.node_start_byte)
            parent_name, parent_kind = (stack[-1][1], stack[-1][2]) if stack else ("", "")
            scope_of[id(opening)] = (parent_name, parent_kind)
            qualified = f"{parent_name}.{opening.name}" if parent_name else opening.name
            stack.append((opening.node_end_byte, qualified, _kind(opening.kind, parent_kind)))
            next_definition += 1
        close_ended(position)
        if tag.is_definition:
            scope, parent_kind = scope_of.get(id(tag), ("", ""))
            kind = _kind(tag.kind, parent_kind)
        else:
            # Every entry left on the stack ends after ``position``: innermost is the last.
            scope = stack[-1][1] if stack else ""
            kind = tag.kind
        result.append(
            Tag(
                tag.name,
                kind,
                tag.is_definition,
                position,
                tag.end_byte,
                tag.row,
                column(tag.row, tag.byte_column),
                tag.node_start_line,
                tag.node_end_line,
                scope,
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
