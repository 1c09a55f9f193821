"""Two examples of one change made one rule: what they agree on, their differences made holes
(``edit_rules.py`` learns each example's rule)."""

from __future__ import annotations

import re
from dataclasses import replace

from lsp_server.next_edit.comment_edits import common_shape
from lsp_server.next_edit.edit_pattern import (
    Branch,
    Hole,
    Leaf,
    Pattern,
    Template,
    fixed_words,
    generalize,
    holes_of,
    reindented,
)
from lsp_server.next_edit.edit_rule import EditRule
from lsp_server.next_edit.member_bindings import merged
from lsp_server.next_edit.rule_confidence import annotates_none_returned


def agree(first: EditRule, second: EditRule) -> EditRule | None:
    """The rule two examples agree on (their patterns anti-unified, their replacements the same once
    what differs between the examples is a hole in both), counting both examples; None when their
    replacements differ beyond that. A name the two examples differ in (``def test_a():`` and ``def
    test_b():`` both given ``-> None``) becomes a hole, in the replacement too. The examples' lines
    may be indented differently (a function and a method): the replacements are compared as if
    written at the first one's indentation, which the rule keeps."""
    if any((other.before, other.after) == (second.before, second.after) for other in first.also):
        return replace(second, examples=first.examples + second.examples)  # two names of one import
    if first.requoted is not None and first.requoted == second.requoted:
        return replace(second, examples=first.examples + second.examples)  # the quote style, any string
    if (first.callee, first.calls, first.role, first.run, first.ends_line) != (
        second.callee,
        second.calls,
        second.role,
        second.run,
        second.ends_line,
    ):
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
    two = _renumbered(reindented(second.after, second.indent, first.indent), holes[1], words[1])
    if one is None or one != two or (not fixed_words(pattern) and first.calls is None):
        return None
    trails = common_shape(first.trails, second.trails)
    if _deletes_a_note(first) and first.trails != second.trails:
        trails = None  # the same note deleted after two kinds of line: wherever it stands
    breaks = first.breaks if first.breaks == second.breaks else None
    annotates = first.annotates if first.annotates == second.annotates else None
    defines = first.defines + second.defines
    examples = first.examples + second.examples
    result = None
    if first.result is not None and second.result is not None:
        result = generalize(first.result, second.result, {})
    return replace(
        first,
        before=pattern,
        after=one,
        trails=trails,
        breaks=breaks,
        annotates=annotates,
        defines=defines,
        reads=tuple(sorted(set(first.reads) & set(second.reads))),
        wrapped_in=tuple(sorted(set(first.wrapped_in) | set(second.wrapped_in)))
        if first.wrapped_in and second.wrapped_in
        else (),
        quotes=tuple((holes[0][number], quotes) for number, quotes in first.quotes if number in holes[0]),
        home=first.home if first.home == second.home else None,
        uses=tuple(sorted(set(first.uses) & set(second.uses))),
        members=merged(first.members, second.members),
        primary=first.primary and second.primary,
        then=first.then if first.then == second.then else None,
        respelled=second.respelled if first.respelled == second.respelled else None,
        returns=first.returns if first.returns == second.returns else None,
        examples=examples,
        result=result,
    )


def unnamed(rule: EditRule) -> EditRule:
    """A rule of one example that writes ``-> None`` on a function returning nothing, with the
    function's name a hole: the rule two such examples would agree on, as its sites are told by how
    a function gives its result (``symbol_scope.returns_of``) and a name is each function's own. Any
    other rule as it is."""
    before = rule.before
    if not isinstance(before, Branch) or not annotates_none_returned(rule):
        return rule
    leaves = [(i, part) for i, part in enumerate(before.children) if isinstance(part, Leaf)]
    names = [(i, leaf.text) for i, leaf in leaves if leaf.type == "identifier"]
    if not names:
        return rule
    index, name = names[0]
    holes = holes_of(before)
    number = max(holes, default=-1) + 1
    after = _renumbered(rule.after, {hole: hole for hole in holes}, {name: number})
    if after is None:
        return rule
    children = (*before.children[:index], Hole(number), *before.children[index + 1 :])
    return replace(rule, before=Branch(before.type, children), after=after)


def _is_name_text(text: bytes) -> bool:
    return re.fullmatch(rb"[A-Za-z_]\w*", text) is not None


def _deletes_a_note(rule: EditRule) -> bool:
    """Whether the rule deletes a comment after code (its pattern's one leaf)."""
    return rule.deletes is not None and isinstance(rule.before, Leaf) and rule.before.type.endswith("comment")


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
