"""The floor a refactor or fix must clear before it is offered: it keeps the code.

A small model asked to refactor a function can answer with something else entirely (a docstring and
a list hundreds of items long in place of the function). Without a configured check command nothing
else stands between such a reply and the user, so every proposal is checked here, on the whole file
before and after the edit:

* **It parses where the original did**: the file after the edit may not have more tree-sitter
  errors than before (so a file that parsed must still parse; a fix of broken code may leave it no
  worse). Files without a grammar skip this.
* **The definitions stay**: every function, method or class name defined in the changed lines must
  still be defined in the file afterwards as often as before, unless the instruction asks to remove or
  rename something. That is read from the instruction's words (remove, delete, drop, rename,
  inline, merge, combine, replace, eliminate, "get rid of"): an instruction that names such an intent
  may make definitions disappear; any other (the default "make this clearer", a fix's "change nothing
  else") may not. The words are a deliberately coarse test: a false "may remove" only lowers the
  floor to the other two checks, while a false "may not" would refuse what the user asked for.
* **The size stays sane**: the changed code may grow to at most `MAX_GROWTH` times the selection's
  (non-whitespace characters) plus `GROWTH_ALLOWANCE`. A refactor adds a docstring, type hints, a
  guard or a helper, which doubles a function at most; three times is room for that. A model that has
  lost its way (runaway lists, the same block again and again) lands far beyond: the reply that
  prompted this check was over thirty times its function. The allowance lets a one-line selection gain
  a few lines. Shrinking is not limited: simplifications shrink code, and deleting what the user
  wanted kept is what the definitions check is for.

Before any of these, an edit must stay inside the workspace: :class:`EditOutsideWorkspace` is what
refuses it (``workspace_edit.check_inside_workspace`` for an editor's document, the agent's scratch
copy for a path in a reply).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from indexer.languages import LanguageSpec
from indexer.positions import LineIndex
from indexer.tags import TagsExtractor
from lsp_server.completion.syntax import error_count, parse

if TYPE_CHECKING:
    import tree_sitter

MAX_GROWTH = 3.0
GROWTH_ALLOWANCE = 200
# Definition kinds whose disappearance loses code (variables and constants may come and go).
DEFINITION_KINDS = frozenset(
    {"function", "method", "class", "interface", "struct", "trait", "enum", "module", "type", "macro"}
)
_REMOVAL_WORDS = re.compile(
    r"\b(remov|delet|drop|renam|inlin|merg|combin|replac|eliminat|get rid of|strip out)", re.IGNORECASE
)


class EditOutsideWorkspace(ValueError):
    """A proposed edit to a file outside the workspace (through ``..``, an absolute path or a symlink)."""


@dataclass(frozen=True)
class Proposal:
    """A file before and after a proposed edit, the file's language, the instruction the model was
    given, and the lines the user selected (first, last from 0, inclusive, in ``before``; None: the
    changed lines are the whole story)."""

    before: str
    after: str
    language: LanguageSpec | None
    instruction: str = ""
    selection: tuple[int, int] | None = None


def proposal_problem(proposal: Proposal) -> str | None:
    """Why the proposal must not be offered, in one line; None when it may be."""
    before_lines, after_lines = proposal.before.split("\n"), proposal.after.split("\n")
    start, end_before, end_after = _changed_region(before_lines, after_lines, proposal.selection)
    old = "\n".join(before_lines[start:end_before])
    new = "\n".join(after_lines[start:end_after])
    old_size, new_size = _size(old), _size(new)
    if new_size > MAX_GROWTH * old_size + GROWTH_ALLOWANCE:
        return (
            f"the proposal is {new_size / max(old_size, 1):.0f}x the size of the code it replaces "
            f"(at most {MAX_GROWTH:g}x is offered)"
        )
    spec = proposal.language
    if spec is None:
        return None
    before_tree, after_tree = parse(spec, proposal.before), parse(spec, proposal.after)
    before_errors, after_errors = error_count(before_tree), error_count(after_tree)
    if after_errors > before_errors:
        where = _first_error_line(after_tree)
        at = f" (line {where + 1})" if where is not None else ""
        return f"the proposed code does not parse as {spec.name}{at}"
    if _REMOVAL_WORDS.search(proposal.instruction):
        return None
    extractor = TagsExtractor(spec)
    defined_before = _definitions(extractor, before_tree, proposal.before)
    defined_after = Counter(name for name, _ in _definitions(extractor, after_tree, proposal.after))
    in_region = Counter(name for name, line in defined_before if start <= line < end_before)
    all_before = Counter(name for name, _ in defined_before)
    lost = sorted(name for name in in_region if defined_after[name] < all_before[name])
    if lost:
        return f"the proposal drops the definition of {', '.join(lost)}"
    return None


def _changed_region(
    before: list[str], after: list[str], selection: tuple[int, int] | None
) -> tuple[int, int, int]:
    """[start, end) of the lines that differ, widened to the selection: in ``before`` and ``after``."""
    prefix = 0
    while prefix < min(len(before), len(after)) and before[prefix] == after[prefix]:
        prefix += 1
    suffix = 0
    limit = min(len(before), len(after)) - prefix
    while suffix < limit and before[-1 - suffix] == after[-1 - suffix]:
        suffix += 1
    first, last = selection if selection is not None else (prefix, prefix - 1)
    start = min(prefix, first)
    end_before = max(len(before) - suffix, last + 1, start)
    return start, end_before, end_before + len(after) - len(before)


def _size(text: str) -> int:
    return len("".join(text.split()))


def _definitions(extractor: TagsExtractor, tree: tree_sitter.Tree, text: str) -> list[tuple[str, int]]:
    """(name, line) of the function-like and class-like definitions in a parsed file."""
    tags = extractor.extract(tree, LineIndex(text.encode("utf-8", "surrogatepass")))
    return [(tag.name, tag.line) for tag in tags if tag.is_definition and tag.kind in DEFINITION_KINDS]


def _first_error_line(tree: tree_sitter.Tree) -> int | None:
    cursor = tree.walk()
    while True:
        node = cursor.node
        if node is not None and (node.is_error or node.is_missing):
            return int(node.start_point[0])
        if node is not None and node.has_error and cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return None
