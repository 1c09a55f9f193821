"""Syntax patterns with holes, and the text that replaces what they match: the two halves of a rule
learned from an edit (``edit_rules.py``).

A pattern mirrors a tree-sitter node: a fixed leaf matches a leaf of the same type and text, a branch
a node of the same type whose children (anonymous ones included) match one by one, a hole any node
(of its type, when it has one). A hole bound twice must match the same text both times. A template
is the replacement: literal bytes and hole numbers, rendered with what the holes matched at a site.

Leaves are tree-sitter's, so a pattern made from a string matches only strings and one made from code
never matches inside a string or a comment.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Union

if TYPE_CHECKING:
    import tree_sitter


@dataclass(frozen=True)
class Leaf:
    """A fixed token: a leaf of ``type`` whose text is ``text``."""

    type: str
    text: bytes


@dataclass(frozen=True)
class Hole:
    """Any node (of ``type`` when given); the same ``number`` twice means the same text twice."""

    number: int
    type: str | None = None


@dataclass(frozen=True)
class Branch:
    """A node of ``type`` with exactly these ``children``."""

    type: str
    children: tuple[Pattern, ...]


Pattern = Union[Leaf, Hole, Branch]  # noqa: UP007 (a runtime alias, read before 3.12's ``type``)
Template = tuple[bytes | int, ...]
"""The replacement: literal bytes, and hole numbers standing for what the hole matched."""

_WORDS = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def is_word(text: bytes) -> bool:
    """A token that names or states something (an identifier, a keyword, a number, a string's
    content), not punctuation."""
    return any(byte in _WORDS for byte in text)


def token_starts(source: bytes, word: bytes, limit: int) -> list[tuple[int, bool]]:
    """Where ``word`` starts a token of ``source`` (not inside a longer word), at most ``limit``, each
    with whether it ends there too (False: a longer word starts with it). ``bytes.find`` runs at C
    speed, where a regular expression's scan of a large file takes milliseconds."""
    found: list[tuple[int, bool]] = []
    wordy = is_word(word[:1])
    at = source.find(word)
    while at >= 0 and len(found) < limit:
        if not wordy or not _word_byte(source, at - 1):
            found.append((at, not wordy or not _word_byte(source, at + len(word))))
        at = source.find(word, at + 1)
    return found


def _word_byte(source: bytes, index: int) -> bool:
    return 0 <= index < len(source) and source[index] in _WORDS


def match(pattern: Pattern, node: tree_sitter.Node, bound: dict[int, bytes]) -> bool:
    """Whether ``node`` has ``pattern``'s shape; the holes' texts go into ``bound`` (left partly
    filled on a mismatch: pass a fresh dict per site)."""
    if isinstance(pattern, Hole):
        if pattern.type is not None and node.type != pattern.type:
            return False
        text = node.text or b""
        seen = bound.get(pattern.number)
        if seen is None:
            bound[pattern.number] = text
            return True
        return seen == text
    if node.type != pattern.type:
        return False
    if isinstance(pattern, Leaf):
        return node.text == pattern.text
    if node.child_count != len(pattern.children):
        return False
    return all(
        match(child_pattern, child, bound)
        for child_pattern, child in zip(pattern.children, node.children, strict=True)
    )


def render(template: Template, bound: dict[int, bytes]) -> bytes:
    """The template's text with each hole replaced by what it matched."""
    return b"".join(part if isinstance(part, bytes) else bound[part] for part in template)


def line_indent(source: bytes, at: int) -> bytes:
    """The indentation of the line that holds byte ``at``."""
    line_start = source.rfind(b"\n", 0, at) + 1
    line = source[line_start:at]
    return line[: len(line) - len(line.lstrip(b" \t"))]


def reindented(template: Template, indent: bytes, site_indent: bytes) -> Template:
    """``template`` (written at a line indented ``indent``) for a site whose line is indented
    ``site_indent``: each line break it writes keeps its indentation relative to its first line (a
    closing bracket less indented than the first line too). A hole's text is the site's own and
    keeps its indentation."""
    if indent == site_indent:
        return template
    return tuple(
        part if isinstance(part, int) else _reindented_part(part, indent, site_indent) for part in template
    )


def _reindented_part(part: bytes, indent: bytes, site_indent: bytes) -> bytes:
    """``part`` with each line break's indentation moved from ``indent`` to ``site_indent``; a blank
    line stays blank."""
    lines = part.split(b"\n")
    last = len(lines) - 1
    out = [lines[0]]
    for index, line in enumerate(lines[1:], start=1):
        body = line.lstrip(b" \t")
        own = line[: len(line) - len(body)]
        if not body and (index != last or not own):
            out.append(line)  # a blank line, or the site's own next line after a final break
        elif own.startswith(indent):
            out.append(site_indent + line[len(indent) :])
        elif indent.startswith(own) and len(site_indent) >= len(indent) - len(own):
            out.append(site_indent[: len(site_indent) - (len(indent) - len(own))] + body)
        else:
            out.append(line)
    return b"\n".join(out)


def holes_of(pattern: Pattern) -> set[int]:
    """The hole numbers in ``pattern``."""
    if isinstance(pattern, Hole):
        return {pattern.number}
    if isinstance(pattern, Leaf):
        return set()
    found: set[int] = set()
    for child in pattern.children:
        found |= holes_of(child)
    return found


def fixed_words(pattern: Pattern) -> list[bytes]:
    """The fixed tokens that name or state something (see :func:`is_word`), in order: what a site
    must contain besides punctuation."""
    if isinstance(pattern, Hole):
        return []
    if isinstance(pattern, Leaf):
        return [pattern.text] if is_word(pattern.text) else []
    return [word for child in pattern.children for word in fixed_words(child)]


def telling_words(pattern: Pattern) -> list[bytes]:
    """The fixed words that are names or literals (a named leaf's), not keywords (an anonymous
    leaf's type is its own text: ``assert``, ``and``, ``print``)."""
    if isinstance(pattern, Hole):
        return []
    if isinstance(pattern, Leaf):
        return (
            [pattern.text]
            if is_word(pattern.text) and pattern.type != pattern.text.decode(errors="replace")
            else []
        )
    return [word for child in pattern.children for word in telling_words(child)]


def generalize(first: Pattern, second: Pattern, pairs: dict[tuple[Pattern, Pattern], int]) -> Pattern:
    """The most specific pattern both ``first`` and ``second`` are instances of (anti-unification):
    where they differ, a hole. ``pairs`` numbers the holes by the pair of sub-patterns each stands for
    (the same pair twice gives the same hole), so a caller can map either side's holes to them. A
    node that only wraps a hole is that hole where the other side has a hole (a kept type is a hole
    at the wrapper ``type`` in one example, at the name inside it in another)."""
    if first == second and not holes_of(first):
        return first
    if isinstance(first, Hole) or isinstance(second, Hole):
        first, second = _unwrapped(first), _unwrapped(second)
    if isinstance(first, Branch) and isinstance(second, Branch):
        if first.type != second.type or len(first.children) != len(second.children):
            return _hole_for(first, second, pairs)
        children = []
        for a, b in zip(first.children, second.children, strict=True):
            children.append(generalize(a, b, pairs))
        return Branch(first.type, tuple(children))
    return _hole_for(first, second, pairs)


def _unwrapped(pattern: Pattern) -> Pattern:
    """The hole that ``pattern`` only wraps (a node of one child, down to a hole), else ``pattern``."""
    inner = pattern
    while isinstance(inner, Branch) and len(inner.children) == 1:
        inner = inner.children[0]
    return inner if isinstance(inner, Hole) else pattern


def _hole_for(first: Pattern, second: Pattern, pairs: dict[tuple[Pattern, Pattern], int]) -> Hole:
    number = pairs.setdefault((first, second), len(pairs))
    kinds = {_root_type(first), _root_type(second)}
    return Hole(number, kinds.pop() if len(kinds) == 1 else None)


def _root_type(pattern: Pattern) -> str | None:
    return pattern.type
