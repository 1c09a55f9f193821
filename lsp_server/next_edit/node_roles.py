"""What a syntax node's place says about it, across tree-sitter grammars by their field names: a
name the rule keeps fixed (what is called, a member, a keyword), the receiver of a member access, the
call whose arguments hold it, whether a call is awaited."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tree_sitter

ARGUMENT_LISTS = frozenset({"argument_list", "arguments"})
CALLS = frozenset({"call", "call_expression"})
_AWAITED = frozenset({"await", "await_expression"})
_ANNOTATION_FIELDS = frozenset({"type", "return_type"})
_TYPED_PARAMETERS = frozenset({"typed_parameter", "typed_default_parameter"})
MAX_ANNOTATION_DEPTH = 8
"""Ancestors climbed to find the annotation a node lies in (types nest: ``Optional[Dict[str, int]]``)."""
_WRITES = frozenset(
    {
        "assignment",
        "augmented_assignment",
        "assignment_expression",
        "augmented_assignment_expression",
        "for_statement",
        "for_in_statement",
    }
)
PRIMARY = frozenset(
    {"call", "attribute", "subscript", "call_expression", "member_expression", "subscript_expression"}
)
"""Expressions a member access can follow as they are, with no brackets (not ``not x``, ``a or b``)."""
LITERALS = frozenset({"string", "integer", "float", "number", "string_literal", "integer_literal"})
"""Node types of a literal value (Python's, JavaScript's, Rust's)."""
INTERPOLATIONS = frozenset({"interpolation", "template_substitution"})
_COMPARISONS = frozenset({"comparison_operator", "binary_expression"})
_COMPARED_BY = frozenset({"==", "!=", "===", "!==", "<", ">", "<=", ">="})
_MEMBERS = frozenset({"attribute", "member_expression", "field_expression"})
_SUBSCRIPTS = frozenset({"subscript", "subscript_expression", "index_expression"})
# Fields whose leaf is a name the rule keeps fixed (the callee, a member, a keyword), not a hole.
_NAME_FIELDS = frozenset({"function", "attribute", "property", "field", "name", "type"})


def field_of(node: tree_sitter.Node) -> str | None:
    """The field name node holds in its parent, if any."""
    parent = node.parent
    if parent is None:
        return None
    for index, child in enumerate(parent.children):
        if child == node:
            return parent.field_name_for_child(index)
    return None


def is_name(node: tree_sitter.Node) -> bool:
    """What is called (``f`` in ``f(x)``, ``obj.f`` in ``obj.f(x)``, whose receiver may still be a
    hole), or a leaf that names what is read or passed (``size`` in ``obj.size``, ``key`` in
    ``key=value``), or a generic type's name (``Generator`` in ``Generator[str, None, None]``, as a
    callee is its call's): fixed in a rule, never a hole."""
    field = field_of(node)
    if node.type == "identifier" and node.parent is not None and node.parent.type == "generic_type":
        return node.prev_sibling is None
    return field == "function" or (node.child_count == 0 and field in _NAME_FIELDS)


def annotated_name(node: tree_sitter.Node) -> tuple[str, bytes] | None:
    """What the type annotation holding ``node`` annotates, as (kind, name): ("parameter", ``x``)
    for ``Optional[int]`` in ``def f(x: Optional[int])``, ("declaration", ``x``) in ``x:
    Optional[int] = None`` or a class's field, ("return", the function's name) for its return type;
    None outside annotations. A type is changed for what it annotates: ``Optional`` alone would match
    every optional type. A typed parameter is its own name's (``path: str`` -> ``path: Path | str`` is
    no change of ``base: str``) and no field's of that name (a field made required keeps its factory's
    optional parameter, found in the twine history); an attribute annotated is its member's
    (``_tokdict`` in ``self._tokdict: dict[str, Any]``)."""
    if node.type in _TYPED_PARAMETERS:
        name = node.named_children[0] if node.named_children else None
        return ("parameter", name.text or b"") if name is not None and name.type == "identifier" else None
    at = node
    for _ in range(MAX_ANNOTATION_DEPTH):
        parent = at.parent
        if parent is None:
            return None
        field = field_of(at)
        if field in _ANNOTATION_FIELDS:
            named = next(
                (
                    found
                    for found in (
                        parent.child_by_field_name("name"),
                        parent.child_by_field_name("left"),
                        parent.child_by_field_name("pattern"),
                        next((child for child in parent.children if child.is_named), None),
                    )
                    if found is not None
                ),
                None,
            )
            if named is not None and named.type in ("attribute", "member_expression"):
                named = named.named_children[-1] if named.named_children else None  # ``self._tokdict``
            if named is None or named.child_count != 0 or named == at:
                return None
            kind = "return" if field == "return_type" else "declaration"
            return ("parameter" if parent.type in _TYPED_PARAMETERS else kind), named.text or b""
        at = parent
    return None


def is_named_value(node: tree_sitter.Node) -> bool:
    """A keyword argument or a parameter's default (``index=True``): its name says which argument it
    is, so a rule keeps it and only its value may vary (``Column(Integer, primary_key=True,
    index=True)`` is no ``Column(String, unique=True, index=True)``)."""
    name = node.child_by_field_name("name")
    return name is not None and name.child_count == 0 and node.child_by_field_name("value") is not None


def replaces_a_value(old: tree_sitter.Node, new: tree_sitter.Node) -> bool:
    """Whether ``old`` is a literal given as a value (a keyword argument's, a dictionary entry's or a
    parameter's default, or what an assignment writes: ``"text/plain"`` in ``type="text/plain"``) and
    ``new`` another literal of its kind, with nothing interpolated; or a comparison now expecting
    another literal of its subject (:func:`compared_subject`). A key or an index (``d["colour"]``)
    names what it reads instead."""
    if compared_subject(old, new) is not None:
        return True
    field = field_of(old)
    parent_type = old.parent.type if old.parent is not None else ""
    given = field == "value" or (field == "right" and parent_type in _WRITES)
    literal = old.type in LITERALS and new.type == old.type
    return given and literal and not any(child.type in INTERPOLATIONS for child in new.children)


def is_key(node: tree_sitter.Node) -> bool:
    """Whether ``node`` is a dictionary entry's key or a subscript's index (``"colour"`` in
    ``{"colour": 1}`` or ``d["colour"]``): it names what is stored or read, where the same literal
    given as a value (``replaces_a_value``) is data."""
    parent_type = node.parent.type if node.parent is not None else ""
    return field_of(node) in ("key", "subscript", "index") or (
        parent_type in _SUBSCRIPTS and node.prev_sibling is not None and node.prev_sibling.type == "["
    )


def compared_subject(old: tree_sitter.Node, new: tree_sitter.Node) -> tree_sitter.Node | None:
    """The operand the comparison ``old`` checks, where ``new`` checks it against another literal of
    the same kind by the same operator (``url_o.call_count == 2`` -> ``url_o.call_count == 1``): the
    value expected of that subject, chosen for that test as a value given is for its place
    (``replaces_a_value``), and told by the subject, not by a literal as common as ``2`` (other
    subjects' counts stayed 2 in the virtualenv history). None for other edits."""
    if old.type not in _COMPARISONS or new.type != old.type or old.child_count != 3 or new.child_count != 3:
        return None
    operator = old.children[1].type
    if operator not in _COMPARED_BY or new.children[1].type != operator:
        return None
    left, right, new_left, new_right = old.children[0], old.children[2], new.children[0], new.children[2]
    pairs = ((left, right, new_left, new_right), (right, left, new_right, new_left))
    for subject, value, kept, other in pairs:
        if subject.text == kept.text and subject.type not in LITERALS and value.type in LITERALS:
            if other.type == value.type and other.text != value.text:
                return subject
    return None


def receiver_kept(old: tree_sitter.Node, new: tree_sitter.Node) -> tree_sitter.Node | None:
    """The receiver of the member access ``old`` where ``new`` reaches the same member through a new
    member of that receiver (``sock.send`` -> ``sock.remote.send``): the new member is that
    object's, so another receiver (``inst.send``, another object in waitress's tests) is no site.
    None for other edits."""
    if old.type not in _MEMBERS or new.type != old.type:
        return None
    receiver, inner = _object_of(old), _object_of(new)
    if receiver is None or inner is None or inner.type != old.type or _member_of(old) != _member_of(new):
        return None
    inner_receiver = _object_of(inner)
    return receiver if inner_receiver is not None and inner_receiver.text == receiver.text else None


def _object_of(node: tree_sitter.Node) -> tree_sitter.Node | None:
    return node.child_by_field_name("object") or node.child_by_field_name("value")


def _member_of(node: tree_sitter.Node) -> bytes | None:
    for field in ("attribute", "property", "field"):
        member = node.child_by_field_name(field)
        if member is not None:
            return member.text
    return None


def role_of(node: tree_sitter.Node) -> str | None:
    """Where the node's place makes another shape of it: "function" for the called function,
    "receiver" for the object of a member access (``obj`` in ``obj.size``), "target" for what an
    assignment or a loop writes (``obj.size = 1``: no read of ``obj.size``); else None."""
    field = field_of(node)
    if field == "function":
        return field
    parent_type = node.parent.type if node.parent is not None else ""
    if field == "left" and parent_type in _WRITES:
        return "target"
    receiver = field in ("object", "operand") or (field == "value" and parent_type == "field_expression")
    return "receiver" if receiver else None


def callee_name(call: tree_sitter.Node) -> bytes | None:
    """The last name of a call's function (``fetch`` for ``client.fetch(...)``)."""
    function = call.child_by_field_name("function")
    while function is not None and function.child_count > 0:
        named = [child for child in function.children if child.is_named]
        function = named[-1] if named else None
    return function.text if function is not None else None


def callee_around(node: tree_sitter.Node) -> bytes | None:
    """The name of the call in whose arguments ``node`` lies directly, if it does."""
    parent = node.parent
    if parent is None or parent.type not in ARGUMENT_LISTS or parent.parent is None:
        return None
    return callee_name(parent.parent) if parent.parent.type in CALLS else None


def is_awaited(node: tree_sitter.Node) -> bool:
    """A call already awaited (``await f()``, Rust's ``f().await``)."""
    return node.parent is not None and node.parent.type in _AWAITED
