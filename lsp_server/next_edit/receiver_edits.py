"""A receiver replaced under a member the edit keeps (``importlib_metadata.EntryPoint`` ->
``importlib.metadata.EntryPoint``): the rule is about the receiver, so the member becomes a hole and
the change reaches the receiver's other members (``importlib_metadata.distributions()``), where a
rule keeping the member fixed, as a name, would wait for a second example to tell it varies. Found in
the flake8 history; such a rule's node has any role (``ANY_ROLE``). A receiver wrapped, not replaced
(``value.replace`` -> ``str(value).replace``), is a conversion chosen for that use of a value, not
for its other uses (``value.startswith``, found in the isort history): the member stays fixed."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from lsp_server.next_edit.edit_pattern import Branch, Hole, Leaf, Pattern, Template
from lsp_server.next_edit.rule_parts import hole_texts

if TYPE_CHECKING:
    import tree_sitter

MEMBER_ACCESSES = {
    "attribute": ("object", "attribute"),  # Python
    "member_expression": ("object", "property"),  # JavaScript, TypeScript
}
"""Per member access node: the fields of its receiver and of its member."""
ANY_ROLE = "any"
"""The role of such a rule's node: the receiver is replaced however the member is used (read,
called, written), where another rule's node keeps its role (``node_roles.role_of``)."""


def member_hole(
    old: tree_sitter.Node,
    new: tree_sitter.Node,
    changed: tree_sitter.Node | None,
    rule: tuple[Pattern, Template],
    numbers: dict[bytes, int],
) -> tuple[Pattern, Template] | None:
    """The pattern and template of ``rule`` (``old`` -> ``new``) with the kept member a hole, when
    the edit replaced ``old``'s receiver (``changed``) and kept its member; None otherwise.
    ``numbers`` (the holes' texts) gains the member's text."""
    fields = MEMBER_ACCESSES.get(old.type)
    if fields is None or new.type != old.type or changed is None:
        return None
    receiver, member = old.child_by_field_name(fields[0]), old.child_by_field_name(fields[1])
    new_member = new.child_by_field_name(fields[1])
    pattern, template = rule
    if receiver != changed or member is None or new_member is None or member.text != new_member.text:
        return None
    new_receiver = new.child_by_field_name(fields[0])
    if new_receiver is None or _wraps(receiver.text or b"", new_receiver.text or b""):
        return None
    if not isinstance(pattern, Branch) or pattern.children[-1] != Leaf(member.type, member.text or b""):
        return None
    text = member.text or b""
    if text in numbers:
        return None  # the member's text is a hole already (a receiver of the same text)
    number = numbers[text] = len(numbers)
    split = _split(template, new_member.start_byte - new.start_byte, len(text), numbers, number)
    if split is None:
        del numbers[text]
        return None
    return Branch(pattern.type, (*pattern.children[:-1], Hole(number))), split


def _wraps(old: bytes, new: bytes) -> bool:
    """Whether ``new`` holds ``old`` whole, as its own tokens (``str(value)`` holds ``value``;
    ``importlib.metadata`` does not hold ``importlib_metadata``)."""
    return re.search(rb"(?<![\w.])" + re.escape(old) + rb"(?!\w)", new) is not None


def _split(
    template: Template, at: int, length: int, numbers: dict[bytes, int], number: int
) -> Template | None:
    """``template`` with the bytes ``at``..``at + length`` of the text it renders (holes as their
    texts) made hole ``number``; None when they do not lie in one of its written parts."""
    texts = hole_texts(numbers)
    parts: list[bytes | int] = []
    offset, done = 0, False
    for part in template:
        size = len(texts.get(part, b"")) if isinstance(part, int) else len(part)
        if isinstance(part, bytes) and not done and offset <= at and at + length <= offset + size:
            start = at - offset
            parts += [piece for piece in (part[:start],) if piece]
            parts.append(number)
            parts += [piece for piece in (part[start + length :],) if piece]
            done = True
        else:
            parts.append(part)
        offset += size
    return tuple(parts) if done else None
