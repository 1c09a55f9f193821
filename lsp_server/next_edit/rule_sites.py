"""Where a learned rule applies in one syntax tree: the nodes of the rule's shape, nearest the example
first, never the example itself, with the text each becomes. Never a site that already reads as the
rule's result (the result standing there or around it, or the result's shape: a second application),
and, for a rule from a function's definition, never a function in a scope of another kind than the
examples' or one that has the parameter the rule writes; never a parameter dropped where the
function's body reads it, unless the example's did too (``sibling_runs.py``); never a call given a
keyword argument it passes already; a definition decorated as the examples were only where it uses
a name from outside that their bodies used (``EditRule.uses``).

Bounded work, whatever the file: candidates are found from the rule's most telling fixed word by a
byte search (C speed), at most ``MAX_CANDIDATES`` occurrences are looked at, each climbs at most
``MAX_CLIMB`` ancestors, and at most ``MAX_SITES`` sites are returned (the nearest). A rule too wide
to be a guess worth showing (``rule_confidence.py``) has no sites. No site where a name the
replacement reads is not bound (``name_bindings.py``), nor where ``self`` lacks a method it calls
(``member_bindings.py``). Where the rule's shape has no site, the sites of the rule it calls for
next (``EditRule.then``: the calls of a function given a parameter), or of a run of text it
respelled inside a string or a comment (``text_respellings.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lsp_server.next_edit.comment_edits import fits_shape, line_shape
from lsp_server.next_edit.derived_rules import deletion_shape, deletion_span
from lsp_server.next_edit.edit_pattern import (
    fixed_words,
    line_indent,
    match,
    reindented,
    render,
    token_starts,
)
from lsp_server.next_edit.edit_rule import EditRule
from lsp_server.next_edit.later_reads import ReadCache, binds_unread, unbinds_read
from lsp_server.next_edit.member_bindings import ClassCache, members_reachable
from lsp_server.next_edit.name_bindings import ScopeCache, readable_at, reads_any
from lsp_server.next_edit.rule_confidence import stays_quiet
from lsp_server.next_edit.rule_parts import breaks_outside_holes
from lsp_server.next_edit.sibling_runs import drops_a_read_parameter, run_at
from lsp_server.next_edit.site_context import defined_alike, in_context
from lsp_server.next_edit.string_quotes import requoted_sites
from lsp_server.next_edit.symbol_scope import parameter_names, returns_of
from lsp_server.next_edit.text_respellings import respelled_spans

if TYPE_CHECKING:
    import tree_sitter

_KEYWORD = re.compile(rb"([A-Za-z_]\w*)\s*=(?!=)")
MAX_CANDIDATES = 5_000
"""Occurrences of the anchor word looked at per file: a rule matching thousands of places stops here."""
MAX_CLIMB = 8
"""Ancestors of an occurrence tried as the rule's node (a pattern deeper than that is not matched)."""
MAX_SITES = 50
"""Sites returned per file, the nearest to the example."""


@dataclass(frozen=True)
class Site:
    """Bytes ``start``..``end`` of the source hold ``old`` and become ``new``."""

    start: int
    end: int
    old: bytes
    new: bytes


def find_sites(
    rule: EditRule,
    tree: tree_sitter.Tree,
    source: bytes,
    near: int = 0,
    exclude: tuple[int, int] | None = None,
) -> list[Site]:
    """The places of ``source`` (parsed as ``tree``) where ``rule`` applies, nearest byte ``near``
    first; none overlapping ``exclude`` (the example) or each other."""
    found: dict[tuple[int, int], Site] = {}
    requoted = rule.requoted if rule.examples > 1 else None
    anchors = [] if stays_quiet(rule) or requoted is not None else rule.anchors()
    if requoted is not None:  # the example is its string, not the node the rule's shape spans
        exclude = None if exclude is None else (requoted.start, requoted.end)
        for start, end, new in requoted_sites(requoted, tree, source):
            found[(start, end)] = Site(start, end, source[start:end], new)
    scopes: ScopeCache = {}
    classes: ClassCache = {}
    reads: ReadCache = {}
    for start, whole in token_starts(source, anchors[0], MAX_CANDIDATES) if anchors else []:
        if not whole:
            continue
        site = _site_at(rule, tree, source, (start, start + len(anchors[0])), (scopes, classes, reads))
        if site is not None:
            found.setdefault((site.start, site.end), site)
    for other in rule.also if rule.examples > 1 else ():  # one name qualified: no move of its import yet
        for site in find_sites(other, tree, source, near):
            found.setdefault((site.start, site.end), site)
    if not found and rule.then is not None:
        return find_sites(rule.then, tree, source, near, exclude)
    respelled = rule.respelled
    if not found and respelled is not None:
        new = respelled.new
        if exclude is not None:  # the example is its run, not the node the rule's shape spans
            exclude = (respelled.start, respelled.end)
        for start, end in respelled_spans(respelled, tree, source):
            if not _already_rewritten(source, start, end, new):
                found[(start, end)] = Site(start, end, source[start:end], new)
    ordered = sorted(found.values(), key=lambda site: (abs(site.start - near), site.start))
    chosen: list[Site] = []
    for site in ordered:
        if exclude is not None and site.start < exclude[1] and site.end > exclude[0]:
            continue
        if any(site.start < other.end and site.end > other.start for other in chosen):
            continue
        chosen.append(site)
        if len(chosen) == MAX_SITES:
            break
    return chosen


def _site_at(
    rule: EditRule,
    tree: tree_sitter.Tree,
    source: bytes,
    span: tuple[int, int],
    caches: tuple[ScopeCache, ClassCache, ReadCache],
) -> Site | None:
    """The smallest node around bytes ``span`` where the rule applies, as a site; ``caches`` hold the
    scopes binding the names the rule reads and the last read of a name per scope
    (``name_bindings.py``), and the classes' attributes (``member_bindings.py``)."""
    scopes, classes, reads = caches
    node: tree_sitter.Node | None = tree.root_node.descendant_for_byte_range(*span)
    root_type = rule.before.type
    for _ in range(MAX_CLIMB):
        if node is None:
            return None
        if rule.run and node.type == root_type:
            found = run_at(rule, node, span[0]) if defined_alike(rule, node) else None
            if found is not None:
                at, last, holes = found
                if not _laid_out_alike(rule, source[at:last], holes):
                    return None
                new = render(reindented(rule.after, rule.indent, line_indent(source, at)), holes)
                if (
                    _writes_a_parameter_it_has(rule, node, at, last)
                    or _passes_a_keyword_twice(rule, node)
                    or (not rule.drops_read and drops_a_read_parameter(node, at, last, new))
                    or _already_rewritten(source, at, last, new)
                    or not readable_at(rule, node, tree, source, scopes)
                    or not members_reachable(rule.members, node, classes)
                ):
                    return None
                return Site(at, last, source[at:last], new)
        elif (root_type is None or node.type == root_type) and in_context(rule, node):
            bound: dict[int, bytes] = {}
            if (
                match(rule.before, node, bound)
                and not node.has_error
                and _laid_out_alike(rule, node.text, bound)
            ):
                if rule.deletes is not None:
                    return _deletion_site(rule, tree, source, node)
                if rule.ends_line and deletion_shape(source, node.end_byte, node.end_byte) is None:
                    return None  # more on the line than the node: another comment, more code
                if rule.result is not None and match(rule.result, node, {}):
                    return None  # rewritten before: the rule would apply a second time
                if _writes_a_parameter_it_has(rule, node, node.start_byte, node.end_byte):
                    return None
                if _passes_a_keyword_twice(rule, node):
                    return None  # the call has the keyword argument the rule writes
                if not readable_at(rule, node, tree, source, scopes):
                    return None  # the result would read a name nothing binds here
                if not members_reachable(rule.members, node, classes):
                    return None  # nor a method ``self`` lacks here
                if rule.returns is not None and returns_of(node) != rule.returns:
                    return None  # a return type for functions that return otherwise (a generator)
                if binds_unread(rule, node, tree, source, reads) or unbinds_read(
                    rule, node, tree, source, reads
                ):
                    return None  # a name bound for a read the site lacks, or unbound where it is read
                if rule.uses and not reads_any(node, rule.uses):
                    return None  # a definition wrapped as the examples were, using none of what they use
                if any(quote in bound.get(number, b"") for number, quotes in rule.quotes for quote in quotes):
                    return None  # the hole's text would end the replacement's string
                if any(b"\n" in bound.get(number, b"") for number in rule.bare):
                    return None  # out of its brackets, the hole's text would end the statement
                new = render(reindented(rule.after, rule.indent, line_indent(source, node.start_byte)), bound)
                if not _already_rewritten(source, node.start_byte, node.end_byte, new):
                    return Site(node.start_byte, node.end_byte, source[node.start_byte : node.end_byte], new)
        node = node.parent
    return None


def _already_rewritten(source: bytes, start: int, end: int, new: bytes) -> bool:
    """Whether the site ``start``..``end`` already reads as the rule's result: its text is ``new``, or
    ``new`` already stands around it (``x`` inside ``list(x)`` for ``x`` -> ``list(x)``)."""
    old = source[start:end]
    if new == old:
        return True
    at = new.find(old)
    while at >= 0:
        if source[start - at : start - at + len(new)] == new:
            return True
        at = new.find(old, at + 1)
    return False


def _laid_out_alike(rule: EditRule, text: bytes | None, bound: dict[int, bytes]) -> bool:
    """Whether a site breaks its lines outside the holes as the example did (a rule from an edit on
    three lines does not re-flow a site on one)."""
    return rule.breaks is None or breaks_outside_holes(text or b"", rule.before, bound) == rule.breaks


def _deletion_site(
    rule: EditRule, tree: tree_sitter.Tree, source: bytes, node: tree_sitter.Node
) -> Site | None:
    """The node deleted as the example's was, where it stands on its line the same way (after code of
    the example's shape, where the rule has one)."""
    how = rule.deletes
    if how is None or deletion_shape(source, node.start_byte, node.end_byte) != how:
        return None
    if rule.trails is not None and not fits_shape(rule.trails, line_shape(tree, source, node.start_byte)):
        return None
    start, end = deletion_span(source, node.start_byte, node.end_byte, how)
    return Site(start, end, source[start:end], b"")


def _writes_a_parameter_it_has(rule: EditRule, node: tree_sitter.Node, start: int, end: int) -> bool:
    """Whether a rule from a definition writes a name that is already a parameter of the function at
    ``node`` within the site, bytes ``start``..``end``, whose text the replacement keeps (``self``
    added to ``def f(arg)`` is not added to ``def g(self)``). A parameter outside the site may be the
    one the user deletes next (``ssl_context`` made ``verify``, the old ``verify`` then deleted)."""
    if not rule.defines:
        return False
    fixed = set(fixed_words(rule.before))
    written = {
        word for part in rule.after if isinstance(part, bytes) for word in re.findall(rb"[A-Za-z_]\w*", part)
    }
    return bool((written - fixed) & parameter_names(node, start, end))


def _passes_a_keyword_twice(rule: EditRule, node: tree_sitter.Node) -> bool:
    """Whether the call at ``node`` (its arguments, or the call itself) already passes a keyword
    argument the rule's replacement writes of its own: the result would pass it twice, which Python
    refuses (``run(f, limit=n)`` given ``limit=n`` again)."""
    arguments = node if node.type == "argument_list" else node.child_by_field_name("arguments")
    if arguments is None or arguments.type != "argument_list":
        return False
    fixed = set(fixed_words(rule.before))
    written = {
        word for part in rule.after if isinstance(part, bytes) for word in _KEYWORD.findall(part)
    } - fixed
    if not written:
        return False
    passed = (
        child.child_by_field_name("name")
        for child in arguments.named_children
        if child.type == "keyword_argument"
    )
    return any(name is not None and name.text in written for name in passed)
