"""Whether a name is bound where a rule would write it, from the syntax tree alone: a rule whose
replacement reads a name of its own (``job.flags`` -> ``flags``, where the example's function binds
``flags``) is not offered where nothing binds that name (the other functions reading ``job.flags``):
the result would not run. A name nothing binds where the example was is still to be bound there
(the user writes the assignment or the parameter next): the sites lie in the example's function.

A name is bound in a scope by a parameter, an assignment, a loop's, ``with``'s or ``except``'s
target, an import, a ``def`` or ``class``, a ``:=`` or a ``global``/``nonlocal`` statement
(``symbol_scope.is_binding`` and Python's own node types); a site sees the bindings of the functions
around it, of the class whose body it lies in directly, of the module, and the builtins. Bounded: at
most ``MAX_NAME_LOOKUPS`` occurrences of a name are looked at per tree (a byte search finds them).
"""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING

from lsp_server.next_edit.edit_pattern import token_starts
from lsp_server.next_edit.node_roles import field_of, is_name
from lsp_server.next_edit.symbol_scope import (
    TARGET_PATTERNS,
    identifiers_named,
    is_binding,
    is_function,
    is_member_name,
)

if TYPE_CHECKING:
    import tree_sitter

    from lsp_server.next_edit.edit_rule import EditRule

MAX_NAME_LOOKUPS = 2_000
"""Occurrences of a name looked at per tree to find the scopes that bind it."""
BUILTIN_NAMES = frozenset(name.encode() for name in dir(builtins))
_TARGET_PARENTS = frozenset(
    {"as_pattern_target", "global_statement", "nonlocal_statement", "parameters", "lambda_parameters"}
)
_PATTERNS = TARGET_PATTERNS | {"dictionary_splat_pattern"}  # ``**kwargs`` too
_IMPORTS = frozenset({"import_statement", "import_from_statement"})
_NOT_VALUES = _IMPORTS | {"type"}  # Python's annotation node: the names in it are types

ScopeCache = dict[bytes, frozenset[int]]
"""Per tree: a name -> the ids of the scopes (functions, classes, the module) that bind it."""


def reads_of(node: tree_sitter.Node, holes: dict[bytes, int], values_only: bool = False) -> set[bytes]:
    """The names ``node`` reads as variables (not a member, a keyword argument's name, nor a name it
    binds itself), outside its sub-trees whose text ``holes`` holds (what a rule keeps as holes);
    with ``values_only``, not those called or qualified (``f`` in ``f(x)``, ``m`` in ``m.x``)."""
    found: set[bytes] = set()
    binds: set[bytes] = set()  # a name the node binds itself (a parameter renamed with its reads)
    stack = [node]
    while stack:
        at = stack.pop()
        if at is not node and at.is_named and not is_name(at) and (at.text or b"") in holes:
            continue
        if at.type == "identifier" and at.text and _binds_here(at):
            binds.add(at.text)
        elif at.type == "identifier" and at.text and is_read(at) and not (values_only and _names_a_thing(at)):
            found.add(at.text)
        stack.extend(at.children)
    return found - binds


def values_read(node: tree_sitter.Node) -> set[bytes]:
    """The names ``node`` reads as plain values (variables) only: not a function called, a name
    qualified or capitalised (``_names_a_thing``), a callee, a member, a keyword, a type (``type`` in
    ``cl: type``), nor a module imported; nor a name ``node`` also spells as a keyword or a member
    (``comments`` in ``comments=comments``: the keyword ties a site to the example)."""
    found: set[bytes] = set()
    names: set[bytes] = set()
    around: tree_sitter.Node | None = node
    while around is not None and around.type not in _NOT_VALUES:
        around = around.parent
    stack = [node] if around is None else []
    while stack:
        at = stack.pop()
        if at.type in _NOT_VALUES:
            continue
        if at.type == "identifier" and at.text and is_read(at) and not is_name(at) and not _names_a_thing(at):
            found.add(at.text)
        elif at.type == "identifier" and at.text and (is_name(at) or is_member_name(at)):
            names.add(at.text)
        stack.extend(at.children)
    return found - names


def outer_reads(definition: tree_sitter.Node) -> tuple[bytes, ...]:
    """The names ``definition`` reads from outside itself: not a builtin, nor a name it binds (its
    parameters, its locals, its own name)."""
    return tuple(sorted(reads_of(definition, {}) - BUILTIN_NAMES))


def guarded_reads(old: tree_sitter.Node, new: tree_sitter.Node) -> tuple[bytes, ...]:
    """The names the condition of ``new``, an ``if`` written around ``old``, tests that ``old`` reads
    too (``if allowed: resp.set_header("Allow", allowed)``): the guard is about that value, so a
    statement that does not read it (``resp.set_header("Content-Length", "0")``, falcon's history)
    is no site; none for other edits."""
    condition = new.child_by_field_name("condition") if new.type == "if_statement" else None
    if condition is None:
        return ()
    return tuple(sorted(reads_of(condition, {}) & reads_of(old, {})))


def reads_any(root: tree_sitter.Node, names: tuple[bytes, ...]) -> bool:
    """Whether ``root`` reads one of ``names`` as a variable somewhere."""
    return any(reads_name(root, name) for name in names)


def reads_name(root: tree_sitter.Node, name: bytes) -> bool:
    """Whether ``root`` reads ``name`` as a variable somewhere (not as a member or a keyword)."""
    return any(is_read(node) for node in identifiers_named(root, name))


def _names_a_thing(node: tree_sitter.Node) -> bool:
    """Whether ``node`` is called or qualified (a function, a class or a module), or spelled as a
    class or a constant is (a capital first: ``Version``, ``MAX_WAIT``), which modules define."""
    if (node.text or b"").lstrip(b"_")[:1].isupper():
        return True
    parent = node.parent
    field = "function" if parent is not None and parent.type == "call" else "object"
    return parent is not None and parent.child_by_field_name(field) == node


def is_read_name(node: tree_sitter.Node) -> bool:
    """Whether ``node`` is a name read where it stands (called too): no member (``x.name``), keyword,
    definition's or binding's name, nor a name an import statement spells."""
    if node.type != "identifier" or (is_name(node) and field_of(node) != "function") or not is_read(node):
        return False
    around = node.parent
    while around is not None and around.type in ("dotted_name", "aliased_import"):
        around = around.parent
    return around is None or around.type not in _IMPORTS


def is_read(node: tree_sitter.Node) -> bool:
    """Whether the identifier ``node`` is read where it stands: no member's, binding's or keyword's
    name."""
    parent = node.parent
    if is_member_name(node) or _binds_here(node) or parent is None:
        return False
    return not ("keyword_argument" in parent.type and parent.child_by_field_name("name") == node)


def example_reads(
    reads: tuple[bytes, ...], node: tree_sitter.Node, tree: tree_sitter.Tree, source: bytes
) -> tuple[tuple[bytes, ...], bytes | None]:
    """Of ``reads`` (names a rule's replacement reads), those bound at the example ``node``; and where
    one read as a value is not bound there yet, the function whose body holds the example (None
    otherwise). A name called, qualified or capitalised (``check(x)``, ``mod.T``, ``MAX``) names a
    function, a class, a module or a constant, still to be bound at module level; a value is a local
    about to be assigned."""
    cache: ScopeCache = {}
    bound = tuple(name for name in reads if bound_at(node, name, tree, source, cache))
    values = reads_of(node, {}, values_only=True)
    return bound, function_name(node) if any(name not in bound and name in values for name in reads) else None


def readable_at(
    rule: EditRule, node: tree_sitter.Node, tree: tree_sitter.Tree, source: bytes, cache: ScopeCache
) -> bool:
    """Whether each name ``rule`` reads is bound at the site ``node``, and the site lies in the
    function the rule's names are still to be bound in, if any."""
    if any(not bound_at(node, name, tree, source, cache) for name in rule.reads):
        return False
    return rule.home is None or function_name(node) == rule.home


def bound_at(
    node: tree_sitter.Node, name: bytes, tree: tree_sitter.Tree, source: bytes, cache: ScopeCache
) -> bool:
    """Whether ``name`` is bound where ``node`` lies (see the module's docstring)."""
    if name in BUILTIN_NAMES:
        return True
    scopes = cache.get(name)
    if scopes is None:
        scopes = cache[name] = _binding_scopes(tree, source, name)
    return any(scope in scopes for scope in visible_scopes(node))


def _binding_scopes(tree: tree_sitter.Tree, source: bytes, name: bytes) -> frozenset[int]:
    scopes = set()
    root = tree.root_node
    for start, whole in token_starts(source, name, MAX_NAME_LOOKUPS):
        at = root.descendant_for_byte_range(start, start + len(name)) if whole else None
        if at is not None and at.type == "identifier" and at.text == name and _binds_here(at):
            scopes.add(scope_of(at).id)
    return frozenset(scopes)


def _binds_here(node: tree_sitter.Node) -> bool:
    """Whether the identifier ``node`` is a name bound where it stands."""
    if is_binding(node):
        return True
    parent = node.parent
    if parent is None:
        return False
    if parent.type in ("function_definition", "class_definition", "named_expression"):
        return parent.child_by_field_name("name") == node
    if parent.type == "aliased_import":
        return parent.child_by_field_name("alias") == node
    if parent.type == "dotted_name" and parent.parent is not None and parent.parent.type in _IMPORTS:
        statement = parent.parent
        module = statement.child_by_field_name("module_name")
        return parent != module and (statement.type != "import_statement" or parent.children[0] == node)
    while parent is not None and parent.type in _PATTERNS:
        parent = parent.parent
    return parent is not None and parent.type in _TARGET_PARENTS


def scope_of(node: tree_sitter.Node) -> tree_sitter.Node:
    """The function, class body or module a binding at ``node`` belongs to (a definition's own name
    belongs to the scope around it)."""
    child, parent = node, node.parent
    while parent is not None:
        if (is_function(parent) or parent.type == "class_definition") and parent.child_by_field_name(
            "name"
        ) != child:
            return parent
        child, parent = parent, parent.parent
    return child


def visible_scopes(node: tree_sitter.Node) -> list[int]:
    """The scopes whose bindings ``node`` sees: the functions around it, the class whose body holds
    it directly (not through a function: a method does not see its class's names), the module."""
    found, in_function = [], False
    at: tree_sitter.Node | None = node
    last = node
    while at is not None:
        if is_function(at):
            found.append(at.id)
            in_function = True
        elif at.type == "class_definition" and not in_function:
            found.append(at.id)
        last, at = at, at.parent
    found.append(last.id)
    return found


def function_name(node: tree_sitter.Node) -> bytes | None:
    """The name of the innermost named function whose body holds ``node`` (None: none). A function's
    signature (its annotations, its defaults) is read in the scope around it, not in its body."""
    child, at = node, node.parent
    while at is not None:
        name = at.child_by_field_name("name") if is_function(at) else None
        if name is not None and at.child_by_field_name("body") == child:
            return name.text
        child, at = at, at.parent
    return None
