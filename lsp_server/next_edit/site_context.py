"""Whether a node sits where a rule's examples did (``rule_sites.py`` looks for the rule's shape
there): inside a call of the same function, in the same role in its parent (called, a receiver, a
target), annotating the same name, wrapped in the same kind of node, given as a value rather than a
key, read rather than imported or defined, in a function of the same scope."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsp_server.next_edit.edit_pattern import Hole, Leaf
from lsp_server.next_edit.edit_rule import EditRule
from lsp_server.next_edit.name_bindings import is_read_name
from lsp_server.next_edit.node_roles import annotated_name, callee_name, is_awaited, is_key, role_of
from lsp_server.next_edit.receiver_edits import ANY_ROLE
from lsp_server.next_edit.symbol_scope import definition_scope

if TYPE_CHECKING:
    import tree_sitter


def in_context(rule: EditRule, node: tree_sitter.Node) -> bool:
    """Whether ``node`` sits where the example did (the call around it, its role in its parent)."""
    if rule.calls is not None:
        return isinstance(rule.before, Hole) and callee_name(node) == rule.calls and not is_awaited(node)
    if rule.callee is not None:
        arguments = node.parent
        call = arguments.parent if arguments is not None else None
        if call is None or callee_name(call) != rule.callee:
            return False
    if rule.annotates is not None and annotated_name(node) != rule.annotates:
        return False
    if rule.wrapped_in and (node.parent is None or node.parent.type not in rule.wrapped_in):
        return False
    if rule.changes_value and is_key(node):
        return False  # a value changed is data; the same literal as a key names an entry
    if _qualifies_a_name(rule) and not is_read_name(node):
        return False  # a name qualified (``qualified_names.py``) where it is read
    return _role_fits(rule, role_of(node)) and defined_alike(rule, node)


def _qualifies_a_name(rule: EditRule) -> bool:
    """Whether the rule's pattern is one name it rewrites (not deletes): ``qualified_names.py``."""
    return rule.deletes is None and isinstance(rule.before, Leaf) and rule.before.type == "identifier"


def _role_fits(rule: EditRule, role: str | None) -> bool:
    """Whether a node of this role is a site of the rule: the example's role (any for
    ``ANY_ROLE``); a value's rule also where its node is a receiver, when the rule's result is an
    expression a member can follow (a call, a member, a subscript: ``v[len(p):]`` ->
    ``v.removeprefix(p)`` in ``v[len(p):].split('.')``), not a lower one (``not x``, ``a or b``)."""
    if rule.role in (ANY_ROLE, role):
        return True
    return rule.role is None and role == "receiver" and rule.primary


def defined_alike(rule: EditRule, node: tree_sitter.Node) -> bool:
    """Whether ``node``, if part of a function's definition, is part of a function defined in a scope
    of the kind the examples' functions were (a method for methods), unless they were of several."""
    if len(set(rule.defines)) != 1:
        return True
    scope = definition_scope(node)
    return scope is None or scope == rule.defines[0]
