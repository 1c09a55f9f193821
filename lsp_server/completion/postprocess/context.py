"""What a filter knows about the cursor: the document text around it, the language and its syntax."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from lsp_server.completion.syntax import MAX_PARSE_CHARS, CursorSyntax, encode, language_spec, parse

if TYPE_CHECKING:
    import tree_sitter


@dataclass(frozen=True)
class CursorContext:
    """The document split at the cursor.

    ``prefix`` is all text before the cursor and ``suffix`` all text after it; a suggestion is
    inserted between them. ``tree`` is the syntax tree of ``prefix + suffix`` when the caller has one
    (see ``DocumentTrees``); without it, ``syntax`` parses the document on first use.
    """

    prefix: str
    suffix: str
    language: str | None = None
    tree: tree_sitter.Tree | None = field(default=None, compare=False, repr=False)

    @cached_property
    def syntax(self) -> CursorSyntax | None:
        """The document's syntax at the cursor; None when the language has no grammar or the
        document is longer than ``MAX_PARSE_CHARS``."""
        spec = language_spec(self.language)
        if spec is None or len(self.prefix) + len(self.suffix) > MAX_PARSE_CHARS:
            return None
        source = encode(self.prefix + self.suffix)
        tree = self.tree if self.tree is not None else parse(spec, source)
        return CursorSyntax(spec, source, tree, len(encode(self.prefix)))

    @cached_property
    def line_prefix(self) -> str:
        """The cursor line's text before the cursor."""
        return self.prefix.rpartition("\n")[2]

    @cached_property
    def line_suffix(self) -> str:
        """The cursor line's text after the cursor."""
        return self.suffix.partition("\n")[0]

    @cached_property
    def inside_a_line(self) -> bool:
        """Whether the cursor has text after it on its line (a suggestion there is one line that fits
        before that text, ``block_or_line.py``)."""
        return bool(self.line_suffix.strip())

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
