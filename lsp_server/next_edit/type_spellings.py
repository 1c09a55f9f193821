"""Whether an edit inside a type annotation only spells the same type another way: a name qualified or
unqualified (``Iterator[bytes]`` -> ``typing.Iterator[bytes]``), ``Optional``/``Union`` written with
``|`` (``Union[A, B]`` -> ``A | B``, ``Optional[T]`` -> ``T | None``), a ``typing`` alias replaced
by its builtin (``List[int]`` -> ``list[int]``), a generic's trailing ``None`` arguments left to
their defaults (``Generator[str, None, None]`` -> ``Generator[str]``). Such a change is a style the
user applies wherever the type is written, unlike a change of what one name's type means
(``Optional[Engine]`` -> ``Union[Engine, Literal[False], None]``), which ``edit_rules.py`` ties to
the name annotated. Nor does a change that replaces a type of the project's own (a capitalised name
neither builtin nor ``typing``'s: ``Callable[[Any, ISortPrettyPrinter], str]`` -> ``Callable[[Any,
Config, int], str]``, found in the isort history): it is about that type, wherever it is written."""

from __future__ import annotations

import builtins
import re
import typing
from collections import Counter

_BUILTIN_ALIASES = {
    b"List": b"list",
    b"Dict": b"dict",
    b"Tuple": b"tuple",
    b"Set": b"set",
    b"FrozenSet": b"frozenset",
    b"Type": b"type",
}
_WORD = re.compile(rb"([A-Za-z_]\w*)(\s*\.)?")
_TRAILING_NONES = re.compile(rb"(?:\s*,\s*None)+(?=\s*\])")
_LIBRARY_TYPES = frozenset(name.encode() for name in dir(builtins) + dir(typing))


def _meaning(text: bytes) -> Counter[bytes]:
    """The words of a type's text that say what it means: qualifiers (a word before a dot) left
    out, ``Union`` left out, ``Optional`` counted as ``None``, ``typing`` aliases as their builtins."""
    words: Counter[bytes] = Counter()
    for found in _WORD.finditer(text):
        word = found.group(1)
        if found.group(2) or word == b"Union":
            continue
        words[b"None" if word == b"Optional" else _BUILTIN_ALIASES.get(word, word)] += 1
    return words


def same_type_respelled(old: bytes, new: bytes) -> bool:
    """Whether ``new`` writes the type ``old`` writes, only spelled otherwise (see the module's
    docstring); False when the texts are the same."""
    if old == new:
        return False
    defaulted = b"".join(_TRAILING_NONES.sub(b"", old).split())
    return _meaning(old) == _meaning(new) or (
        defaulted != b"".join(old.split()) and defaulted == b"".join(new.split())
    )


def replaces_own_type(old: bytes, new: bytes) -> bool:
    """Whether ``old`` names a type of the project's own (see the module's docstring) that ``new``
    no longer names."""
    gone = {found.group(1) for found in _WORD.finditer(old)} - {
        found.group(1) for found in _WORD.finditer(new)
    }
    return any(word not in _LIBRARY_TYPES and word.lstrip(b"_")[:1].isupper() for word in gone)
