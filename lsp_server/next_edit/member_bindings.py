"""Whether a method a rule's replacement calls on ``self`` (or ``cls``) exists where a site lies:
a rule that makes ``assert res == expected`` call ``self.assert_equal_same_tz(res, expected)`` in a
test class is not offered in the file's other test classes, which have no such method; the user
writes it in the example's class (read in a held-out history, such a rule was wrong at 26 of the 30
places it was accepted at).

A class has a method when its body defines it: a method (decorated or not), a name assigned in
the class body, or ``self.name`` assigned in one of its methods. Where the example's class has it, a
site lies in a class that has it too, or in a subclass of the example's class (named in its bases).
Where the example's class lacks it, the user is about to write it there, or the class inherits it:
a site lies in the example's class, in a class that has it, or, when the example's class names a
base other than ``object`` (``unittest.TestCase``: ``self.assertEqual`` is inherited), in a class of
the same bases. A site in no class has no ``self`` to call it on. An attribute read as a value
(``limiter=self._limiter``) is not checked: it is state, which the user may give each class (read
in another held-out history, such an attribute went into two classes in one commit). Bounded: at
most ``MAX_ATTRIBUTE_LOOKUPS`` occurrences of a name are looked at per class (a byte search finds
them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lsp_server.next_edit.edit_pattern import token_starts

if TYPE_CHECKING:
    import tree_sitter

MAX_ATTRIBUTE_LOOKUPS = 2_000
"""Occurrences of an attribute's name looked at per class to tell whether the class defines it."""
RECEIVERS = frozenset({b"self", b"cls"})
_NO_BASES = frozenset({b"", b"()", b"(object)"})

ClassCache = dict[tuple[int, bytes], bool]
"""Per tree: (a class's node id, an attribute's name) -> whether the class defines it."""


@dataclass(frozen=True)
class MemberHome:
    """The methods a rule's replacement calls on ``self`` of its own, and where the example lay:
    ``cls`` its class's name, ``bases`` its class's bases as written when some method is not defined
    in it and may be inherited (None: not inherited)."""

    names: tuple[bytes, ...]
    cls: bytes | None
    bases: bytes | None


def members_called(node: tree_sitter.Node, holes: dict[bytes, int]) -> set[bytes]:
    """The names ``node`` calls as ``self.name(...)`` or ``cls.name(...)``, outside its sub-trees whose
    text ``holes`` holds."""
    found: set[bytes] = set()
    stack = [node]
    while stack:
        at = stack.pop()
        if at is not node and at.is_named and (at.text or b"") in holes:
            continue
        call = at.parent
        if at.type == "attribute" and call is not None and call.child_by_field_name("function") == at:
            receiver, name = at.child_by_field_name("object"), at.child_by_field_name("attribute")
            if receiver is not None and receiver.text in RECEIVERS and name is not None and name.text:
                found.add(name.text)
        stack.extend(at.children)
    return found


def member_home(names: tuple[bytes, ...], node: tree_sitter.Node) -> MemberHome | None:
    """Where the methods ``names`` are to be called, from the example ``node`` (None: no names, or
    the example lies in no class)."""
    cls = class_around(node)
    if not names or cls is None:
        return None
    cache: ClassCache = {}
    bases = _bases(cls)
    lacks = any(not defines(cls, name, cache) for name in names)
    inherited = bases if lacks and bases not in _NO_BASES else None
    return MemberHome(names, _name(cls), inherited)


def members_reachable(home: MemberHome | None, node: tree_sitter.Node, cache: ClassCache) -> bool:
    """Whether each method of ``home`` can be called on ``self`` at the site ``node``."""
    if home is None:
        return True
    cls = class_around(node)
    if cls is None:
        return False
    if home.cls is not None and _name(cls) == home.cls:
        return True
    bases = _bases(cls)
    if home.bases is not None and bases == home.bases:
        return True
    if home.cls is not None and home.cls in re.findall(rb"\w+", bases):
        return True  # a subclass of the example's class (its bases named plainly: ``(Base)``)
    return all(defines(cls, name, cache) for name in home.names)


def merged(first: MemberHome | None, second: MemberHome | None) -> MemberHome | None:
    """The home of a rule two examples agree on: the methods both call, their class and bases
    where the two share them."""
    if first is None or second is None:
        return None
    names = tuple(sorted(set(first.names) & set(second.names)))
    if not names:
        return None
    return MemberHome(
        names,
        first.cls if first.cls == second.cls else None,
        first.bases if first.bases == second.bases else None,
    )


def class_around(node: tree_sitter.Node) -> tree_sitter.Node | None:
    """The innermost class whose body holds ``node`` (through its methods)."""
    at = node.parent
    while at is not None and at.type != "class_definition":
        at = at.parent
    return at


def defines(cls: tree_sitter.Node, name: bytes, cache: ClassCache) -> bool:
    """Whether the class ``cls`` defines the attribute ``name`` (see the module's docstring)."""
    key = (cls.id, name)
    if key not in cache:
        body = cls.child_by_field_name("body")
        found = False
        if body is not None:
            for start, whole in token_starts(body.text or b"", name, MAX_ATTRIBUTE_LOOKUPS):
                begin = body.start_byte + start
                at = cls.descendant_for_byte_range(begin, begin + len(name))
                if whole and at is not None and at.type == "identifier" and _defined_at(at, cls):
                    found = True
                    break
        cache[key] = found
    return cache[key]


def _defined_at(node: tree_sitter.Node, cls: tree_sitter.Node) -> bool:
    """Whether the identifier ``node`` in ``cls``'s body defines an attribute of the class."""
    parent = node.parent
    if parent is None:
        return False
    if parent.type == "function_definition" and parent.child_by_field_name("name") == node:
        return class_around(parent) == cls and _directly_in_class(parent)
    if parent.type == "attribute":
        receiver = parent.child_by_field_name("object")
        named = parent.child_by_field_name("attribute") == node
        if not named or receiver is None or receiver.text not in RECEIVERS:
            return False
        node = parent
        parent = node.parent
        if parent is None or class_around(parent) != cls:
            return False
    elif not _directly_in_class(node) or class_around(node) != cls:
        return False  # a name assigned in a function, or in a class nested in this one
    return (
        parent is not None
        and parent.type in ("assignment", "augmented_assignment")
        and (parent.child_by_field_name("left") == node)
    )


def _directly_in_class(node: tree_sitter.Node) -> bool:
    """Whether ``node`` lies in a class body outside any function."""
    at = node.parent
    while at is not None and at.type not in ("class_definition", "function_definition", "lambda"):
        at = at.parent
    return at is not None and at.type == "class_definition"


def _bases(cls: tree_sitter.Node) -> bytes:
    bases = cls.child_by_field_name("superclasses")
    return b"".join((bases.text or b"").split()) if bases is not None else b""


def _name(cls: tree_sitter.Node) -> bytes | None:
    name = cls.child_by_field_name("name")
    return name.text if name is not None else None
