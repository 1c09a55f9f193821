"""Rewrite rules learned from one edit, or from two that agree: what the user's edit replaced, as a
syntax pattern with holes (``edit_pattern.py``), and what it became.

From an edit as the history holds it (a file before and after a burst of typing), the rule's node is
the smallest node of the old tree that holds the change and has a counterpart in the new tree (the
same start, the same end moved by the edit's length), widened to its parent while it has nothing
fixed to recognise it by (an argument list, a lone identifier). Its sub-trees that the new text
keeps, other than names (a callee, an attribute, a keyword), become holes: ``fetch(url)`` ->
``fetch(url, timeout=timeout)`` gives ``fetch(□)`` -> ``fetch(□, timeout=timeout)``. A node that sat
in a call's arguments remembers the call's name, so a keyword renamed for one function is not renamed
for another. Making a function ``async`` gives ``await`` before its calls.

No rule comes from an edit that leaves or finds an error in its node (the user is mid-typing), that
writes a name found nowhere else in the file but as the start of a longer one (a half-typed
identifier), or that spans more than ``MAX_EDIT_BYTES``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from lsp_server.next_edit.diffs import changed_span
from lsp_server.next_edit.edit_pattern import (
    Branch,
    Hole,
    Leaf,
    Pattern,
    Template,
    fixed_words,
    generalize,
    holes_of,
    token_starts,
)

if TYPE_CHECKING:
    import tree_sitter

MAX_EDIT_BYTES = 2_000
"""An edit longer than this (either side) is no example of a repeated change: no rule."""
MAX_NODE_BYTES = 1_500
"""The rule's node may be at most this long: widening stops short of whole blocks and functions."""
MAX_WIDENING = 4
MAX_WORD_LOOKUPS = 5_000
"""Occurrences of a written name looked at to tell whether it is half-typed."""
_CONTAINERS = frozenset(
    {"module", "program", "source_file", "block", "statement_block", "class_body", "declaration_list"}
)
_ARGUMENT_LISTS = frozenset({"argument_list", "arguments"})
_LIST_SUFFIXES = ("_list", "arguments", "parameters", "_body", "block")
# Fields whose leaf is a name the rule keeps fixed (the callee, a member, a keyword), not a hole.
_NAME_FIELDS = frozenset({"function", "attribute", "property", "field", "name", "type"})
_CALLS = frozenset({"call", "call_expression"})
_AWAITED = frozenset({"await", "await_expression"})


@dataclass(frozen=True)
class EditRule:
    """Replace a node matching ``before`` by ``after`` rendered with its holes.

    ``callee``: the sites must lie in the arguments of a call of that name, as the example did.
    ``calls``: the site is itself a call of that name (``await`` rules, whose pattern is one hole).
    ``role``: the example node's field in its parent, when it was the called function or the receiver
    (a site elsewhere is another shape: ``obj.size`` in ``obj.size()`` is no attribute read).
    ``reshapes``: the example's node became another kind of node (``print x`` -> ``print(x)``).
    ``deletes``: the rule deletes its node: "line" with the line it stands alone on (a decorator),
    "inline" with the spaces before it (a trailing comment); ``after`` is then empty.
    ``examples``: edits that agree on this rule (two raise confidence)."""

    before: Pattern
    after: Template
    callee: bytes | None = None
    calls: bytes | None = None
    role: str | None = None
    reshapes: bool = False
    deletes: str | None = None
    examples: int = 1

    @property
    def key(self) -> tuple[object, ...]:
        """What makes two rules the same rule (for a dismissal to stop it)."""
        return (self.before, self.after, self.callee, self.calls, self.role, self.deletes)

    def anchors(self) -> list[bytes]:
        """Fixed words a site must contain, most telling (longest) first."""
        words = fixed_words(self.before) + ([self.calls] if self.calls else [])
        return sorted(set(words), key=len, reverse=True)


@dataclass(frozen=True)
class Learned:
    """A rule and where its example now lies in the edited text (bytes ``start``..``end``)."""

    rule: EditRule
    start: int
    end: int


def learn(
    old_tree: tree_sitter.Tree, new_tree: tree_sitter.Tree, before: bytes, after: bytes
) -> Learned | None:
    """The rule the edit ``before`` -> ``after`` makes (see the module's docstring), or None."""
    start, old_end, new_end = changed_span(before, after)
    if start == old_end == new_end or max(old_end, new_end) - start > MAX_EDIT_BYTES:
        return None
    if not after[start:new_end].strip():
        deleted = _deletion(old_tree, before, start, old_end)
        if deleted is not None:
            return Learned(deleted, start, start)
    pair = _aligned(old_tree, new_tree, start, old_end, new_end - old_end)
    pair_changed = pair[0] if pair is not None else None  # what the edit replaced: never a hole
    for _ in range(MAX_WIDENING + 1):
        if pair is None:
            return None
        old, new = pair
        if old.type in _CONTAINERS or old.end_byte - old.start_byte > MAX_NODE_BYTES:
            return None
        if old.has_error or new.has_error or old.type == "ERROR":
            return None  # mid-typing, or the change is inside broken code
        awaited = _await_rule(old, new)
        if awaited is not None:
            return Learned(awaited, new.start_byte, new.end_byte)
        rule = _rule_of(old, new, pair_changed)
        if rule is not None:
            if _half_typed(rule, after, new):
                return None
            return Learned(rule, new.start_byte, new.end_byte)
        parent = old.parent
        counterpart = None if parent is None else _node_spanning(new_tree, parent, new_end - old_end)
        pair = None if parent is None or counterpart is None else (parent, counterpart)
    return None


def agree(first: EditRule, second: EditRule) -> EditRule | None:
    """The rule two examples agree on (their patterns anti-unified, their replacements the same once
    what differs between the examples is a hole in both), counting both examples; None when their
    replacements differ beyond that. A name the two examples differ in (``def test_a():`` and ``def
    test_b():`` both given ``-> None``) becomes a hole, in the replacement too."""
    if (first.callee, first.calls, first.role) != (second.callee, second.calls, second.role):
        return None
    pairs: dict[tuple[Pattern, Pattern], int] = {}
    pattern = generalize(first.before, second.before, pairs)
    holes: tuple[dict[int, int], dict[int, int]] = ({}, {})
    words: tuple[dict[bytes, int], dict[bytes, int]] = ({}, {})
    for (a, b), number in pairs.items():
        for side, part in enumerate((a, b)):
            if isinstance(part, Hole) and holes[side].setdefault(part.number, number) != number:
                return None
            if isinstance(part, Leaf) and _is_name_text(part.text):
                words[side][part.text] = number
    one = _renumbered(first.after, holes[0], words[0])
    two = _renumbered(second.after, holes[1], words[1])
    if one is None or one != two or (not fixed_words(pattern) and first.calls is None):
        return None
    return replace(first, before=pattern, after=one, examples=first.examples + second.examples)


def _is_name_text(text: bytes) -> bool:
    return re.fullmatch(rb"[A-Za-z_]\w*", text) is not None


def _renumbered(template: Template, holes: dict[int, int], words: dict[bytes, int]) -> Template | None:
    """``template`` with its holes renumbered and each of ``words`` (whole tokens) made a hole; None
    when a hole has no number."""
    parts: list[bytes | int] = []
    splitter = (
        re.compile(rb"(?<!\w)(" + b"|".join(re.escape(w) for w in words) + rb")(?!\w)") if words else None
    )
    for part in template:
        if isinstance(part, int):
            if part not in holes:
                return None
            parts.append(holes[part])
            continue
        pieces = splitter.split(part) if splitter is not None else [part]
        for index, piece in enumerate(pieces):
            if index % 2:
                parts.append(words[piece])
            elif piece:
                parts.append(piece)
    return tuple(parts)


def _deletion(old_tree: tree_sitter.Tree, before: bytes, start: int, end: int) -> EditRule | None:
    """The rule of an edit that deleted one whole node (and only spaces around it): the same node,
    by its text, deleted elsewhere in the same way (its line, or the spaces before it)."""
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
    if node is None or node.type in _CONTAINERS or node.has_error or last - first > MAX_NODE_BYTES:
        return None
    how = deletion_shape(before, first, last)
    if how is None:
        return None
    return EditRule(Leaf(node.type, node.text or b""), (b"",), role=role_of(node), deletes=how)


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


def _aligned(
    old_tree: tree_sitter.Tree, new_tree: tree_sitter.Tree, start: int, old_end: int, delta: int
) -> tuple[tree_sitter.Node, tree_sitter.Node] | None:
    """The smallest old node holding ``start``..``old_end`` whose range, moved by the edit's
    ``delta`` at its end, is a node's range in the new tree; with that node."""
    starts = [old_tree.root_node.descendant_for_byte_range(start, old_end)]
    if start == old_end and start > 0:  # an insertion: also the node it appends to
        starts.append(old_tree.root_node.descendant_for_byte_range(start - 1, start))
    found: tuple[tree_sitter.Node, tree_sitter.Node] | None = None
    for old in starts:
        while old is not None:
            if old.start_byte <= start and old.end_byte >= old_end and old.is_named:
                new = _node_spanning(new_tree, old, delta)
                if new is not None:
                    if (
                        found is None
                        or old.end_byte - old.start_byte < found[0].end_byte - found[0].start_byte
                    ):
                        found = (old, new)
                    break
            old = old.parent
    return found


def _node_spanning(tree: tree_sitter.Tree, old: tree_sitter.Node, delta: int) -> tree_sitter.Node | None:
    """The new tree's counterpart of ``old``: a named node whose range is ``old``'s with its end
    moved by ``delta``, of ``old``'s type when one is, else the smallest."""
    start, end = old.start_byte, old.end_byte + delta
    node: tree_sitter.Node | None = tree.root_node.descendant_for_byte_range(start, end)
    found = None
    while node is not None and node.start_byte == start and node.end_byte == end:
        if node.is_named and (found is None or node.type == old.type):
            found = node
            if node.type == old.type:
                break
        node = node.parent
    return found


def _rule_of(
    old: tree_sitter.Node, new: tree_sitter.Node, changed: tree_sitter.Node | None
) -> EditRule | None:
    """The rule ``old`` -> ``new`` makes at this node, or None when this node has nothing fixed to
    recognise it by (its parent may). ``changed``, the smallest node the edit replaced, stays fixed
    even where the new text keeps it (``list`` in ``isinstance(v, list)`` -> ``isinstance(v, (tuple,
    list))``): it is what the rule is about."""
    if old.child_count < 2 or old.type.endswith(_LIST_SUFFIXES):
        return None  # a leaf, a wrapper of one, or a list: nothing to tell its place by
    kept = {(node.type, node.text) for node in _named_below(new) if not _is_name(node)}
    numbers: dict[bytes, int] = {}
    pattern = _pattern(old, (old, changed), kept, numbers)
    if not fixed_words(pattern):
        return None
    template = _template(new, {text: number for text, number in numbers.items()}, pattern)
    callee = _callee_around(old)
    return EditRule(pattern, template, callee=callee, role=role_of(old), reshapes=old.type != new.type)


def _pattern(
    node: tree_sitter.Node,
    fixed: tuple[tree_sitter.Node, tree_sitter.Node | None],
    kept: set[tuple[str, bytes | None]],
    numbers: dict[bytes, int],
) -> Pattern:
    if node not in fixed and node.is_named and (node.type, node.text) in kept and not _is_name(node):
        text = node.text or b""
        return Hole(numbers.setdefault(text, len(numbers)))
    if node.child_count == 0 or _has_loose_text(node):
        return Leaf(node.type, node.text or b"")
    return Branch(node.type, tuple(_pattern(child, fixed, kept, numbers) for child in node.children))


def _has_loose_text(node: tree_sitter.Node) -> bool:
    """Whether ``node`` holds text outside its children (a string's characters between its escape
    sequences): the pattern then keeps its whole text, not only its children."""
    text, at = node.text or b"", node.start_byte
    for child in node.children:
        if text[at - node.start_byte : child.start_byte - node.start_byte].strip():
            return True
        at = child.end_byte
    return bool(text[at - node.start_byte :].strip())


def _template(new: tree_sitter.Node, numbers: dict[bytes, int], pattern: Pattern) -> Template:
    """``new``'s text with the holes' texts (each as often as the pattern holds it) as hole numbers."""
    uses = {number: _count(pattern, number) for number in holes_of(pattern)}
    spans: list[tuple[int, int, int]] = []
    stack = list(reversed(new.children))
    while stack:
        node = stack.pop()
        number = numbers.get(node.text or b"") if node.is_named and not _is_name(node) else None
        if number is not None and uses.get(number, 0) > 0:
            uses[number] -= 1
            spans.append((node.start_byte, node.end_byte, number))
            continue
        stack.extend(reversed(node.children))
    parts: list[bytes | int] = []
    text = new.text or b""
    at = new.start_byte
    for start, end, number in spans:
        if start > at:
            parts.append(text[at - new.start_byte : start - new.start_byte])
        parts.append(number)
        at = end
    if at < new.end_byte:
        parts.append(text[at - new.start_byte :])
    return tuple(parts)


def _count(pattern: Pattern, number: int) -> int:
    if isinstance(pattern, Hole):
        return int(pattern.number == number)
    if isinstance(pattern, Leaf):
        return 0
    return sum(_count(child, number) for child in pattern.children)


def _named_below(node: tree_sitter.Node) -> list[tree_sitter.Node]:
    found = []
    stack = list(node.children)
    while stack:
        child = stack.pop()
        if child.is_named:
            found.append(child)
        stack.extend(child.children)
    return found


def _field_of(node: tree_sitter.Node) -> str | None:
    parent = node.parent
    if parent is None:
        return None
    for index, child in enumerate(parent.children):
        if child == node:
            return parent.field_name_for_child(index)
    return None


def _is_name(node: tree_sitter.Node) -> bool:
    """What is called (``f`` in ``f(x)``, ``obj.f`` in ``obj.f(x)``, whose receiver may still be a
    hole), or a leaf that names what is read or passed (``size`` in ``obj.size``, ``key`` in
    ``key=value``): fixed in a rule, never a hole."""
    field = _field_of(node)
    return field == "function" or (node.child_count == 0 and field in _NAME_FIELDS)


def role_of(node: tree_sitter.Node) -> str | None:
    """Where the node's place makes another shape of it: "function" for the called function,
    "receiver" for the object of a member access (``obj`` in ``obj.size``); else None."""
    field = _field_of(node)
    if field == "function":
        return field
    parent_type = node.parent.type if node.parent is not None else ""
    receiver = field in ("object", "operand") or (field == "value" and parent_type == "field_expression")
    return "receiver" if receiver else None


def callee_name(call: tree_sitter.Node) -> bytes | None:
    """The last name of a call's function (``fetch`` for ``client.fetch(...)``)."""
    function = call.child_by_field_name("function")
    while function is not None and function.child_count > 0:
        named = [child for child in function.children if child.is_named]
        function = named[-1] if named else None
    return function.text if function is not None else None


def _callee_around(node: tree_sitter.Node) -> bytes | None:
    """The name of the call in whose arguments ``node`` lies directly, if it does."""
    parent = node.parent
    if parent is None or parent.type not in _ARGUMENT_LISTS or parent.parent is None:
        return None
    return callee_name(parent.parent) if parent.parent.type in _CALLS else None


def _await_rule(old: tree_sitter.Node, new: tree_sitter.Node) -> EditRule | None:
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


def is_awaited(node: tree_sitter.Node) -> bool:
    """A call already awaited (``await f()``, Rust's ``f().await``)."""
    return node.parent is not None and node.parent.type in _AWAITED


def _half_typed(rule: EditRule, after: bytes, new: tree_sitter.Node) -> bool:
    """Whether a name the edit wrote is found nowhere else in the file but as the start of a longer
    one: the user is still typing it."""
    old_words = set(fixed_words(rule.before))
    written = {part for part in rule.after if isinstance(part, bytes)}
    for word in {w for part in written for w in re.findall(rb"[A-Za-z_]\w*", part)} - old_words:
        if any(old.startswith(word) for old in old_words):
            continue  # a name shortened (``assertEquals`` -> ``assertEqual``), not one half-typed
        whole = longer = False
        for start, ends in token_starts(after, word, MAX_WORD_LOOKUPS):
            if new.start_byte <= start < new.end_byte:
                continue  # the edit's own text
            whole, longer = whole or ends, longer or not ends
            if whole:
                break
        if longer and not whole:
            return True
    return False
