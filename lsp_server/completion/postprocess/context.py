"""What a filter knows about the cursor: the document text around it and the language."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property


@dataclass(frozen=True)
class CursorContext:
    """The document split at the cursor.

    ``prefix`` is all text before the cursor and ``suffix`` all text after it; a suggestion is
    inserted between them.
    """

    prefix: str
    suffix: str
    language: str | None = None

    @cached_property
    def line_prefix(self) -> str:
        """The cursor line's text before the cursor."""
        return self.prefix.rpartition("\n")[2]

    @cached_property
    def line_suffix(self) -> str:
        """The cursor line's text after the cursor."""
        return self.suffix.partition("\n")[0]

    @cached_property
    def following_lines(self) -> list[str]:
        """The lines after the cursor line."""
        rest = self.suffix.partition("\n")[2]
        return rest.split("\n") if rest else []

    @cached_property
    def line_indent(self) -> int:
        """Indentation (in columns, a tab counting 4) of the cursor line."""
        return indent_width(self.line_prefix)


def indent_width(line: str) -> int:
    """Columns of leading whitespace, a tab counting 4."""
    width = 0
    for char in line:
        if char == " ":
            width += 1
        elif char == "\t":
            width += 4
        else:
            break
    return width
