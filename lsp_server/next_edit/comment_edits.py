"""What an edit of comments teaches. A comment added to code annotates that one place for a tool or
a reader (a coverage pragma, ``# type: ignore``, ``# noqa``, a note): where else it belongs, the
syntax does not tell, except after the same code, token for token, ending its line (a linter's ``#
noqa: RUF076`` after each ``@pytest.fixture(autouse=True)``, found in the tox history:
``derived_rules.trailing_comment_rule``); an edit that adds any other comment makes no rule. A
trailing comment deleted is deleted again only where it trails a line of code that begins as the
example's did (its first two tokens, ``LEAD``: ``raise NotImplementedError``, ``from jsonschema``; a
definition's keyword alone; the statement's, for a line that continues one): the same comment after
the same kind of statement was put there for the same reason (a linter's code on one module's
imports, a pragma on overloads) and goes for the same reason; after other code it may still be
needed. Two examples after lines of different shapes lift the condition (:func:`common_shape`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tree_sitter

LineShape = tuple[tuple[str, bytes | None], ...]
"""A line's code as its tokens' (type, text); a literal's text is None (any literal of that type)."""
_LITERALS = frozenset({"string", "concatenated_string", "integer", "float", "number", "true", "false"})
_STATEMENTS = ("_statement", "_definition")
"""Node types that are statements (Python's ``expression_statement``, ``function_definition``...)."""
LEAD = 2
"""Tokens a line's code must begin with alike, for a trailing comment deleted (the statement's
keyword and its first name: ``raise NotImplementedError``, not any ``raise``)."""
_DEFINES = frozenset({"def", "class", "async"})
"""Keywords that begin a definition."""
MAX_SHAPE_TOKENS = 200
"""Tokens of a line looked at, at most (a minified line is no shape to recognise)."""


def is_comment(node: tree_sitter.Node) -> bool:
    """A comment node in any grammar (``comment``, Rust's ``line_comment`` and ``block_comment``)."""
    return node.type == "comment" or node.type.endswith("_comment")


def adds_only_comments(new_tree: tree_sitter.Tree, after: bytes, start: int, end: int) -> bool:
    """Whether every non-blank byte of ``after[start:end]`` (what an edit wrote) lies in a comment."""
    written = [start + i for i, byte in enumerate(after[start:end]) if not chr(byte).isspace()]
    if not written:
        return False
    comments: list[tuple[int, int]] = []
    stack = [new_tree.root_node.descendant_for_byte_range(start, end)]
    while stack:
        node = stack.pop()
        if node is None or node.end_byte <= start or node.start_byte >= end:
            continue
        if is_comment(node):
            comments.append((node.start_byte, node.end_byte))
        else:
            stack.extend(node.children)
    return all(any(a <= at < b for a, b in comments) for at in written)


def line_shape(tree: tree_sitter.Tree, source: bytes, end: int) -> LineShape:
    """The tokens of the code on the line before byte ``end`` (where a trailing comment starts),
    literals as their type only; first the statement's first ``LEAD`` tokens, when the line continues
    a statement begun on an earlier line with no word of its own first (``) -> str: ...``)."""
    line_start = source.rfind(b"\n", 0, end) + 1
    found: list[tuple[int, str, bytes | None]] = []
    stack = [tree.root_node.descendant_for_byte_range(line_start, end)]
    while stack and len(found) < MAX_SHAPE_TOKENS:
        node = stack.pop()
        if node is None or node.end_byte <= line_start or node.start_byte >= end or is_comment(node):
            continue
        if node.start_byte >= line_start and node.is_named and node.type in _LITERALS:
            found.append((node.start_byte, node.type, None))
        elif node.child_count == 0:
            if node.start_byte >= line_start:
                found.append((node.start_byte, node.type, node.text or b""))
        else:
            stack.extend(node.children)
    tokens = tuple((kind, text) for _, kind, text in sorted(found, key=lambda token: token[0]))
    code = line_start + len(source[line_start:end]) - len(source[line_start:end].lstrip())
    if source[code : code + 1].isalnum() or source[code : code + 1] in (b"_", b"@", b"#"):
        return tokens  # the line begins with a word of its own
    return _statement_lead(tree, code) + tokens


def _statement_lead(tree: tree_sitter.Tree, code: int) -> LineShape:
    """The first ``LEAD`` tokens of the statement the line whose code starts at byte ``code``
    continues, when it begins on an earlier line (``) -> str: ...`` continues ``def to_jwk``); none
    for a line that begins one."""
    node = tree.root_node.descendant_for_byte_range(code, code)
    while node is not None and not (node.type.endswith(_STATEMENTS) and node.parent is not None):
        node = node.parent
    if node is None or node.start_byte >= code:
        return ()
    lead: list[tuple[str, bytes | None]] = []
    stack = [node]
    while stack and len(lead) < LEAD:
        at = stack.pop()
        if at.child_count == 0:
            lead.append((at.type, at.text))
        stack.extend(reversed(at.children))
    return tuple(lead)


def common_shape(first: LineShape | None, second: LineShape | None) -> LineShape | None:
    """What two examples' lines agree on: token by token, a differing text made any text; None (any
    line) when either has no shape or their tokens differ in number or in type."""
    if first is None or second is None or len(first) != len(second):
        return None
    common: list[tuple[str, bytes | None]] = []
    for (kind, text), (other_kind, other_text) in zip(first, second, strict=True):
        if kind != other_kind:
            return None
        common.append((kind, text if text == other_text else None))
    return tuple(common)


def fits_shape(shape: LineShape, line: LineShape) -> bool:
    """Whether a line begins as ``shape`` does: its first ``LEAD`` tokens of the same types, and of
    the same texts where ``shape`` takes no other (``raise NotImplementedError``, ``from
    jsonschema``); a definition's keyword alone (``def``: each function has a name of its own)."""
    count = 1 if shape[:1] and shape[0][0] in _DEFINES else LEAD  # a definition's name is its own
    lead, begins = shape[:count], line[:count]
    return len(lead) == len(begins) and all(
        kind == other_kind and (text is None or text == other_text)
        for (kind, text), (other_kind, other_text) in zip(lead, begins, strict=True)
    )
