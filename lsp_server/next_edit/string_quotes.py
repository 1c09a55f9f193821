"""A string's quotes changed with its text kept (``'dict'`` -> ``"dict"``): the project's quote
style, which a formatter applies to every string of the file (multidict's, httpie's, humanize's
histories changed 9 to 12 strings in one commit). No syntax node tells those places apart from the
strings the user keeps (any string is one), so only two examples that agree make the rule
(``rule_agreement.py``); its sites are then the file's strings written with the old quotes, whose
text holds no new quote and no backslash (a formatter leaves ``'say "hi"'`` alone, and an escape
may mean another thing between other quotes), with their prefix (``f``, ``r``, ``b``) kept."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tree_sitter

MAX_CANDIDATES = 5_000
"""Occurrences of the old quote looked at per file."""
_STRING = re.compile(rb"([A-Za-z]{0,2})('''|\"\"\"|'|\"|`)(.*)\2", re.DOTALL)
_STRINGS = frozenset({"string", "template_string", "raw_string_literal", "interpreted_string_literal"})


@dataclass(frozen=True)
class Requoting:
    """Strings quoted with ``old`` are quoted with ``new``; the example's string, ``was`` before and
    ``now``, is bytes ``start``..``end`` of the edited text."""

    old: bytes
    new: bytes
    was: bytes = field(compare=False)
    now: bytes = field(compare=False)
    start: int = field(compare=False)
    end: int = field(compare=False)


def requoting(
    old_tree: tree_sitter.Tree, new_tree: tree_sitter.Tree, span: tuple[int, int, int]
) -> Requoting | None:
    """The requoting the edit (changed bytes ``span``: start, old end, new end) makes, or None: one
    string whose quotes alone changed, its prefix and text kept."""
    start, old_end, new_end = span
    old = _string_around(old_tree, start, old_end)
    new = _string_around(new_tree, start, new_end)
    if old is None or new is None or old.start_byte != new.start_byte:
        return None
    old_parts, new_parts = _parts(old.text or b""), _parts(new.text or b"")
    if old_parts is None or new_parts is None:
        return None
    (prefix, quote, text), (new_prefix, new_quote, new_text) = old_parts, new_parts
    if (prefix, text) != (new_prefix, new_text) or quote == new_quote:
        return None
    return Requoting(quote, new_quote, old.text or b"", new.text or b"", new.start_byte, new.end_byte)


def requoted_sites(
    requoted: Requoting, tree: tree_sitter.Tree, source: bytes
) -> list[tuple[int, int, bytes]]:
    """The strings of ``source`` (parsed as ``tree``) the requoting applies to, as (start, end, new
    text); at most ``MAX_CANDIDATES`` occurrences of the old quote looked at."""
    found: dict[int, tuple[int, int, bytes]] = {}
    at, looked = source.find(requoted.old), 0
    while at >= 0 and looked < MAX_CANDIDATES:
        looked += 1
        node = _string_around(tree, at, at + len(requoted.old))
        if node is not None and node.start_byte not in found:
            new = requoted_text(requoted, node.text or b"")
            if new is not None:
                found[node.start_byte] = (node.start_byte, node.end_byte, new)
        at = source.find(requoted.old, at + len(requoted.old) if node is None else max(at + 1, node.end_byte))
    return list(found.values())


def requoted_text(requoted: Requoting, string: bytes) -> bytes | None:
    """``string`` (a literal's whole text) in the new quotes, or None where they do not apply."""
    parts = _parts(string)
    if parts is None:
        return None
    prefix, quote, text = parts
    if quote != requoted.old or b"\\" in text or requoted.new[:1] in text:
        return None
    return prefix + requoted.new + text + requoted.new


def _parts(string: bytes) -> tuple[bytes, bytes, bytes] | None:
    match = _STRING.fullmatch(string)
    return None if match is None else (match.group(1), match.group(2), match.group(3))


def _string_around(tree: tree_sitter.Tree, start: int, end: int) -> tree_sitter.Node | None:
    """The string literal holding bytes ``start``..``end``, if one does."""
    node: tree_sitter.Node | None = tree.root_node.descendant_for_byte_range(start, max(start, end))
    while node is not None and node.type not in _STRINGS:
        node = node.parent
    return node
