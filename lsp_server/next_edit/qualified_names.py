"""A name qualified with the module or object it now comes from (``DEFAULT_TAG_REGEX`` ->
``_config.DEFAULT_TAG_REGEX``, ``AsyncMockBackend(…)`` -> ``httpcore.AsyncMockBackend(…)``): the same
name is qualified alike wherever it is read (called, passed, a receiver; not where it is imported,
defined, assigned, a member or a keyword: ``site_context.py``), where the qualifier is bound. When
the qualifier is the module the file imports the name from (``from httpcore import
AsyncMockBackend, ConnectionPool``) and a second example qualifies another name of that import, the
file is moving to the module's own name: the other names that import brings are qualified too
(``EditRule.also``), at most ``MAX_SIBLINGS`` of them. One example is no such move: dateutil's
history qualified ``today`` and kept ``within_delta`` of the same import."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsp_server.next_edit.edit_pattern import Leaf
from lsp_server.next_edit.edit_rule import EditRule
from lsp_server.next_edit.name_bindings import example_reads, is_read_name
from lsp_server.next_edit.receiver_edits import ANY_ROLE

if TYPE_CHECKING:
    import tree_sitter

MAX_SIBLINGS = 20
"""Other names of the example's import qualified after it, at most."""
_QUALIFIED = frozenset({"attribute", "member_expression"})
_QUALIFIERS = frozenset({"identifier", "attribute", "member_expression"})


def qualified_name_rule(
    old: tree_sitter.Node, new: tree_sitter.Node, new_tree: tree_sitter.Tree, after: bytes
) -> EditRule | None:
    """The rule of the name read at ``old`` that ``new`` qualifies (see the module's docstring), in
    ``after`` (parsed as ``new_tree``): a qualifier bound there must be bound at a site, one still to
    be imported need not (``name_bindings.example_reads``)."""
    if old.type != "identifier" or new.type not in _QUALIFIED or not is_read_name(old):
        return None
    qualifier = new.child_by_field_name("object")
    member = new.named_children[-1] if new.named_children else None
    if qualifier is None or member is None or member.text != old.text or qualifier.type not in _QUALIFIERS:
        return None
    prefix = (qualifier.text or b"") + b"."
    reads, _ = example_reads(_first_name(qualifier), new, new_tree, after)
    also = tuple(
        EditRule(Leaf("identifier", name), (prefix + name,), role=ANY_ROLE, reads=reads)
        for name in _imported_with(old, qualifier.text or b"")
    )
    name = old.text or b""
    return EditRule(Leaf("identifier", name), (prefix + name,), role=ANY_ROLE, reads=reads, also=also)


def _imported_with(node: tree_sitter.Node, module: bytes) -> list[bytes]:
    """The other names the module-level ``from … import`` of ``node``'s name brings, when it imports
    from the module ``module`` names (its last part: ``httpcore``, ``_config`` for ``._config``)."""
    root = node
    while root.parent is not None:
        root = root.parent
    for statement in root.children:
        source = (
            statement.child_by_field_name("module_name")
            if statement.type == "import_from_statement"
            else None
        )
        if source is None or (source.text or b"").rsplit(b".", 1)[-1] != module:
            continue
        names = [
            name.text
            for name in statement.children_by_field_name("name")
            if name.type == "dotted_name" and name.text
        ]
        if node.text in names:
            return [name for name in names if name != node.text and b"." not in name][:MAX_SIBLINGS]
    return []


def _first_name(node: tree_sitter.Node) -> tuple[bytes, ...]:
    """The first name of a qualifier (``pkg`` in ``pkg.mod``): the one a site must see bound."""
    while node.type != "identifier" and node.named_children:
        node = node.named_children[0]
    return (node.text,) if node.type == "identifier" and node.text else ()
