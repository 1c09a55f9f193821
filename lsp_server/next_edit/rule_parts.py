"""The two halves of a rule built from the nodes an edit replaced and the nodes it wrote: the old
nodes as a pattern whose parts the new text keeps are holes, and the new text as a template of those
holes (``edit_rules.py`` for one node, ``sibling_runs.py`` for a run of a list's children)."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from lsp_server.next_edit.edit_pattern import Branch, Hole, Leaf, Pattern, Template, fixed_words, holes_of
from lsp_server.next_edit.node_roles import (
    ARGUMENT_LISTS,
    INTERPOLATIONS,
    callee_name,
    compared_subject,
    is_name,
    is_named_value,
    receiver_kept,
)

if TYPE_CHECKING:
    import tree_sitter

_TARGETS = frozenset({"identifier", "attribute"})
"""Assignment targets a rule keeps fixed: a variable, an object's attribute."""
_STRINGS = frozenset({"string", "template_string", "interpreted_string_literal", "string_literal"})


def old_pattern(
    old: tree_sitter.Node, new: tree_sitter.Node, changed: tree_sitter.Node | None, numbers: dict[bytes, int]
) -> Pattern:
    """``old`` as the pattern of the rule ``old`` -> ``new`` (``edit_rules.py``): what the new text
    keeps, holes (numbered in ``numbers``), but the imported names (:func:`imported_names`), the
    variable assigned (:func:`assigned_name`), an argument list another call now holds
    (:func:`arguments_moved`), and, whole, the subject a comparison now expects another value of
    and a receiver given a member (``node_roles.compared_subject``, ``receiver_kept``); ``changed``,
    the smallest node the edit replaced, fixed, unless it was such a list's argument: then a hole of
    its kind (``check(□)`` -> ``check(f(□))``; a product converted, ``get(t * 1e6)`` -> ``get(int(t
    * 1e6))``, is no ``get(arw)``: arrow)."""
    moved = arguments_moved(old, new)
    kept = kept_below(new.children) - imported_names(old, new) - assigned_name(old, new) - moved
    told = [node for node in (compared_subject(old, new), receiver_kept(old, new)) if node is not None]
    kept -= kept_below(told)  # the subject compared, the receiver given a member: fixed whole
    parent = changed.parent if changed is not None else None
    wrapped = changed is not None and parent is not None and (parent.type, parent.text) in moved
    pattern = pattern_of(old, (old, None if wrapped else changed), kept, numbers)
    if wrapped and changed is not None and changed.text in numbers:
        pattern = typed_hole(pattern, numbers[changed.text], changed.type)
    return pattern


def pattern_of(
    node: tree_sitter.Node,
    fixed: tuple[tree_sitter.Node, tree_sitter.Node | None],
    kept: set[tuple[str, bytes | None]],
    numbers: dict[bytes, int],
) -> Pattern:
    """``node`` as a pattern: what ``kept`` holds a hole (the same text, the same hole; numbered in
    ``numbers``), except the nodes ``fixed``, names and keyword arguments; the rest as it is."""
    if (
        node not in fixed
        and node.is_named
        and (node.type, node.text) in kept
        and not is_name(node)
        and not is_named_value(node)
    ):
        text = node.text or b""
        return Hole(numbers.setdefault(text, len(numbers)))
    if node.child_count == 0 or _has_loose_text(node):
        return Leaf(node.type, node.text or b"")
    return Branch(node.type, tuple(pattern_of(child, fixed, kept, numbers) for child in node.children))


def result_of(node: tree_sitter.Node, numbers: dict[bytes, int], pattern: Pattern) -> Pattern | None:
    """The new text's ``node`` as a pattern (what it kept, the texts ``numbers`` holds, holes), when
    it is more specific than ``pattern``, the old text's: its fixed words hold all the pattern's and
    more (``sorted(list(□))`` for ``sorted(□)``), so a site of its shape was rewritten already. None
    otherwise: ``a.converter.x`` -> ``a.x`` makes every ``….x`` read as a result."""
    result = _kept_as_holes(node, numbers)
    words, pattern_words = Counter(fixed_words(result)), Counter(fixed_words(pattern))
    return result if words > pattern_words else None


def _kept_as_holes(node: tree_sitter.Node, numbers: dict[bytes, int]) -> Pattern:
    number = numbers.get(node.text or b"") if node.is_named and not is_name(node) else None
    if number is not None:
        return Hole(number)
    if node.child_count == 0 or _has_loose_text(node):
        return Leaf(node.type, node.text or b"")
    return Branch(node.type, tuple(_kept_as_holes(child, numbers) for child in node.children))


def _has_loose_text(node: tree_sitter.Node) -> bool:
    """Whether ``node`` holds text outside its children (a string's characters between its escape
    sequences): the pattern then keeps its whole text, not only its children."""
    text, at = node.text or b"", node.start_byte
    for child in node.children:
        if text[at - node.start_byte : child.start_byte - node.start_byte].strip():
            return True
        at = child.end_byte
    return bool(text[at - node.start_byte :].strip())


def template_of(
    nodes: list[tree_sitter.Node],
    within: tree_sitter.Node,
    span: tuple[int, int],
    numbers: dict[bytes, int],
    pattern: Pattern,
) -> Template:
    """The text of ``within`` from byte ``span[0]`` to ``span[1]`` (its children ``nodes`` lie there)
    with the holes' texts (each as often as the pattern holds it) as hole numbers."""
    uses = {number: _count(pattern, number) for number in holes_of(pattern)}
    spans: list[tuple[int, int, int]] = []
    stack = list(reversed(nodes))
    while stack:
        node = stack.pop()
        number = numbers.get(node.text or b"") if node.is_named and not is_name(node) else None
        if number is not None and uses.get(number, 0) > 0:
            uses[number] -= 1
            spans.append((node.start_byte, node.end_byte, number))
            continue
        stack.extend(reversed(node.children))
    parts: list[bytes | int] = []
    text, base = within.text or b"", within.start_byte
    at = span[0]
    for start, end, number in spans:
        if start > at:
            parts.append(text[at - base : start - base])
        parts.append(number)
        at = end
    if at < span[1]:
        parts.append(text[at - base : span[1] - base])
    return tuple(parts)


def quotes_around_holes(node: tree_sitter.Node, numbers: dict[bytes, int]) -> tuple[tuple[int, bytes], ...]:
    """Per hole whose text ``node`` (the new text) holds in a string's interpolation (``f"{□}"``, a
    template string's ``${□}``), the quote characters of that string: a site's text for that hole
    must not hold them."""
    quotes: dict[int, set[int]] = {}
    stack = [node]
    while stack:
        at = stack.pop()
        number = numbers.get(at.text or b"") if at.is_named and not is_name(at) else None
        if number is not None:
            outer, interpolated = at.parent, False
            while outer is not None and outer != node.parent:
                interpolated = interpolated or outer.type in INTERPOLATIONS
                if interpolated and outer.type in _STRINGS:
                    opening = outer.children[0].text if outer.children else outer.text
                    quotes.setdefault(number, set()).update(b for b in (opening or b"") if b in b"\"'`")
                outer = outer.parent
            continue
        stack.extend(at.children)
    return tuple((number, bytes(sorted(found))) for number, found in sorted(quotes.items()))


def unbracketed_holes(pattern: Pattern, template: Template) -> tuple[int, ...]:
    """The holes ``pattern`` holds alone in brackets (``(□)``) that ``template`` writes without an
    opening bracket before them (``content = (□)`` -> ``content = □``): a site whose text for one
    spans lines would break its statement there (two strings joined over lines, found in the isort
    history)."""
    held: set[int] = set()
    stack = [pattern]
    while stack:
        at = stack.pop()
        if isinstance(at, Branch):
            inner = at.children[1:-1]
            if len(inner) == 1 and isinstance(inner[0], Hole) and at.children[0] == Leaf("(", b"("):
                held.add(inner[0].number)
            stack.extend(at.children)
    bare = []
    for index, part in enumerate(template):
        before = template[index - 1] if index > 0 else b""
        if (
            isinstance(part, int)
            and part in held
            and not (isinstance(before, bytes) and before.rstrip().endswith(b"("))
        ):
            bare.append(part)
    return tuple(sorted(set(bare)))


def breaks_outside_holes(text: bytes, pattern: Pattern, holes: dict[int, bytes]) -> int:
    """The line breaks of ``text`` (what ``pattern`` matched, its holes ``holes``) outside the holes:
    its layout, which a rule's template writes as the example's was."""
    inside = sum(holes[number].count(b"\n") * _count(pattern, number) for number in holes_of(pattern))
    return text.count(b"\n") - inside


def hole_texts(numbers: dict[bytes, int]) -> dict[int, bytes]:
    """The text of each hole, from the numbers ``pattern_of`` gave the texts."""
    return {number: text for text, number in numbers.items()}


def _count(pattern: Pattern, number: int) -> int:
    if isinstance(pattern, Hole):
        return int(pattern.number == number)
    if isinstance(pattern, Leaf):
        return 0
    return sum(_count(child, number) for child in pattern.children)


def kept_below(nodes: list[tree_sitter.Node]) -> set[tuple[str, bytes | None]]:
    """What the new text keeps: the (type, text) of ``nodes`` and the named nodes below them, other
    than names (a kept name stays fixed in a rule, never a hole)."""
    found = set()
    stack = list(nodes)
    while stack:
        child = stack.pop()
        if child.is_named and not is_name(child):
            found.add((child.type, child.text))
        stack.extend(child.children)
    return found


def imported_names(old: tree_sitter.Node, new: tree_sitter.Node) -> set[tuple[str, bytes | None]]:
    """The names ``old``, a ``from … import …`` line, imports, when ``new`` keeps its module: kept,
    they stay fixed in the rule and its module is the hole, so a name added to the line is added to
    its siblings, the lines importing the same names from another module (``from typing_extensions
    import Self`` and ``from typing import Self`` in a version check). Nothing for other nodes."""
    if old.type != "import_from_statement" or new.type != old.type:
        return set()
    module, new_module = old.child_by_field_name("module_name"), new.child_by_field_name("module_name")
    if module is None or new_module is None or module.text != new_module.text:
        return set()
    found = set()
    for name in old.children_by_field_name("name"):
        found |= {(name.type, name.text)} | {(child.type, child.text) for child in name.named_children}
    return found


def assigned_name(old: tree_sitter.Node, new: tree_sitter.Node) -> set[tuple[str, bytes | None]]:
    """The variable or attribute ``old``, an assignment, writes, when ``new`` writes it too: kept, it
    stays fixed in the rule, which is about that variable's value (``machine = parts[-1]`` ->
    ``machine = normalize_isa(parts[-1])`` repeats where ``machine`` is assigned, not at every
    assignment, found in the tox history; ``self.params = params or []`` alike). Nothing for other
    nodes."""
    target, other = (
        node.child_by_field_name("left") if node.type == "assignment" else None for node in [old, new]
    )
    if target is None or other is None or target.type not in _TARGETS or other.text != target.text:
        return set()
    return {(target.type, target.text)}


def assigned_variable(node: tree_sitter.Node) -> bytes | None:
    """The plain name the assignment ``node`` writes (None: another node, or another target)."""
    target = node.child_by_field_name("left") if node.type == "assignment" else None
    return target.text if target is not None and target.type == "identifier" else None


def arguments_moved(old: tree_sitter.Node, new: tree_sitter.Node) -> set[tuple[str, bytes | None]]:
    """The argument lists of ``old``'s calls that ``new`` holds only as another call's (``get(t *
    1e6)`` -> ``get(int(t * 1e6))``: ``(t * 1e6)`` is now ``int``'s): not kept, so the rule keeps
    the call's own list and makes its arguments the holes (``get(□)`` -> ``get(int(□))``), where a
    hole for the list would wrap every call's whole list (``get(int(t, tzinfo=tz))``, found in the
    arrow history)."""
    callees: dict[tuple[str, bytes | None], set[bytes | None]] = {}
    for node in _descendants(new):
        if node.type in ARGUMENT_LISTS and node.parent is not None:
            callees.setdefault((node.type, node.text), set()).add(callee_name(node.parent))
    return {
        (node.type, node.text)
        for node in _descendants(old)
        if node.type in ARGUMENT_LISTS
        and node.parent is not None
        and (node.type, node.text) in callees
        and callee_name(node.parent) not in callees[(node.type, node.text)]
    }


def typed_hole(pattern: Pattern, number: int, kind: str) -> Pattern:
    """``pattern`` with hole ``number`` matching nodes of type ``kind`` only."""
    if isinstance(pattern, Hole):
        return Hole(number, kind) if pattern.number == number else pattern
    if isinstance(pattern, Branch):
        return Branch(pattern.type, tuple(typed_hole(child, number, kind) for child in pattern.children))
    return pattern


def _descendants(node: tree_sitter.Node) -> list[tree_sitter.Node]:
    found, stack = [], [node]
    while stack:
        at = stack.pop()
        found.append(at)
        stack.extend(at.children)
    return found
