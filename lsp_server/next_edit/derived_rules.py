"""Rules an edit makes other than by its pattern: deleting one whole node (a decorator line, a
trailing comment) deletes the same node where it stands the same way; a comment added after a line of
code adds it after the same code (``comment_edits.py``); making a function ``async`` puts ``await``
before its calls; a parameter added at the end of a function's positional ones passes the variable
of that name at its calls (``def should_skip(core, metacov)``: ``should_skip(core)`` ->
``should_skip(core, metacov)`` where ``metacov`` is bound; a method's calls on any receiver)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsp_server.next_edit.comment_edits import is_comment, line_shape
from lsp_server.next_edit.edit_pattern import Branch, Hole, Leaf, Template, telling_words
from lsp_server.next_edit.edit_rule import EditRule
from lsp_server.next_edit.node_roles import role_of
from lsp_server.next_edit.symbol_scope import definition_scope

if TYPE_CHECKING:
    import tree_sitter

CONTAINERS = frozenset(
    {"module", "program", "source_file", "block", "statement_block", "class_body", "declaration_list"}
)
"""Nodes that hold statements: never a rule's node."""
MAX_NODE_BYTES = 1_500
"""A rule's node may be at most this long: widening stops short of whole blocks and functions."""
_COMMENT_LEADS = (b"#", b"//")
"""How a comment after code begins (Python's, and the C family's)."""


def deletion_rule(old_tree: tree_sitter.Tree, before: bytes, start: int, end: int) -> EditRule | None:
    """The rule of an edit that deleted one whole node (and only spaces around it, or a comment after
    it on its line: ``__bool__ = __nonzero__  # py3``): the same node, by its text, deleted elsewhere
    in the same way (its line, or the spaces before it: then after a line of code of the same shape,
    ``comment_edits.py``)."""
    span = before[start:end]
    first = start + len(span) - len(span.lstrip())
    last = end - (len(span) - len(span.rstrip()))
    if last <= first:
        return None
    node = _node_spanning(old_tree, first, last)
    note = old_tree.root_node.descendant_for_byte_range(last - 1, last)
    if node is None and note is not None and is_comment(note) and first < note.start_byte < last:
        last = len(before[: note.start_byte].rstrip(b" \t"))  # a line's code with its note: the code
        node = _node_spanning(old_tree, first, last)
    if node is None or node.type in CONTAINERS or node.has_error or last - first > MAX_NODE_BYTES:
        return None
    how = deletion_shape(before, first, last)
    if how is None:
        return None
    trails = line_shape(old_tree, before, first) if how == "inline" else None
    return EditRule(Leaf(node.type, node.text or b""), (b"",), role=role_of(node), deletes=how, trails=trails)


def _node_spanning(tree: tree_sitter.Tree, first: int, last: int) -> tree_sitter.Node | None:
    """The named node whose bytes are ``first``..``last``, if one is."""
    node: tree_sitter.Node | None = tree.root_node.descendant_for_byte_range(first, last)
    while node is not None and not (node.is_named and node.start_byte == first and node.end_byte == last):
        if node.start_byte < first or node.end_byte > last:
            return None
        node = node.parent
    return node


def deletion_shape(source: bytes, start: int, end: int) -> str | None:
    """How bytes ``start``..``end`` stand on their line: "line" alone on it (but for a comment after
    them), "inline" after other code with nothing but spaces after them; None otherwise."""
    line_start = source.rfind(b"\n", 0, start) + 1
    line_end = source.find(b"\n", end)
    line_end = len(source) if line_end < 0 else line_end
    alone = not source[line_start:start].strip()
    rest = source[end:line_end].strip()
    if rest and not (alone and rest.startswith(_COMMENT_LEADS)):
        return None  # a comment after a line's only statement goes with the line
    return "line" if alone else "inline"


def deletion_span(source: bytes, start: int, end: int, how: str) -> tuple[int, int]:
    """What deleting the node at ``start``..``end`` removes: its whole line (with its end) or the
    spaces before it too."""
    if how == "line":
        line_start = source.rfind(b"\n", 0, start) + 1
        line_end = source.find(b"\n", end)
        return line_start, len(source) if line_end < 0 else line_end + 1
    return len(source[:start].rstrip(b" \t")), end


def trailing_comment_rule(
    new_tree: tree_sitter.Tree, after: bytes, start: int, end: int
) -> tuple[EditRule, int, int] | None:
    """The rule of an edit that added one comment (``after[start:end]``, spaces and the comment) at
    the end of a line whose code is one node (a statement, a decorator): the same comment after the
    same code, token for token; with the span of that code and its comment. None otherwise (a
    comment on a line of its own, after part of a statement, or two comments)."""
    written = after[start:end]
    first = start + len(written) - len(written.lstrip())
    comment = new_tree.root_node.descendant_for_byte_range(first, first + 1)
    if comment is None or not is_comment(comment) or comment.start_byte != first:
        return None
    if after[comment.end_byte : comment.end_byte + 1] not in (b"", b"\n") or comment.end_byte < end:
        return None  # not the line's end, or more than the comment written
    line_start = after.rfind(b"\n", 0, first) + 1
    code = after[line_start:first]
    code_start, code_end = line_start + len(code) - len(code.lstrip()), line_start + len(code.rstrip())
    if code_end <= code_start:
        return None
    node: tree_sitter.Node | None = new_tree.root_node.descendant_for_byte_range(code_end - 1, code_end)
    while node is not None and node.start_byte > code_start:
        node = node.parent
    if node is None or node.start_byte != code_start or not node.is_named or node.has_error:
        return None
    children = node.children
    if node.end_byte == comment.end_byte and children and children[-1] == comment:
        children = children[:-1]  # Python's decorator holds its line's comment
    elif node.end_byte != code_end:
        return None
    if not children or node.type in CONTAINERS or code_end - code_start > MAX_NODE_BYTES:
        return None
    pattern = Branch(node.type, tuple(_exact(child) for child in children))
    if not telling_words(pattern):
        return None  # ``pass``: nothing to tell the line by
    rule = EditRule(pattern, (after[code_start : comment.end_byte],), role=role_of(node), ends_line=True)
    return rule, code_start, comment.end_byte


def _exact(node: tree_sitter.Node) -> Leaf | Branch:
    """``node`` as a pattern with no hole: its leaves as they are."""
    if node.child_count == 0:
        return Leaf(node.type, node.text or b"")
    return Branch(node.type, tuple(_exact(child) for child in node.children))


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


_POSITIONAL = frozenset({"identifier", "typed_parameter"})


def calls_given_parameter(old: tree_sitter.Node, new: tree_sitter.Node) -> EditRule | None:
    """The rule for the calls of the function ``old`` defines, when ``new`` only adds a parameter
    after its positional ones (no default, no ``*``): each call passing as many arguments as it had
    parameters passes the variable of the new one's name too, where that name is bound (``reads``).
    A method's first parameter is its receiver's (not a ``@staticmethod``'s). None for any other
    edit."""
    name = old.child_by_field_name("name")
    olds, news = (_parameters(node) for node in (old, new))
    if name is None or olds is None or news is None or len(news) != len(olds) + 1:
        return None
    if any(a.text != b.text for a, b in zip(olds, news, strict=False)):
        return None
    added = news[-1] if news[-1].type == "identifier" else news[-1].named_children[0]
    if added.type != "identifier" or added.text is None or name.text is None:
        return None
    method = definition_scope(old) == "class"  # called on a receiver, which is its first parameter
    count = len(olds) - 1 if method and not _static(old) else len(olds)
    if count < 0:
        return None
    holes: list[Leaf | Hole] = []
    template: list[bytes | int] = [0, b"." + name.text + b"("] if method else [name.text + b"("]
    for index in range(count):
        number = index + 1 if method else index
        holes += [Leaf(",", b","), Hole(number)] if index else [Hole(number)]
        template += [b", ", number] if index else [number]
    template.append((b", " if count else b"") + added.text + b")")
    arguments = Branch("argument_list", (Leaf("(", b"("), *holes, Leaf(")", b")")))
    callee: Leaf | Branch = Leaf("identifier", name.text)
    if method:
        callee = Branch("attribute", (Hole(0), Leaf(".", b"."), callee))
    return EditRule(Branch("call", (callee, arguments)), tuple(template), reads=(added.text,))


def _static(function: tree_sitter.Node) -> bool:
    """Whether the definition ``function`` is decorated ``@staticmethod`` (no receiver parameter)."""
    parent = function.parent
    if parent is None or parent.type != "decorated_definition":
        return False
    return any(child.type == "decorator" and child.text == b"@staticmethod" for child in parent.children)


def _parameters(function: tree_sitter.Node) -> list[tree_sitter.Node] | None:
    """The parameters of a Python function's definition, when all are positional (a plain or typed
    name); None otherwise."""
    parameters = function.child_by_field_name("parameters")
    if function.type != "function_definition" or parameters is None:
        return None
    found = list(parameters.named_children)
    return found if all(node.type in _POSITIONAL for node in found) else None
