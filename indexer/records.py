"""The records one file yields (tags and chunks), and their compact msgpack form for the store."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import msgpack


class Tag(NamedTuple):
    """A definition or reference of a name, with LSP-ready positions.

    ``start_byte``/``end_byte``, ``line`` and ``column`` (UTF-16, 0-based) locate the name itself;
    ``node_start_line``/``node_end_line`` span the whole definition (or the referring expression).
    ``scope`` is the dotted path of the enclosing definitions ("Parser.parse"), "" at top level.

    A named tuple rather than a dataclass: a large workspace has millions of tags, and a tuple is
    several times cheaper to make (its fields are also its msgpack row, in this order).
    """

    name: str
    kind: str
    is_definition: bool
    start_byte: int
    end_byte: int
    line: int
    column: int
    node_start_line: int
    node_end_line: int
    scope: str

    @property
    def qualified_name(self) -> str:
        """``scope.name``, or the bare name at top level."""
        return f"{self.scope}.{self.name}" if self.scope else self.name


@dataclass(frozen=True, slots=True)
class Chunk:
    """A syntax-aware piece of a file: whole lines ``start_line``..``end_line`` (0-based, inclusive).

    ``kind`` is the definition's kind for a whole definition ("function", "class_definition" node types
    map to "function", "class", ...), "block" for a run of statements, "window" for line windows.
    ``name`` is the qualified name of the definition a chunk holds, "" otherwise.
    """

    start_line: int
    end_line: int
    start_byte: int
    end_byte: int
    kind: str
    name: str
    text: str


def pack_tags(tags: list[Tag]) -> bytes:
    """The references of a file as one msgpack blob: leaner than a row per reference."""
    return msgpack.packb(tags, use_bin_type=True)


def unpack_tags(blob: bytes) -> list[Tag]:
    """The inverse of ``pack_tags``."""
    return [Tag(*row) for row in msgpack.unpackb(blob, raw=False)]
