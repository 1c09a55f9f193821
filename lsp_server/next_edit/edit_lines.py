"""An edit that makes the same change on two lines or more at once (two assertions rewritten alike in
one paste, one multi-cursor edit, a block typed over): each changed line is an example of its own,
and the rule is the one the first two agree on (``rule_agreement.agree``), with two examples'
confidence; learned from the whole edit, the rule's node would span both lines and match nowhere
else. Found in the held-out histories: ``self.assertEqual(a, b)`` -> ``assert a == b`` on two lines
(arrow), ``tz.gettz(`` -> ``gettz_func(`` (dateutil), a comment replaced after two parameters (tox).

The lines are paired by ``difflib`` over the edited lines: a run of lines replaced by as many lines,
or separate runs; one line changed alike at two places or more is cut at its changes. A line whose
change alone leaves the file broken (one line of a statement spread over several) teaches nothing,
and then the whole edit is learned as one. Bounded: at most ``MAX_LINES`` lines changed; two
incremental re-parses (``syntax.replaced``); lines of at most ``MAX_BYTES`` in all.
"""

from __future__ import annotations

import difflib
import re
from typing import TYPE_CHECKING

from lsp_server.completion.syntax import replaced
from lsp_server.next_edit.diffs import changed_span
from lsp_server.next_edit.edit_rule import Learned
from lsp_server.next_edit.edit_rules import learn
from lsp_server.next_edit.rule_agreement import agree

if TYPE_CHECKING:
    import tree_sitter

    from lsp_server.completion.syntax import LanguageSpec

MAX_LINES = 40
"""Lines an edit may change for its lines to be taken as examples one by one."""
MAX_BYTES = 4_000
"""The changed lines' length, at most, before and after the edit (a minified line is no example)."""
_TOKEN = re.compile(rb"\w+|\s+|[^\w\s]")

LineChange = tuple[int, int, bytes]
"""Bytes ``start``..``end`` of the text before the edit, and what the edit wrote there instead."""


def learn_by_line(
    spec: LanguageSpec, old_tree: tree_sitter.Tree, before: bytes, after: bytes
) -> Learned | None:
    """The rule the edit's first two changed lines agree on, spanning the whole edit in ``after``;
    None when it changed fewer than two lines alike (see the module's docstring)."""
    changes = line_changes(before, after)
    if len(changes) < 2:
        return None
    (first_start, first_end, first_new), (second_start, second_end, second_new) = changes[:2]
    middle = before[:first_start] + first_new + before[first_end:]
    middle_tree = replaced(spec, old_tree, before, first_start, first_end, first_new)
    shift = len(first_new) - (first_end - first_start)
    second_start, second_end = second_start + shift, second_end + shift
    last = middle[:second_start] + second_new + middle[second_end:]
    last_tree = replaced(spec, middle_tree, middle, second_start, second_end, second_new)
    one = learn(old_tree, middle_tree, before, middle)
    two = learn(middle_tree, last_tree, middle, last)
    both = agree(one.rule, two.rule) if one is not None and two is not None else None
    if both is None:
        return None
    start, _, end = changed_span(before, after)
    return Learned(both, start, end)


def line_changes(before: bytes, after: bytes) -> list[LineChange]:
    """The edit ``before`` -> ``after`` as changes of one line each, in order: each line of a run
    replaced by as many lines, paired in order; [] when a run of lines is replaced by a run of
    another length, or inserted, or deleted, or more than ``MAX_LINES`` lines (``MAX_BYTES``)
    changed."""
    start, old_end, _ = changed_span(before, after)
    line_start = before.rfind(b"\n", 0, start) + 1
    tail = len(before) - old_end
    old_lines = before[line_start : _line_end(before, old_end)].split(b"\n")
    new_lines = after[line_start : _line_end(after, len(after) - tail)].split(b"\n")
    if (
        max(len(old_lines), len(new_lines)) > MAX_LINES
        or max(sum(map(len, old_lines)), sum(map(len, new_lines))) > MAX_BYTES
    ):
        return []
    if len(old_lines) == len(new_lines) == 1:
        return _repeated_in_line(old_lines[0], new_lines[0], line_start)
    changes: list[LineChange] = []
    offsets = _offsets(old_lines, line_start)
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, old_first, old_last, new_first, new_last in matcher.get_opcodes():
        if tag == "equal":
            continue
        if tag != "replace" or old_last - old_first != new_last - new_first:
            return []
        for index in range(old_last - old_first):
            at = old_first + index
            changes.append((offsets[at], offsets[at] + len(old_lines[at]), new_lines[new_first + index]))
    return changes


def _repeated_in_line(old: bytes, new: bytes, start: int) -> list[LineChange]:
    """One line's edit as its separate changes, when it made the same change at two places or more
    (``ISortPrettyPrinter`` -> ``Config, int`` twice in one signature, found in the isort history);
    [] otherwise. Compared token by token (``_TOKEN``)."""
    old_tokens, new_tokens = _TOKEN.findall(old), _TOKEN.findall(new)
    old_offsets = _offsets_of(old_tokens, start)
    matcher = difflib.SequenceMatcher(None, old_tokens, new_tokens, autojunk=False)
    changes = [
        (old_offsets[first], old_offsets[last], b"".join(new_tokens[new_first:new_last]))
        for tag, first, last, new_first, new_last in matcher.get_opcodes()
        if tag != "equal"
    ]
    texts = {(old[at - start : end - start], written) for at, end, written in changes}
    return changes if len(changes) >= 2 and len(texts) == 1 else []


def _offsets_of(tokens: list[bytes], start: int) -> list[int]:
    """Where each of ``tokens`` (a line cut into tokens, from byte ``start``) begins, and where the
    last ends."""
    found, at = [], start
    for token in tokens:
        found.append(at)
        at += len(token)
    return [*found, at]


def _line_end(source: bytes, at: int) -> int:
    """Where the line holding byte ``at`` ends (its line break, or the text's end)."""
    end = source.find(b"\n", at)
    return len(source) if end < 0 else end


def _offsets(lines: list[bytes], start: int) -> list[int]:
    """Where each of ``lines`` (split at line breaks from byte ``start``) begins."""
    found, at = [], start
    for line in lines:
        found.append(at)
        at += len(line) + 1
    return found
