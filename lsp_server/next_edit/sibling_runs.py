"""Rules over a run of a list's children: an edit inside an argument or parameter list that spans
several of its items, or adds or removes one, repeats in another list where the same run stands.

The run is the list's children the edit touched (spaces around the edit left out), and the
punctuation or item on each side of them: ``follow_redirects: bool | None = None, allow_redirects:
bool | None = None`` -> ``follow_redirects: bool | … = …`` with the commas around it, or a parameter
inserted after ``examples: … = None,`` anchored by that parameter. Its pattern and template are
built as a node's are (``rule_parts.py``), names and keywords staying, except that an item kept
whole is a hole of its kind only (a call of the same name, a keyword argument of the same keyword, a
leaf of the same type), never any item. A site is a window of another list's children matching the
run, where the list lies as the example's did (the arguments of a call of the same name, or any
function's parameters). A list of any length makes a run rule (a signature of thirty parameters);
the run itself is bounded by ``MAX_NODE_BYTES``. Like a node's rule, a run's remembers the names
its replacement reads of its own (``case_description=separators`` inserted where the example's
function is about to bind ``separators``): a site must see them bound, or lie in that function.
A parameter dropped is not dropped where the function's body reads it, unless the example's body
read it too (the user edits the reads next).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from lsp_server.next_edit.derived_rules import MAX_NODE_BYTES
from lsp_server.next_edit.edit_pattern import Branch, Hole, Leaf, Pattern, fixed_words, match
from lsp_server.next_edit.edit_rule import EditRule
from lsp_server.next_edit.name_bindings import reads_name, reads_of
from lsp_server.next_edit.node_roles import CALLS, callee_name
from lsp_server.next_edit.rule_parts import (
    breaks_outside_holes,
    hole_texts,
    kept_below,
    pattern_of,
    template_of,
)
from lsp_server.next_edit.symbol_scope import defined_function, parameter_names

if TYPE_CHECKING:
    import tree_sitter

RUN_LISTS = ("argument_list", "arguments", "parameters", "formal_parameters", "parameter_list")
"""The lists whose items a run rule covers (statements in a block are not: too alike)."""

_UNTYPED = frozenset({"identifier", "list_splat_pattern", "dictionary_splat_pattern"})
_TYPED = frozenset({"typed_parameter", "typed_default_parameter"})


def run_rule(
    old: tree_sitter.Node, new: tree_sitter.Node, span: tuple[int, int, int], source: bytes
) -> tuple[EditRule, int, int] | None:
    """The rule of an edit of bytes ``span`` (start, old end, new end) inside the list ``old`` (``new``
    after it; ``source`` is the old text), with where the example's run lies in the new text."""
    if old.type not in RUN_LISTS or new.type != old.type or old.child_count < 2:
        return None
    start, old_end, new_end = span
    while start > old.start_byte and source[start - 1 : start].isspace():
        start -= 1
    while old_end < old.end_byte and source[old_end : old_end + 1].isspace():
        old_end += 1
    children = old.children
    touched = [
        i for i, child in enumerate(children) if child.end_byte >= start and child.start_byte <= old_end
    ]
    if not touched:
        return None
    first, last = max(touched[0] - 1, 0), min(touched[-1] + 1, len(children) - 1)
    typed = _annotated(children, new.children)
    items = [i for i in touched if children[i].is_named]
    if items and all(children[i].text in typed for i in items):
        first, last = items[0], items[-1]  # parameters given types: themselves, wherever they stand
    run = children[first : last + 1]
    if run[-1].end_byte - run[0].start_byte > MAX_NODE_BYTES:
        return None
    delta = new_end - span[1]
    run_start, run_end = run[0].start_byte, run[-1].end_byte + delta
    new_run = [child for child in new.children if child.start_byte >= run_start and child.end_byte <= run_end]
    if not new_run or new_run[0].start_byte != run_start or new_run[-1].end_byte != run_end:
        return None
    numbers: dict[bytes, int] = {}
    kept = kept_below(new_run)
    pattern = Branch(old.type, tuple(_item_pattern(child, kept, numbers, typed) for child in run))
    if not fixed_words(pattern):
        return None
    template = template_of(new_run, new, (run_start, run_end), numbers, pattern)
    callee = callee_name(old.parent) if old.parent is not None and old.parent.type in CALLS else None
    breaks = breaks_outside_holes(source[run[0].start_byte : run[-1].end_byte], pattern, hole_texts(numbers))
    reads = _reads(new_run, numbers) - _reads(run, numbers)
    new_text = (new.text or b"")[run_start - new.start_byte : run_end - new.start_byte]
    drops_read = drops_a_read_parameter(old, run[0].start_byte, run[-1].end_byte, new_text)
    rule = EditRule(
        pattern,
        template,
        callee=callee,
        run=True,
        breaks=breaks,
        reads=tuple(sorted(reads)),
        drops_read=drops_read,
    )
    return rule, run_start, run_end


def drops_a_read_parameter(node: tree_sitter.Node, start: int, end: int, new: bytes) -> bool:
    """Whether bytes ``start``..``end`` of the parameters of the function at ``node``, becoming
    ``new``, drop a parameter that the function's body reads (``tmpdir`` dropped from a test that
    uses it): the result would not run, unless the reads are edited next, as the example's were."""
    dropped = parameter_names(node, start, end) - set(re.findall(rb"[A-Za-z_]\w*", new))
    function = defined_function(node) if dropped else None
    body = function.child_by_field_name("body") if function is not None else None
    return body is not None and any(reads_name(body, name) for name in dropped)


def _reads(items: list[tree_sitter.Node], holes: dict[bytes, int]) -> set[bytes]:
    """The names the items read, outside what the rule keeps as holes (``name_bindings.reads_of``)."""
    return {name for item in items for name in reads_of(item, holes)}


def _item_pattern(
    item: tree_sitter.Node,
    kept: set[tuple[str, bytes | None]],
    numbers: dict[bytes, int],
    typed: set[bytes],
) -> Pattern:
    """One child of the run as a pattern: an item the new text keeps whole matches only an item of its
    kind, its names fixed and its parts holes (a kept ``CheckConstraint(…)`` beside the edit is no
    ``Column(…)`` or ``schema=…`` at a site); a leaf or an item with no name, any item of its type. A
    parameter the edit gave a type (``typed``) is that parameter: its name is fixed (``command`` ->
    ``command: str`` is about ``command``, wherever a function takes it)."""
    if item.text in typed:
        return Leaf(item.type, item.text or b"")
    whole = pattern_of(item, (item, None), kept, numbers)
    if not item.is_named or (item.type, item.text) not in kept:
        return whole
    if isinstance(whole, Branch) and fixed_words(whole):
        return whole
    return Hole(numbers.setdefault(item.text or b"", len(numbers)), item.type)


def _annotated(run: list[tree_sitter.Node], new_run: list[tree_sitter.Node]) -> set[bytes]:
    """The parameters of ``run`` (a plain name, ``*args``, ``**kwargs``) that ``new_run`` gives a type."""
    plain = {item.text for item in run if item.type in _UNTYPED}
    named = (item.named_children[0] for item in new_run if item.type in _TYPED and item.named_children)
    return {name.text for name in named if name.text in plain and name.text is not None}


def run_at(rule: EditRule, node: tree_sitter.Node, at: int) -> tuple[int, int, dict[int, bytes]] | None:
    """The window of ``node``'s children (a list of the rule's type, lying where the example's did)
    that holds byte ``at`` and matches the rule's run: its bytes and what its holes matched."""
    if not isinstance(rule.before, Branch) or node.type != rule.before.type:
        return None
    if rule.callee is not None:
        call = node.parent
        if call is None or call.type not in CALLS or callee_name(call) != rule.callee:
            return None
    run, children = rule.before.children, node.children
    for first in range(len(children) - len(run) + 1):
        window = children[first : first + len(run)]
        if not window[0].start_byte <= at < window[-1].end_byte:
            continue
        bound: dict[int, bytes] = {}
        if all(match(part, child, bound) for part, child in zip(run, window, strict=True)):
            return window[0].start_byte, window[-1].end_byte, bound
    return None
