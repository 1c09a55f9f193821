"""Rewrite rules learned from one edit, or from two that agree: what the user's edit replaced, as a
syntax pattern with holes (``edit_pattern.py``), and what it became.

From an edit as the history holds it (a file before and after a burst of typing), the rule's node is
the smallest node of the old tree that holds the change and has a counterpart in the new tree (the
same start, the same end moved by the edit's length), widened to its parent while it has nothing
fixed to recognise it by (an argument list, a lone identifier). Its sub-trees that the new text
keeps, other than names (a callee, an attribute, a keyword: a kept keyword argument keeps its
keyword, only its value is a hole), become holes: ``fetch(url)`` -> ``fetch(url, timeout=timeout)``
gives ``fetch(□)`` -> ``fetch(□, timeout=timeout)``. A node that sat in a call's arguments remembers
the call's name, so a keyword renamed for one function is not renamed for another; one in a type
annotation remembers the name annotated (``Optional[str]`` changed for ``path`` is not changed for
``name``) until a second example annotates another, unless the edit only spells the same type
otherwise (``type_spellings.py``: ``Union[A, B]`` -> ``A | B``); a rule of a whole function
definition remembers the kind of scope the function is defined in (a parameter added to a method
is not added to a nested function of the same name); a rule remembers the names its replacement
reads of its own, to be bound at a site as at the example (``name_bindings.py``), and the methods
it calls on ``self``, which a site's class has as the example's does (``member_bindings.py``). A node
kept whole inside a new one (wrapped in ``with guard():``, a statement written before it) did not become
another kind: its keyword does not tell its sites (nor, for a statement beside it, after two
examples), and a value is wrapped again only where it stands in the kind of node the example's
stood in (a value wrapped where it is returned is not wrapped where it is compared). Deleting a node,
qualifying a name, making a function ``async`` or giving it a parameter makes the rules of
``derived_rules.py``; text respelled in a string or a comment, those of ``text_respellings.py``; a
string requoted, ``string_quotes.py``; two examples that agree, one rule (``rule_agreement.py``); an
edit across a list's items, a rule of that run (``sibling_runs.py``); adding only a comment, none
(``comment_edits.py``). A replacement over lines is indented at each site as the site's line is. A
function's signature edited makes a rule however long its body (one hole).

No rule comes from an edit that leaves or finds an error in its node (the user is mid-typing), that
writes a name found nowhere else in the file but as the start of a longer one (a half-typed
identifier), or that spans more than ``MAX_EDIT_BYTES``.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import replace
from typing import TYPE_CHECKING

from lsp_server.next_edit.comment_edits import adds_only_comments
from lsp_server.next_edit.derived_rules import (
    CONTAINERS,
    MAX_NODE_BYTES,
    await_rule,
    calls_given_parameter,
    deletion_rule,
    trailing_comment_rule,
)
from lsp_server.next_edit.diffs import changed_span, deletion_slides, inserts_whole_tokens
from lsp_server.next_edit.edit_pattern import Leaf, fixed_words, line_indent, token_starts
from lsp_server.next_edit.edit_rule import EditRule, Learned
from lsp_server.next_edit.member_bindings import member_home, members_called
from lsp_server.next_edit.name_bindings import example_reads, guarded_reads, outer_reads, reads_of
from lsp_server.next_edit.node_roles import PRIMARY, annotated_name, callee_around, replaces_a_value, role_of
from lsp_server.next_edit.qualified_names import qualified_name_rule
from lsp_server.next_edit.receiver_edits import ANY_ROLE, member_hole
from lsp_server.next_edit.rule_agreement import unnamed
from lsp_server.next_edit.rule_confidence import tied_to_values, untold
from lsp_server.next_edit.rule_parts import (
    breaks_outside_holes,
    hole_texts,
    old_pattern,
    quotes_around_holes,
    result_of,
    template_of,
    unbracketed_holes,
)
from lsp_server.next_edit.sibling_runs import RUN_LISTS, run_rule
from lsp_server.next_edit.string_quotes import requoting
from lsp_server.next_edit.symbol_scope import adds_return_type, definition_scope, returns_of
from lsp_server.next_edit.text_respellings import respelling
from lsp_server.next_edit.type_spellings import replaces_own_type, same_type_respelled

if TYPE_CHECKING:
    import tree_sitter

MAX_EDIT_BYTES = 2_000
"""An edit longer than this (either side) is no example of a repeated change: no rule."""
MAX_WIDENING = 4
MAX_WORD_LOOKUPS = 5_000
"""Occurrences of a written name looked at to tell whether it is half-typed."""
_DEFINITIONS = frozenset({"function_definition", "class_definition"})
_Span = tuple[int, int, int]
_LIST_SUFFIXES = ("_list", "arguments", "parameters", "_body", "block")


def learn(
    old_tree: tree_sitter.Tree, new_tree: tree_sitter.Tree, before: bytes, after: bytes
) -> Learned | None:
    """The rule the edit ``before`` -> ``after`` makes (see the module's docstring), or None; with the
    string it requoted or the run of text it respelled in a string or a comment, which alone makes a
    rule where the edit made no other."""
    span = changed_span(before, after)
    learned = _learn_node(old_tree, new_tree, before, after, span)
    requoted = requoting(old_tree, new_tree, span)
    respelled = respelling(old_tree, new_tree, before, after, span) if requoted is None else None
    if learned is not None:
        return replace(learned, rule=replace(learned.rule, respelled=respelled, requoted=requoted))
    if requoted is not None:
        rule = EditRule(Leaf("string", requoted.was), (requoted.now,), requoted=requoted)
        return Learned(rule, requoted.start, requoted.end)
    if respelled is not None:
        rule = EditRule(Leaf(respelled.kind, respelled.old), (respelled.new,), respelled=respelled)
        return Learned(rule, respelled.start, respelled.end)
    return None


def _learn_node(
    old_tree: tree_sitter.Tree, new_tree: tree_sitter.Tree, before: bytes, after: bytes, span: _Span
) -> Learned | None:
    start, old_end, new_end = span
    if start == old_end == new_end or max(old_end, new_end) - start > MAX_EDIT_BYTES:
        return None
    if not before[start:old_end].strip() and adds_only_comments(new_tree, after, start, new_end):
        noted = trailing_comment_rule(new_tree, after, start, new_end)
        return None if noted is None else Learned(*noted)  # else a note for this place (``comment_edits.py``)
    if not after[start:new_end].strip():
        spans = deletion_slides(before, start, old_end) if new_end == start else [(start, old_end)]
        for at, end in spans:
            deleted = deletion_rule(old_tree, before, at, end)
            if deleted is not None:
                return Learned(deleted, at, at)
    pair = _aligned(old_tree, new_tree, start, old_end, new_end - old_end)
    pair_changed = pair[0] if pair is not None else None  # what the edit replaced: never a hole
    for _ in range(MAX_WIDENING + 1):
        if pair is None:
            return None
        old, new = pair
        if old.type in CONTAINERS:
            return None
        if _size_outside_body(old, old_end) > MAX_NODE_BYTES and old.type not in RUN_LISTS:
            return None  # a long list of items may still make a run rule (bounded there)
        if old.has_error or new.has_error or old.type == "ERROR":
            return None  # mid-typing, or the change is inside broken code
        awaited = await_rule(old, new)
        if awaited is not None:
            return Learned(awaited, new.start_byte, new.end_byte)
        rule = qualified_name_rule(old, new, new_tree, after) or _rule_of(old, new, pair_changed)
        at, end = new.start_byte, new.end_byte
        if rule is None:
            ran = run_rule(old, new, (start, old_end, new_end), before)
            rule, at, end = ran if ran is not None else (None, at, end)
        if rule is not None and not (untold(rule) and _assigned_in(old)):  # else told by what it assigns
            if _half_typed(rule, after, at, end):
                return None
            defines = tuple(scope for scope in [definition_scope(old)] if scope is not None)
            reads, home = example_reads(rule.reads, new, new_tree, after)
            inserts = inserts_whole_tokens(after, start, old_end, new_end) and tied_to_values(rule, old)
            rule = replace(rule, indent=line_indent(after, at), defines=defines, reads=reads, home=home)
            rule = replace(rule, inserts=inserts, then=calls_given_parameter(old, new))
            rule = unnamed(rule)
            return Learned(rule, at, end)
        parent = old.parent
        counterpart = None if parent is None else _node_spanning(new_tree, parent, new_end - old_end)
        pair = None if parent is None or counterpart is None else (parent, counterpart)
    return None


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
    if old.child_count < 2 or old.type.endswith(_LIST_SUFFIXES) or old.type == "type_parameter":
        return None  # a leaf, a wrapper of one, or a list: nothing to tell its place by
    numbers: dict[bytes, int] = {}
    pattern = old_pattern(old, new, changed, numbers)
    if not fixed_words(pattern):
        return None
    template = template_of(new.children, new, (new.start_byte, new.end_byte), numbers, pattern)
    swapped = member_hole(old, new, changed, (pattern, template), numbers)
    if swapped is not None:
        pattern, template = swapped
    wraps = _wraps(old, new)
    return EditRule(
        pattern,
        template,
        callee=callee_around(old),
        annotates=None if _about_the_type(old.text or b"", new.text or b"") else annotated_name(old),
        role=ANY_ROLE if swapped is not None else role_of(old),
        reshapes=old.type != new.type and not wraps,
        breaks=breaks_outside_holes(old.text or b"", pattern, hole_texts(numbers)),
        beside=wraps and new.type.endswith(("block", "module")),
        wrapped_in=(old.parent.type,) if wraps and old.parent is not None and _is_expression(old) else (),
        changes_value=replaces_a_value(old, new),
        quotes=quotes_around_holes(new, numbers),
        bare=unbracketed_holes(pattern, template),
        reads=tuple(sorted(reads_of(new, numbers) - reads_of(old, numbers))),
        uses=(outer_reads(old) if old.type in _DEFINITIONS else guarded_reads(old, new)) if wraps else (),
        members=member_home(tuple(sorted(members_called(new, numbers) - members_called(old, numbers))), new),
        result=result_of(new, numbers, pattern),
        primary=new.type in PRIMARY,
        returns=returns_of(old) if adds_return_type(old, new) else None,
    )


def _about_the_type(old: bytes, new: bytes) -> bool:
    """Whether a change inside an annotation is about the type wherever it is written, not about the
    name annotated (``type_spellings.py``)."""
    return same_type_respelled(old, new) or replaces_own_type(old, new)


def _assigned_in(node: tree_sitter.Node) -> bool:
    """Whether ``node`` is the value an assignment writes (the variable tells the rule's sites)."""
    parent = node.parent
    return parent is not None and parent.type == "assignment" and parent.child_by_field_name("right") == node


def _size_outside_body(node: tree_sitter.Node, edit_end: int) -> int:
    """``node``'s length, less its body's when the edit (ending at byte ``edit_end``) lies before the
    body (a function's signature changed): the body is kept whole, one hole, however long."""
    body = node.child_by_field_name("body")
    size = node.end_byte - node.start_byte
    if body is None or edit_end > body.start_byte:
        return size
    return size - (body.end_byte - body.start_byte)


def _wraps(old: tree_sitter.Node, new: tree_sitter.Node) -> bool:
    """Whether the edit kept ``old`` whole inside ``new``, of another kind: wrapped it (``with guard():``)
    or wrote beside it (a statement before an ``if``). It did not become another kind (``print x`` ->
    ``print(x)`` did): its keyword alone does not tell its sites."""
    return old.type != new.type and (old.text or b"") in (new.text or b"")


def _is_expression(node: tree_sitter.Node) -> bool:
    """Whether ``node`` is a value used in its parent, not a statement or a definition (a class
    decorated, a statement put in a ``with``: its parent is a block, whatever it does)."""
    return not node.type.endswith(("_definition", "_statement", "_declaration", "_item"))


_KEYWORDS = frozenset(word.encode() for word in keyword.kwlist)


def _half_typed(rule: EditRule, after: bytes, at: int, end: int) -> bool:
    """Whether a name the edit wrote is found nowhere else in the file but as the start of a longer
    one: the user is still typing it (not a name called: its parenthesis was typed after it)."""
    old_words = set(fixed_words(rule.before))
    written = {part for part in rule.after if isinstance(part, bytes)}
    # no f"…" prefix; nor a name its call's parenthesis follows: the user has typed past it (``_("a")``)
    names = {w for part in written for w in re.findall(rb"[A-Za-z_]\w*(?![\w\"'(])", part)}
    for word in names - old_words:
        if any(old.startswith(word) for old in old_words):
            continue  # a name shortened (``assertEquals`` -> ``assertEqual``), not one half-typed
        if word in _KEYWORDS:
            continue  # a keyword, whole where ``as`` is found elsewhere only as ``assert``'s start
        whole = longer = False
        for start, ends in token_starts(after, word, MAX_WORD_LOOKUPS):
            if at <= start < end:
                continue  # the edit's own text
            whole, longer = whole or ends, longer or not ends
            if whole:
                break
        if longer and not whole:
            return True
    return False
