"""Parsing a document with its tree-sitter grammar, for the trigger check and the filters that look at
syntax, and re-parsing it incrementally with a suggestion inserted at the cursor."""

from __future__ import annotations

from typing import TYPE_CHECKING

from indexer.languages import LANGUAGES, LanguageSpec

if TYPE_CHECKING:
    import tree_sitter

MAX_PARSE_CHARS = 400_000
"""A document (with the suggestion in it) longer than this is not parsed: the trigger check then lets
the request through and the syntax filters keep the suggestion as it is."""

# LSP language ids that differ from the indexer's language names.
_LSP_IDS = {
    "javascriptreact": "javascript",
    "typescriptreact": "tsx",
    "shellscript": "bash",
    "sh": "bash",
    "c#": "csharp",
    "cs": "csharp",
    "c++": "cpp",
}


def language_spec(language: str | None) -> LanguageSpec | None:
    """The indexer's language for an LSP language id (or an indexer language name), if it has a grammar."""
    if not language:
        return None
    name = language.lower()
    return LANGUAGES.get(_LSP_IDS.get(name, name))


def encode(text: str) -> bytes:
    """The UTF-8 bytes tree-sitter parses (lone surrogates from the editor kept, not refused)."""
    return text.encode("utf-8", "surrogatepass")


def parse(
    spec: LanguageSpec, text: str | bytes, old_tree: tree_sitter.Tree | None = None
) -> tree_sitter.Tree:
    """A syntax tree of ``text``; with ``old_tree`` (already edited to match ``text``), an incremental
    re-parse that reuses its unchanged nodes."""
    import tree_sitter

    source = text if isinstance(text, bytes) else encode(text)
    parser = tree_sitter.Parser(spec.language())
    return parser.parse(source) if old_tree is None else parser.parse(source, old_tree)


def point_at(source: bytes, offset: int) -> tuple[int, int]:
    """The (row, byte column) of byte ``offset`` in ``source``, as tree-sitter counts positions."""
    row = source.count(b"\n", 0, offset)
    return row, offset - (source.rfind(b"\n", 0, offset) + 1)


def replaced(
    spec: LanguageSpec, tree: tree_sitter.Tree, source: bytes, start: int, old_end: int, new: bytes
) -> tree_sitter.Tree:
    """The tree of ``source`` with bytes [start, old_end) replaced by ``new``, re-parsed incrementally
    from ``tree`` (the tree of ``source``, which is left as it is)."""
    edited = tree.copy()
    start_point = point_at(source, start)
    result = source[:start] + new + source[old_end:]
    new_end = start + len(new)
    edited.edit(
        start_byte=start,
        old_end_byte=old_end,
        new_end_byte=new_end,
        start_point=start_point,
        old_end_point=point_at(source, old_end),
        new_end_point=point_at(result, new_end),
    )
    return parse(spec, result, edited)


def error_count(tree: tree_sitter.Tree) -> int:
    """ERROR and MISSING nodes in the tree: 0 for a file that parses cleanly."""
    count = 0
    cursor = tree.walk()
    visited_children = False
    while True:
        node = cursor.node
        if not visited_children and node is not None:
            if node.is_error or node.is_missing:
                count += 1
            if node.has_error and cursor.goto_first_child():
                continue
        if cursor.goto_next_sibling():
            visited_children = False
        elif cursor.goto_parent():
            visited_children = True
        else:
            return count


class CursorSyntax:
    """A document's syntax tree with the cursor's byte offset in it, and the trees of suggestions
    inserted at the cursor.

    A suggestion's tree is the document's tree edited and re-parsed incrementally, so checking a
    suggestion costs a small fraction of a full parse; trees are kept per inserted text, so filters
    that look at the same text share one parse. Not thread-safe: one request's filters use it in turn.
    """

    def __init__(self, spec: LanguageSpec, source: bytes, tree: tree_sitter.Tree, cursor: int) -> None:
        self.spec = spec
        self.source = source
        self.tree = tree
        self.cursor = cursor
        self._inserted: dict[str, tree_sitter.Tree] = {}
        self._errors: int | None = None

    @property
    def error_count(self) -> int:
        """ERROR and MISSING nodes in the document's tree."""
        if self._errors is None:
            self._errors = error_count(self.tree)
        return self._errors

    def with_insertion(self, text: str) -> tree_sitter.Tree:
        """The tree of the document with ``text`` inserted at the cursor."""
        tree = self._inserted.get(text)
        if tree is None:
            tree = replaced(self.spec, self.tree, self.source, self.cursor, self.cursor, encode(text))
            self._inserted[text] = tree
        return tree
