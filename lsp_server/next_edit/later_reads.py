"""Whether a name a rule binds, or stops binding, at a site is read after it in the site's scope.

A name bound with ``as`` (``pytest.raises(E)`` -> ``pytest.raises(E) as exc``) serves a read the user
writes beside it, which a site without that read does not call for; an assignment's variable dropped
(``res = app.get(url)`` -> ``app.get(url)``, found in pyramid's history) was never read, and a site
whose variable is read next still needs it. The last read of a name in each scope is found once per
tree by a byte search (a file of thousands of sites is not walked per site), at most
``name_bindings.MAX_NAME_LOOKUPS`` occurrences looked at."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from lsp_server.next_edit.edit_pattern import Branch, Leaf, fixed_words, token_starts
from lsp_server.next_edit.name_bindings import MAX_NAME_LOOKUPS, is_read, scope_of, visible_scopes

if TYPE_CHECKING:
    import tree_sitter

    from lsp_server.next_edit.edit_rule import EditRule

ReadCache = dict[bytes, dict[int, int]]
"""Per tree: a name -> where its last read starts, per scope (by node id)."""
_AS_TARGET = re.compile(rb"\bas\s+([A-Za-z_]\w*)")
_AS_STATEMENTS = frozenset({"with_statement", "except_clause", "except_group_clause"})


def binds_unread(
    rule: EditRule, node: tree_sitter.Node, tree: tree_sitter.Tree, source: bytes, cache: ReadCache
) -> bool:
    """Whether the rule's replacement binds a name of its own with ``as`` in a ``with`` or an
    ``except`` (``pytest.raises(E)`` -> ``pytest.raises(E) as exc``) that nothing reads after the
    site ``node`` in its scope: the binding serves a read the user writes beside it (an assertion on
    ``exc``), which a site without that read does not call for; one where the read stands already
    (a name used and never bound) is a fix."""
    fixed = set(fixed_words(rule.before))
    names = {
        name for part in rule.after if isinstance(part, bytes) for name in _AS_TARGET.findall(part)
    } - fixed
    if not names or not _in_statement(node, _AS_STATEMENTS):
        return False
    return not any(_read_after(node, name, tree, source, cache) for name in names)


def unbinds_read(
    rule: EditRule, node: tree_sitter.Node, tree: tree_sitter.Tree, source: bytes, cache: ReadCache
) -> bool:
    """Whether the rule drops the variable an assignment writes (``res = □`` -> ``□``) and the site
    ``node``'s variable is read after it in its scope: the value is still used there."""
    before = rule.before
    target = before.children[0] if isinstance(before, Branch) and before.type == "assignment" else None
    if not isinstance(target, Leaf) or target.type != "identifier":
        return False
    written = {word for part in rule.after if isinstance(part, bytes) for word in re.findall(rb"\w+", part)}
    if target.text in written:
        return False
    return _read_after(node, target.text, tree, source, cache)


def _read_after(
    node: tree_sitter.Node, name: bytes, tree: tree_sitter.Tree, source: bytes, cache: ReadCache
) -> bool:
    last = cache.get(name)
    if last is None:
        last = cache[name] = _last_reads(tree, source, name)
    return last.get(scope_of(node).id, -1) >= node.end_byte


def _last_reads(tree: tree_sitter.Tree, source: bytes, name: bytes) -> dict[int, int]:
    """Per scope (by node id), where the last read of ``name`` in it or in a scope inside it starts;
    at most ``MAX_NAME_LOOKUPS`` occurrences are looked at."""
    last: dict[int, int] = {}
    root = tree.root_node
    for start, whole in token_starts(source, name, MAX_NAME_LOOKUPS):
        at = root.descendant_for_byte_range(start, start + len(name)) if whole else None
        if at is None or at.type != "identifier" or at.text != name or not is_read(at):
            continue
        for scope in visible_scopes(at):
            last[scope] = max(last.get(scope, -1), start)
    return last


def _in_statement(node: tree_sitter.Node, kinds: frozenset[str]) -> bool:
    """Whether ``node`` is or lies in a statement of one of ``kinds`` (up to its block)."""
    at: tree_sitter.Node | None = node
    while at is not None and at.type != "block":
        if at.type in kinds:
            return True
        at = at.parent
    return False
