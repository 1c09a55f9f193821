"""Which identifiers in one syntax tree refer to the same symbol as a given one, by the shape of the
tree (no type information): a function's parameters and local assignments are its own, a name
bound nowhere in an enclosing function is the module's, and an attribute or member name is a member.

Works across tree-sitter grammars by node-type conventions (``*identifier`` leaves, ``*function*`` /
``*method*`` / ``lambda`` definitions with a ``parameters`` field, ``*parameter*`` nodes,
``*assignment*`` / ``*declarator*`` bindings); tested on Python.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tree_sitter

# Fields whose identifier is a member name (``obj.name``), not a variable.
_MEMBER_FIELDS = ("attribute", "property", "field")
_MEMBER_PARENTS = ("attribute", "member_expression", "field_expression", "selector_expression")
# Fields of a parameter or binding node that hold a value or a type, not the bound name.
_NOT_NAME_FIELDS = ("value", "type", "default", "right")
TARGET_PATTERNS = frozenset(
    {"pattern_list", "tuple_pattern", "list_pattern", "tuple", "list", "list_splat_pattern"}
)
"""Nodes a bound name may lie inside on its way up to what binds it (``a, (b, *c) = ...``)."""
_BINDERS = ("assignment", "declarator", "for_statement", "for_in_clause")


def is_identifier(node: tree_sitter.Node) -> bool:
    """A leaf that names something (``identifier``, ``property_identifier``, ...)."""
    return node.child_count == 0 and (node.type.endswith("identifier") or node.type == "name")


def identifier_covering(tree: tree_sitter.Tree, start: int, end: int) -> tree_sitter.Node | None:
    """The identifier whose bytes hold ``start``..``end`` (an empty span may touch its end)."""
    spans = [(start, end)] + ([(start - 1, start)] if start == end and start > 0 else [])
    for low, high in spans:
        node = tree.root_node.descendant_for_byte_range(low, high)
        if node is not None and is_identifier(node) and node.start_byte <= start and end <= node.end_byte:
            return node
    return None


def is_function(node: tree_sitter.Node) -> bool:
    """A definition that opens a scope of its own: a function, method or lambda."""
    kind = node.type
    if "call" in kind or "invocation" in kind or "type" in kind:
        return False
    return "function" in kind or "method" in kind or kind == "lambda"


def is_member_name(node: tree_sitter.Node) -> bool:
    """``name`` in ``obj.name`` (or the grammar's member access)."""
    parent = node.parent
    if parent is None or parent.type not in _MEMBER_PARENTS:
        return False
    return any(parent.child_by_field_name(field) == node for field in _MEMBER_FIELDS)


def _is_named_field(node: tree_sitter.Node, parent: tree_sitter.Node) -> bool:
    return not any(parent.child_by_field_name(field) == node for field in _NOT_NAME_FIELDS)


def is_parameter_name(node: tree_sitter.Node) -> bool:
    """The name a parameter binds (not its default value or its type)."""
    parent = node.parent
    while parent is not None and "parameter" in parent.type:
        if not _is_named_field(node, parent):
            return False
        if parent.parent is not None and is_function(parent.parent):
            return True
        node, parent = parent, parent.parent
    return False


def is_binding(node: tree_sitter.Node) -> bool:
    """A parameter name, or a target of an assignment, declaration or loop (``x = ...``, ``let x``,
    ``for x in ...``; through tuple patterns such as ``a, b = ...``)."""
    if is_parameter_name(node):
        return True
    target, parent = node, node.parent
    while parent is not None and parent.type in TARGET_PATTERNS:
        target, parent = parent, parent.parent
    if parent is None or not any(kind in parent.type for kind in _BINDERS):
        return False
    return target in (parent.child_by_field_name("left"), parent.child_by_field_name("name"))


def enclosing_functions(node: tree_sitter.Node) -> list[tree_sitter.Node]:
    """The functions around ``node``, innermost first; a function's own name belongs outside it."""
    found = []
    child, parent = node, node.parent
    while parent is not None:
        if is_function(parent) and parent.child_by_field_name("name") != child:
            found.append(parent)
        child, parent = parent, parent.parent
    return found


def identifiers_named(root: tree_sitter.Node, name: bytes) -> Iterator[tree_sitter.Node]:
    """Every identifier under ``root`` whose text is ``name``, in document order."""
    cursor = root.walk()
    while True:
        node = cursor.node
        if node is not None and is_identifier(node) and node.text == name:
            yield node
        if cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent() or cursor.node == root:
                return


def binds(function: tree_sitter.Node, name: bytes, cache: dict[int, bool] | None = None) -> bool:
    """Whether ``function`` binds ``name`` itself (not only in a function nested in it); ``cache``
    keeps answers by function for one name."""
    if cache is not None and function.id in cache:
        return cache[function.id]
    answer = any(
        is_binding(node) and enclosing_functions(node)[:1] == [function]
        for node in identifiers_named(function, name)
    )
    if cache is not None:
        cache[function.id] = answer
    return answer


def binding_scope(node: tree_sitter.Node, cache: dict[int, bool] | None = None) -> tree_sitter.Node | None:
    """The function whose local ``node`` is (None: a module-level name)."""
    name = node.text or b""
    for function in enclosing_functions(node):
        if binds(function, name, cache):
            return function
    return None


def same_symbol(node: tree_sitter.Node, root: tree_sitter.Node) -> list[tree_sitter.Node]:
    """The identifiers under ``root`` that refer to the symbol ``node`` names, ``node`` included,
    in document order: inside its function for a local, in the module (less the functions that bind
    the name again) for a module-level name, every member of that name for a member."""
    name = node.text or b""
    if _is_keyword_name(node):
        return [node]  # a keyword argument names the callee's parameter, no variable of this scope
    if is_member_name(node) or _is_class_member_definition(node):
        return [
            other
            for other in identifiers_named(root, name)
            if other == node or is_member_name(other) or _is_class_member_definition(other)
        ]
    cache: dict[int, bool] = {}
    scope = binding_scope(node, cache)
    return [
        other
        for other in identifiers_named(scope if scope is not None else root, name)
        if other == node
        or (
            not is_member_name(other) and not _is_keyword_name(other) and binding_scope(other, cache) == scope
        )
    ]


def _is_keyword_name(node: tree_sitter.Node) -> bool:
    parent = node.parent
    return (
        parent is not None
        and "keyword_argument" in parent.type
        and parent.child_by_field_name("name") == node
    )


def _is_class_member_definition(node: tree_sitter.Node) -> bool:
    """The name of a function defined directly in a class body (a method)."""
    parent = node.parent
    if parent is None or not is_function(parent) or parent.child_by_field_name("name") != node:
        return False
    container = parent.parent
    if container is not None and container.type == "decorated_definition":
        container = container.parent
    owner = container.parent if container is not None else None
    return owner is not None and "class" in owner.type


def definition_scope(node: tree_sitter.Node) -> str | None:
    """For a function's definition: the kind of scope the function is defined in, "class" (a method),
    "function" (a nested function) or "module". None for any other node."""
    if not is_function(node):
        return None
    at = node.parent
    while at is not None:
        if at.child_by_field_name("name") is not None and (is_function(at) or "class" in at.type):
            return "function" if is_function(at) else "class"
        at = at.parent
    return "module"


_EXPLICIT_RETURNS = frozenset({"function_definition", "function_declaration", "method_definition"})
"""Definitions of languages whose functions return only by a ``return`` statement (not Rust's last
expression)."""


def adds_return_type(old: tree_sitter.Node, new: tree_sitter.Node) -> bool:
    """Whether an edit wrote a return type on a function's definition (``old`` -> ``new``) that had none."""
    written = new.child_by_field_name("return_type")
    return written is not None and old.child_by_field_name("return_type") is None


def returns_of(function: tree_sitter.Node) -> str | None:
    """How the function ``function`` defines gives its result: "yields" (a generator), "value" (a
    ``return`` of a value), "raises" (no return, its last statement a ``raise``: an abstract method,
    whose result its overrides give), "nothing"; None for a node that is no such definition. Nested
    functions, lambdas and classes are their own."""
    body = function.child_by_field_name("body") if function.type in _EXPLICIT_RETURNS else None
    if body is None:
        return None
    found = "nothing"
    stack = [body]
    while stack:
        at = stack.pop()
        if at.type in ("yield", "yield_expression"):
            return "yields"
        if at.type == "return_statement" and at.named_child_count:
            found = "value"
        stack.extend(child for child in at.children if not is_function(child) and "class" not in child.type)
    last = body.named_children[-1] if body.named_children else None
    return "raises" if found == "nothing" and last is not None and last.type == "raise_statement" else found


def parameter_names(node: tree_sitter.Node, start: int, end: int) -> set[bytes]:
    """The names bound by the parameters of the function ``node`` defines (or whose parameter list, or
    a parameter of it, ``node`` is) that lie in bytes ``start``..``end``; empty for any other node."""
    function = defined_function(node)
    parameters = function.child_by_field_name("parameters") if function is not None else None
    names: set[bytes] = set()
    stack = [parameters] if parameters is not None else []
    while stack:
        at = stack.pop()
        if is_identifier(at) and at.text and start <= at.start_byte < end and is_parameter_name(at):
            names.add(at.text)
        stack.extend(child for child in at.children if not is_function(child))
    return names


def defined_function(node: tree_sitter.Node) -> tree_sitter.Node | None:
    """The function ``node`` defines, or whose parameter list (or a parameter of it) ``node`` is."""
    for _ in range(3):
        if is_function(node):
            return node
        parent = node.parent
        if parent is None:
            return None
        if parent.child_by_field_name("parameters") != node and not _is_parameter_list(parent):
            return None
        node = parent
    return None


def _is_parameter_list(node: tree_sitter.Node) -> bool:
    parent = node.parent
    return parent is not None and parent.child_by_field_name("parameters") == node
